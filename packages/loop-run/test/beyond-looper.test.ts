// What loop-run does past Looper: retries, usage and budgets, parallel reviewers, feedback across iterations, {artifact}/{n}.
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { FAKE, makeLoop, runLoopIn, type Loop } from './helpers.js';

const loops: Loop[] = [];
const track = (l: Loop): Loop => (loops.push(l), l);
afterEach(() => {
  for (const l of loops.splice(0)) l.cleanup();
});

describe('loop-run past Looper', () => {
  it('retries a transient CLI failure and passes', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'pass', '--fail-first', '1', '--stderr', 'API error: rate limit exceeded (429)'] }));
    const { code, events } = await runLoopIn(loop);
    expect(code).toBe(0);
    expect(loop.state()).toMatchObject({ status: 'passed' });
    expect(loop.calls('judge')).toBe(3);
    expect(events.find((e) => e.type === 'model.result' && e.member === 'judge-1')).toMatchObject({ ok: true, attempts: 2 });
  });

  it('a CLI failure that is not transient fails the run with exit 2 and one terminal state', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'pass', '--fail-first', '9', '--stderr', 'error: unknown option --frobnicate'] }));
    const { code, events } = await runLoopIn(loop);
    expect(code).toBe(2);
    const state = loop.state();
    expect(state.status).toBe('failed');
    expect(state.failure).toMatch(/^Model invocation failed \(.*\): exit 1/);
    // The CLI's own words once, as Looper's runner gives them: not also quoted in a line of ours.
    expect(state.failure).toMatch(/: exit 1\nerror: unknown option --frobnicate$/);
    expect(loop.calls('judge')).toBe(1);
    expect(events.filter((e) => e.type === 'loop.failed')).toHaveLength(1);
    expect(loop.log()).toContain('`run_error`');
  });

  it('counts tokens and cost from JSON output modes, enforces budget.tokens, and marks unmeasured calls advisory', async () => {
    const loop = track(
      makeLoop({
        host: ['--output-format', 'json'],
        judge: ['--verdicts', 'pass'],
        tweak: (s) => (s.loop_control.budget = { wall_clock_min: 30, tokens: 200, usd: 5 }),
      }),
    );
    const { code, events } = await runLoopIn(loop);
    expect(code).toBe(1);
    const state = loop.state();
    expect(state).toMatchObject({ status: 'failed', failure: 'token_budget_exceeded' });
    // plan (150), then the judge (text mode: no usage); the delivery (about 150 again) would cross 200, so it never starts.
    expect(state.usage).toMatchObject({ input_tokens: 100, output_tokens: 50, usd: 0.01, calls: 2, calls_without_usage: 1 });
    expect(loop.calls('host')).toBe(1);
    expect(state.warnings.join('\n')).toContain('budget.tokens is advisory for judge-1');
    expect(events.find((e) => e.type === 'model.result' && e.member === 'host')?.usage).toEqual({ input_tokens: 100, cache_read_tokens: 0, cache_write_tokens: 0, output_tokens: 50, reasoning_tokens: 0 });
    expect(loop.calls('judge')).toBe(1);
  });

  it('a resume after a token stop remembers the largest call: the refused call is still not started', async () => {
    const loop = track(
      makeLoop({
        // Each host call reports 1050 tokens, far more than its prompt: only the largest call seen refuses the next one.
        host: ['--output-format', 'json', '--input-tokens', '1000'],
        judge: ['--verdicts', 'pass'],
        tweak: (s) => (s.loop_control.budget = { wall_clock_min: 30, tokens: 1500 }),
      }),
    );
    expect((await runLoopIn(loop)).code).toBe(1);
    expect(loop.calls('host')).toBe(1);
    const again = await runLoopIn(loop);
    expect(again.code).toBe(1);
    expect(loop.state()).toMatchObject({ status: 'failed', failure: 'token_budget_exceeded' });
    // The delivery (about 1050 tokens, as the plan was) still cannot fit in the 450 left.
    expect(loop.calls('host')).toBe(1);
    expect(loop.state().usage.input_tokens + loop.state().usage.output_tokens).toBeLessThanOrEqual(1500);
  });

  it('counts reasoning tokens once: they are part of output_tokens, in the budget and in the run log', async () => {
    const loop = track(
      makeLoop({
        host: ['--output-format', 'json', '--reasoning', '40'],
        judge: ['--verdicts', 'pass'],
        // plan 150 + delivery 150 = 300: exactly the cap; adding reasoning again (380) would stop the run.
        tweak: (s) => (s.loop_control.budget = { wall_clock_min: 30, tokens: 300 }),
      }),
    );
    const { code } = await runLoopIn(loop);
    expect(code).toBe(0);
    const state = loop.state();
    expect(state).toMatchObject({ status: 'passed' });
    expect(state.failure).toBeUndefined();
    expect(state.usage).toMatchObject({ input_tokens: 200, output_tokens: 100, reasoning_tokens: 80 });
    const hostCalls = loop.log().split('\n').filter((l) => l.includes('`model_call`') && l.includes('"member": "host"'));
    expect(hostCalls).toHaveLength(2);
    for (const line of hostCalls) expect(line).toContain('"tokens": 150');
  });

  it('runs reviewers in parallel, keeps every review, and drafts delivery N+1 with the review of N in view', async () => {
    const loop = track(
      makeLoop({
        judge: ['--verdicts', 'pass,revise,pass'],
        tweak: (s) => {
          const capture = s.host.invoke[5] as string;
          const reviewer = (id: string) => ({ id, role: 'reviewer', cli: 'fakereviewer', invoke: [process.execPath, FAKE, '--name', id, '--capture', capture, '--barrier', '2'], timeout_sec: 60, scope: ['delivery'], local: true });
          s.council.push(reviewer('reviewer-a'), reviewer('reviewer-b'));
          s.gates.delivery_gate.members = ['reviewer-a', 'reviewer-b', 'judge-1'];
          s.gates.delivery_gate.max_revisions = 0;
          s.gates.delivery_gate.criteria.push('names-n');
          s.goal.verification.push({
            id: 'names-n',
            type: 'programmatic',
            check: [process.execPath, '-e', 'process.exit(process.argv[1]===process.argv[2]?0:1)', '{artifact}', 'loop-workspace/delivery-{n}.md'],
            expect: 'exit_zero',
            timeout_sec: 60,
          });
        },
      }),
    );
    const { code, events } = await runLoopIn(loop);
    expect(code).toBe(0);
    const state = loop.state();
    expect(state).toMatchObject({ status: 'passed', iteration: 2, final_delivery: loop.ws('delivery-2.md') });
    expect(state.failure).toBeUndefined();
    // Two rounds of two reviewers that each waited for the other: they ran at the same time.
    expect(loop.calls('reviewer-a') + loop.calls('reviewer-b')).toBe(4);
    expect(existsSync(loop.ws('review-delivery_gate-1.md'))).toBe(true);
    expect(existsSync(loop.ws('review-delivery_gate-2.md'))).toBe(false); // round 2 passed: nothing to review
    const review1 = readFileSync(loop.ws('review-delivery_gate-1.md'), 'utf8');
    expect(review1).toContain('## reviewer-a');
    expect(review1).toContain('## reviewer-b');
    const deliveryPrompts = loop.prompts('host').filter((p) => p.startsWith('Write the next delivery'));
    expect(deliveryPrompts).toHaveLength(2);
    expect(deliveryPrompts[1]).toContain('iteration 2 of 2');
    expect(deliveryPrompts[1]).toContain('Previous delivery:');
    expect(deliveryPrompts[1]).toContain('the plan has no milestones');
    const checks = events.filter((e) => e.type === 'gate.check' && e.criterion === 'names-n');
    expect(checks.map((e) => e.argv.slice(-2))).toEqual([
      ['loop-workspace/delivery-1.md', 'loop-workspace/delivery-1.md'],
      ['loop-workspace/delivery-2.md', 'loop-workspace/delivery-2.md'],
    ]);
    expect(checks.every((e) => e.passed)).toBe(true);
    // The judge's prompt carries the reviewers' notes too.
    expect(loop.prompts('judge')[1]).toContain('Reviewer notes from reviewer-a');
  });

  it('a fixed_passes reviewer-only gate runs max_revisions+1 passes and passes (the marker never trips no-progress)', async () => {
    const loop = track(
      makeLoop({
        tweak: (s) => {
          s.council.push({ id: 'reviewer-1', role: 'reviewer', cli: 'fakereviewer', invoke: [process.execPath, FAKE, '--name', 'reviewer-1', '--capture', s.host.invoke[5]], timeout_sec: 60, scope: ['plan'], local: true });
          s.gates.plan_gate = { when: 'after plan', members: ['reviewer-1'], verdict_policy: 'fixed_passes', criteria: [], max_revisions: 2 };
        },
      }),
    );
    const { code, events } = await runLoopIn(loop);
    expect(code).toBe(0);
    expect(loop.state().status).toBe('passed');
    expect(loop.calls('reviewer-1')).toBe(3);
    expect(events.some((e) => e.type === 'no_progress.detected')).toBe(false);
    expect(events.filter((e) => e.type === 'gate.verdict' && e.gate === 'plan_gate').every((e) => e.failures.length === 0)).toBe(true);
    expect(loop.log()).toContain('`fixed_pass_round`');
  });

  it('masks secret-looking environment values that a context command or an artifact echoes', async () => {
    const key = 'sk-env-0000111122223333';
    const loop = track(
      makeLoop({
        tweak: (s) => (s.goal.context_sources = [{ cmd: [process.execPath, '-e', 'console.log("key is " + process.env.DEMO_SERVICE_API_KEY)'], timeout_sec: 30 }]),
      }),
    );
    const { code } = await runLoopIn(loop, { env: { DEMO_SERVICE_API_KEY: key } });
    expect(code).toBe(0);
    expect(readFileSync(loop.ws('context.md'), 'utf8')).toContain('key is [redacted:env:DEMO_SERVICE_API_KEY]');
    for (const p of [...loop.prompts('host'), ...loop.prompts('judge')]) expect(p).not.toContain(key);
    expect(loop.state().warnings.join('\n')).toContain('env:DEMO_SERVICE_API_KEY appeared in context command output');
  });

  it('keeps a key that a failing CLI prints on stderr out of state.json, the run log and the events', async () => {
    const key = 'sk-env-9999888877776666';
    const loop = track(makeLoop({ judge: ['--verdicts', 'pass', '--fail-first', '9', '--stderr', `error: invalid x-api-key ${key}`] }));
    const { code, events } = await runLoopIn(loop, { env: { DEMO_SERVICE_API_KEY: key } });
    expect(code).toBe(2);
    const state = loop.state();
    expect(state.status).toBe('failed');
    expect(state.failure).toContain('invalid x-api-key [redacted:env:DEMO_SERVICE_API_KEY]');
    expect(JSON.stringify(state)).not.toContain(key);
    expect(loop.log()).not.toContain(key);
    expect(JSON.stringify(events)).not.toContain(key);
  });

  it('kills a model call at its timeout_sec and fails the run (exit 2, one terminal state)', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'hang'], tweak: (s) => (s.council[0].timeout_sec = 1) }));
    const { code, events } = await runLoopIn(loop);
    expect(code).toBe(2);
    const state = loop.state();
    expect(state.status).toBe('failed');
    expect(state.failure).toMatch(/^Model invocation failed .*exit 124 \(timed out\)/);
    expect(events.find((e) => e.type === 'model.result' && e.member === 'judge-1')).toMatchObject({ ok: false, timed_out: true, exit_code: 124 });
    const pid = Number(readFileSync(`${loop.capture}/judge.hang`, 'utf8'));
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it('fails with max_iterations_reached when no delivery passes', async () => {
    const loop = track(
      makeLoop({
        judge: ['--unique'],
        tweak: (s) => {
          s.gates.plan_gate.verdict_policy = 'fixed_passes';
          s.gates.plan_gate.max_revisions = 0;
          s.gates.plan_gate.criteria = [];
          s.gates.delivery_gate.max_revisions = 0;
        },
      }),
    );
    const { code, events } = await runLoopIn(loop);
    expect(code).toBe(1);
    expect(loop.state()).toMatchObject({ status: 'failed', failure: 'max_iterations_reached', iteration: 2 });
    expect(events.filter((e) => e.type === 'iteration.started').map((e) => e.iteration)).toEqual([1, 2]);
    expect(existsSync(loop.ws('review-delivery_gate-1.md')) && existsSync(loop.ws('review-delivery_gate-2.md'))).toBe(true);
    expect(loop.log()).toMatch(/`stop` \{"reason": "max_iterations_reached"\}/);
  });

  it('enforces budget.usd where the CLI reports cost', async () => {
    const loop = track(makeLoop({ host: ['--output-format', 'json'], tweak: (s) => (s.loop_control.budget = { wall_clock_min: 30, usd: 0.015 }) }));
    const { code } = await runLoopIn(loop);
    expect(code).toBe(1);
    expect(loop.state()).toMatchObject({ status: 'failed', failure: 'usd_budget_exceeded' });
    expect(loop.state().usage.usd).toBe(0.02);
  });
});
