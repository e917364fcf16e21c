// The issue's acceptance list, end to end with fake host and judge CLIs: state.json status + failure + exit code each time.
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeLoop, runLoopIn, type Loop } from './helpers.js';

const loops: Loop[] = [];
const track = (l: Loop): Loop => (loops.push(l), l);
afterEach(() => {
  for (const l of loops.splice(0)) l.cleanup();
});

describe('loop-run acceptance', () => {
  it('happy path: plan revised once, then both gates pass', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'revise,pass,pass'] }));
    const { code, events } = await runLoopIn(loop);
    const state = loop.state();
    expect(code).toBe(0);
    expect(state.status).toBe('passed');
    expect(state.failure).toBeUndefined();
    expect(state.final_delivery).toBe(loop.ws('delivery-1.md'));
    for (const f of ['plan.md', 'delivery-1.md', 'review-plan_gate-1.md', 'context.md', 'run-log.md']) expect(existsSync(loop.ws(f))).toBe(true);
    expect(loop.calls('judge')).toBe(3);
    expect(loop.calls('host')).toBe(3); // plan, revise, delivery
    const [plan, revise, delivery] = loop.prompts('host');
    expect(plan).toMatch(/^Draft plan.md for this loop\./);
    expect(plan).toContain('Loops go round.');
    expect(revise).toContain('the plan has no milestones');
    expect(delivery).toContain('iteration 1 of 2');
    // Past Looper: the judge sees the goal, the definition of done and the programmatic results.
    const deliveryJudge = loop.prompts('judge')[2]!;
    expect(deliveryJudge).toContain('Write a haiku about loops.');
    expect(deliveryJudge).toContain('Three lines that mention a gate.');
    expect(deliveryJudge).toMatch(/Programmatic check results:\n\{"id":"has-haiku","type":"programmatic","passed":true,"returncode":0/);
    expect(events.at(-1)?.type).toBe('loop.completed');
    expect(events.filter((e) => e.type === 'gate.verdict').map((e) => `${e.gate}:${e.verdict}`)).toEqual(['plan_gate:revise', 'plan_gate:pass', 'delivery_gate:pass']);
    expect(events.filter((e) => ['loop.completed', 'loop.failed'].includes(e.type))).toHaveLength(1);
    const log = loop.log();
    for (const e of ['run_start', 'context', 'host_start', 'judge_verdict', 'gate_blocked', 'revision', 'gate_passed', 'programmatic_check', 'run_passed']) expect(log).toContain(`\`${e}\``);
  });

  it('malformed judge output degrades to revise, with real revision rounds, then passes', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'malformed,pass,pass'] }));
    const { code, events } = await runLoopIn(loop);
    expect(code).toBe(0);
    expect(loop.state().status).toBe('passed');
    expect(loop.state().failure).toBeUndefined();
    expect(readFileSync(loop.ws('review-plan_gate-1.md'), 'utf8')).toContain('unparseable_judge_output');
    expect(events.find((e) => e.type === 'gate.verdict')).toMatchObject({ verdict: 'revise', warnings: ['unparseable_judge_output'] });
    expect(events.filter((e) => e.type === 'gate.revision')).toHaveLength(1);
    expect(loop.prompts('host')[1]).toContain('Judge output was not parseable JSON.');
    expect(loop.state().warnings.join('\n')).toContain('unparseable_judge_output');
  });

  it('a judge that is never parseable never passes: the revision cap fails the run', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'malformed'], tweak: (s) => (s.loop_control.no_progress.max_stalled_iterations = 9) }));
    const { code } = await runLoopIn(loop);
    expect(code).toBe(1);
    expect(loop.state()).toMatchObject({ status: 'failed', failure: 'plan_gate_max_revisions_reached' });
    expect(loop.calls('judge')).toBe(3);
    expect(existsSync(loop.ws('delivery-1.md'))).toBe(false);
  });

  it('consent is refused on empty stdin (judge never invoked), then granted with one yes', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'pass'], tweak: (s) => (s.privacy.egress = []) }));
    const refused = await runLoopIn(loop, { stdin: '' });
    expect(refused.code).toBe(2);
    expect(loop.state()).toMatchObject({ status: 'blocked', failure: 'consent_refused:judge-1' });
    expect(loop.calls('judge')).toBe(0);
    expect(refused.err).toContain("Type 'yes' to consent to this first send:");
    expect(refused.err).toContain('No privacy.egress entry covers this member');
    expect(refused.events.find((e) => e.type === 'consent.answered')).toMatchObject({ member: 'judge-1', granted: false, how: 'end_of_input' });
    expect(refused.events.at(-1)).toMatchObject({ type: 'loop.failed', status: 'blocked', exit_code: 2 });

    const fresh = track(makeLoop({ judge: ['--verdicts', 'pass'], tweak: (s) => (s.privacy.egress = []) }));
    const granted = await runLoopIn(fresh, { stdin: 'yes\n' });
    expect(granted.code).toBe(0);
    const state = fresh.state();
    expect(state.status).toBe('passed');
    expect(state.failure).toBeUndefined();
    expect(state.consent['judge-1']).toMatchObject({ how: 'answered_yes', redact: ['.env', '.env.*', 'secrets/**', '**/*.key'] });
    expect(granted.events.filter((e) => e.type === 'consent.asked')).toHaveLength(1);
    expect(fresh.calls('judge')).toBe(2);
  });

  it('secrets from .env and redact globs never reach a host or judge prompt, cmd context output included', async () => {
    const envSecret = 'OPENAI_API_KEY=sk-live-abcdef1234567890';
    const globSecret = 'TOPSECRET-TOKEN-424242';
    const loop = track(
      makeLoop({
        judge: ['--verdicts', 'pass'],
        host: ['--leak', 'inputs/secret.txt'],
        tweak: (s) => {
          s.privacy.egress[0].redact = [...s.privacy.egress[0].redact, 'inputs/**'];
          s.goal.context_sources = [
            { file: 'notes.md' },
            { file: 'config/.env' },
            { file: 'inputs/secret.txt' },
            { cmd: [process.execPath, '-e', "const fs=require('fs');process.stdout.write(fs.readFileSync('.env','utf8')+fs.readFileSync('inputs/secret.txt','utf8'))"], timeout_sec: 60 },
          ];
        },
      }),
    );
    writeFileSync(join(loop.dir, '.env'), `${envSecret}\n`);
    mkdirSync(join(loop.dir, 'config'));
    writeFileSync(join(loop.dir, 'config', '.env'), 'DB_PASSWORD=hunter2-hunter2\n');
    mkdirSync(join(loop.dir, 'inputs'));
    writeFileSync(join(loop.dir, 'inputs', 'secret.txt'), `${globSecret}\n`);
    const { code, events } = await runLoopIn(loop);
    expect(code).toBe(0);
    expect(loop.state().status).toBe('passed');
    expect(loop.state().failure).toBeUndefined();
    const sent = readdirSync(loop.capture).filter((f) => f.endsWith('.txt')).map((f) => readFileSync(join(loop.capture, f), 'utf8'));
    expect(sent.length).toBeGreaterThanOrEqual(4);
    for (const prompt of sent) {
      expect(prompt).not.toContain('sk-live-abcdef1234567890');
      expect(prompt).not.toContain(globSecret);
      expect(prompt).not.toContain('hunter2-hunter2');
    }
    // The leak really happened (the host put the secret into plan.md) and was caught on the way out.
    expect(readFileSync(loop.ws('plan.md'), 'utf8')).toContain(globSecret);
    const context = readFileSync(loop.ws('context.md'), 'utf8');
    expect(context).toContain('[redacted:.env]');
    expect(context).toContain('[redacted:inputs/secret.txt]');
    expect(context).toMatch(/Context source 2: config\/.env\n\[redacted\]/);
    const warnings = loop.state().warnings.join('\n');
    expect(warnings).toContain('appeared in context command output');
    expect(warnings).toContain('appeared in prompt for judge-1');
    expect(warnings).toContain('appeared in prompt for host');
    expect(loop.log()).toContain('`redaction_applied`');
    expect(events.filter((e) => e.type === 'redaction.applied').map((e) => e.where)).toContain('prompt for judge-1');
  });

  it('a revision cap is reached with a judge that never repeats itself: judge called max_revisions+1 times', async () => {
    const loop = track(makeLoop({ judge: ['--unique'] }));
    const { code, events } = await runLoopIn(loop);
    expect(code).toBe(1);
    expect(loop.state()).toMatchObject({ status: 'failed', failure: 'plan_gate_max_revisions_reached' });
    expect(loop.calls('judge')).toBe(3);
    expect(loop.calls('host')).toBe(3); // plan + 2 revisions
    expect(events.some((e) => e.type === 'no_progress.detected')).toBe(false);
    expect(['review-plan_gate-1.md', 'review-plan_gate-2.md', 'review-plan_gate-3.md'].every((f) => existsSync(loop.ws(f)))).toBe(true);
  });

  it('the same blocking issue twice in a row stops the run for no progress', async () => {
    const loop = track(makeLoop({ judge: ['--same'], tweak: (s) => (s.gates.plan_gate.max_revisions = 5) }));
    const { code, events } = await runLoopIn(loop);
    expect(code).toBe(1);
    expect(loop.state()).toMatchObject({ status: 'failed', failure: 'no_progress_detected', blocking_issues: ['the plan has no milestones'] });
    expect(loop.calls('judge')).toBe(2);
    expect(events.find((e) => e.type === 'no_progress.detected')).toMatchObject({ gate: 'plan_gate', count: 2, threshold: 2 });
    expect(loop.log()).toMatch(/`stop` \{"reason": "no_progress_detected"\}/);
  });

  it('the wall clock accumulates across resumes (injected clock)', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'revise,revise,revise,pass'], tweak: (s) => ((s.loop_control.budget.wall_clock_min = 1), (s.loop_control.no_progress.max_stalled_iterations = 9)) }));
    const clock = (stepMs: number) => {
      let t = Date.parse('2026-01-01T00:00:00Z');
      return () => new Date((t += stepMs));
    };
    const first = await runLoopIn(loop, { now: clock(1000) });
    expect(first.code).toBe(1);
    const s1 = loop.state();
    expect(s1).toMatchObject({ status: 'failed', failure: 'wall_clock_budget_exceeded' });
    expect(s1.wall_clock_used_sec).toBeGreaterThan(60);
    const judged = loop.calls('judge');
    // The resumed run starts over the cap: it must stop at once, on time used by the first run.
    const second = await runLoopIn(loop, { now: clock(1) });
    expect(second.code).toBe(1);
    const s2 = loop.state();
    expect(s2).toMatchObject({ status: 'failed', failure: 'wall_clock_budget_exceeded' });
    expect(s2.wall_clock_used_sec).toBeGreaterThan(s1.wall_clock_used_sec);
    expect(loop.calls('judge')).toBe(judged);
  });
});
