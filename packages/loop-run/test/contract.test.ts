// The rest of the runner contract: consent shows leaks first, blind spots, host consent, checkpoints, lock, signals.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { memoryIo } from '@quickloop/cli-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../src/run.js';
import { BIN, makeLoop, runLoopIn, type Loop } from './helpers.js';

const loops: Loop[] = [];
const track = (l: Loop): Loop => (loops.push(l), l);
afterEach(() => {
  for (const l of loops.splice(0)) l.cleanup();
});

describe('runner contract details', () => {
  it('scrubs before asking, and the consent question shows the leak warning first', async () => {
    const loop = track(makeLoop({ host: ['--leak', '.env'], tweak: (s) => (s.privacy.egress = []) }));
    writeFileSync(join(loop.dir, '.env'), 'SERVICE_TOKEN=tok-0123456789abcdef\n');
    const { code, err } = await runLoopIn(loop, { stdin: 'yes\n' });
    expect(code).toBe(0);
    const warning = err.indexOf('Warning: flagged content from .env appeared in prompt for judge-1');
    expect(warning).toBeGreaterThan(-1);
    expect(warning).toBeLessThan(err.indexOf("Type 'yes' to consent"));
    for (const p of loop.prompts('judge')) expect(p).not.toContain('tok-0123456789abcdef');
  });

  it('surfaces a flagged file it cannot scrub as a blind spot (state warning + run log)', async () => {
    const loop = track(makeLoop());
    mkdirSync(join(loop.dir, 'secrets'));
    writeFileSync(join(loop.dir, 'secrets', 'dump.txt'), 'x'.repeat(1_100_000));
    const { code, events } = await runLoopIn(loop);
    expect(code).toBe(0);
    expect(loop.state().warnings.join('\n')).toContain('flagged file secrets/dump.txt is larger than 1MB; its content cannot be detected');
    expect(loop.log()).toContain('`redaction_unscrubbable`');
    expect(events.filter((e) => e.type === 'redaction.blind_spot')).toHaveLength(1);
  });

  it('governs the host by consent once an egress entry names it', async () => {
    const loop = track(makeLoop({ tweak: (s) => s.privacy.egress.push({ to: 'host', sends: ['context', 'plan'], redact: [], consent: 'required' }) }));
    const refused = await runLoopIn(loop, { stdin: '' });
    expect(refused.code).toBe(2);
    expect(loop.state()).toMatchObject({ status: 'blocked', failure: 'consent_refused:host' });
    expect(loop.calls('host')).toBe(0);
    expect(existsSync(loop.ws('plan.md'))).toBe(false);
  });

  it('stops at the after_plan checkpoint unless told to continue', async () => {
    const loop = track(makeLoop({ tweak: (s) => (s.loop_control.human_checkpoints = ['after_plan']) }));
    const stopped = await runLoopIn(loop, { stdin: 'no\n' });
    expect(stopped.code).toBe(2);
    expect(loop.state()).toMatchObject({ status: 'blocked', failure: 'human_checkpoint:after_plan' });
    expect(existsSync(loop.ws('delivery-1.md'))).toBe(false);
    const resumed = await runLoopIn(loop, { stdin: 'continue\n' });
    expect(resumed.code).toBe(0);
    expect(loop.state().status).toBe('passed');
    expect(loop.calls('judge')).toBe(2); // the passed plan gate was not judged again
    expect(loop.log()).toContain('`human_checkpoint_passed`');
  });

  it('asks at the after_plan checkpoint when human_checkpoints is a bare string, as Looper does', async () => {
    // The compiler passes `human_checkpoints: after_plan` through; Looper's runner tests it with `in`
    // and stops there. Running past the checkpoint would skip the human a spec asked for.
    const loop = track(makeLoop({ tweak: (s) => (s.loop_control.human_checkpoints = 'after_plan') }));
    const stopped = await runLoopIn(loop, { stdin: '' });
    expect(stopped.code).toBe(2);
    expect(loop.state()).toMatchObject({ status: 'blocked' });
    expect(existsSync(loop.ws('delivery-1.md'))).toBe(false);
    const resumed = await runLoopIn(loop, { stdin: 'continue\n' });
    expect(resumed.code).toBe(0);
    expect(loop.log()).toContain('`human_checkpoint_passed`');
  });

  it('blocks when a human criterion needs an answer and stdin is closed', async () => {
    const loop = track(
      makeLoop({
        tweak: (s) => {
          s.goal.verification.push({ id: 'signoff', type: 'human', prompt: 'Does the plan read well?' });
          s.gates.plan_gate.criteria = ['signoff'];
        },
      }),
    );
    const { code, events } = await runLoopIn(loop, { stdin: '' });
    expect(code).toBe(2);
    expect(loop.state()).toMatchObject({ status: 'blocked', failure: 'interactive_input_required:human criterion signoff' });
    expect(loop.calls('judge')).toBe(0);
    // The round says so before the loop ends, as loop-gate reports the same round.
    expect(events.slice(-2)).toMatchObject([
      { type: 'gate.verdict', gate: 'plan_gate', verdict: 'blocked', source: 'human', failures: ['interactive_input_required:human criterion signoff'], review: null },
      { type: 'loop.failed', status: 'blocked', failure: 'interactive_input_required:human criterion signoff', exit_code: 2 },
    ]);
  });

  it.each([
    ['state_file', '../../stolen.json'],
    ['run_log', '../run-log.md'],
    ['state_file', '.'],
  ])('refuses observability.%s %s outside the workspace before writing anything (Looper wrote there)', async (field, value) => {
    const loop = track(makeLoop({ tweak: (s) => (s.observability[field] = value) }));
    await expect(runLoopIn(loop)).rejects.toThrow(`observability.${field}`);
    expect(existsSync(join(loop.dir, 'loop-workspace'))).toBe(false);
    expect(existsSync(join(loop.dir, '..', 'stolen.json'))).toBe(false);
    expect(loop.calls('host')).toBe(0);
  });

  it('refuses a state.json that does not parse, in one line, and leaves no lock behind', async () => {
    const loop = track(makeLoop());
    mkdirSync(join(loop.dir, 'loop-workspace'));
    writeFileSync(loop.ws('state.json'), '{"status": "runn');
    await expect(runLoopIn(loop)).rejects.toThrow(/could not parse .*state\.json: .*\(move it away to start over\)/);
    expect(loop.calls('host')).toBe(0);
    expect(existsSync(loop.ws('.loop-run.lock'))).toBe(false);
    expect(readFileSync(loop.ws('state.json'), 'utf8')).toBe('{"status": "runn');
  });

  it('reads a context file that is not UTF-8 without crashing (Looper died here)', async () => {
    const loop = track(makeLoop());
    writeFileSync(join(loop.dir, 'notes.md'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const { code } = await runLoopIn(loop);
    expect(code).toBe(0);
    expect(readFileSync(loop.ws('context.md'), 'utf8')).toContain('caf\uFFFD');
  });

  it('a context file it cannot read (a directory) ends the run naming that source, before any model call', async () => {
    const loop = track(makeLoop({ tweak: (s) => (s.goal.context_sources = [{ file: 'notes.md' }, { file: 'inputs' }]) }));
    mkdirSync(join(loop.dir, 'inputs'));
    const { code, err } = await runLoopIn(loop);
    expect(code).toBe(2);
    expect(loop.state()).toMatchObject({ status: 'failed' });
    expect(loop.state().failure).toMatch(/^context source 2 \(inputs\) could not be read: EISDIR/);
    expect(err).toContain('context source 2 (inputs) could not be read');
    expect(loop.calls('host')).toBe(0);
  });

  it('on SIGTERM kills the model call, records failed/interrupted and exits 130', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'hang'] }));
    const child = spawn(process.execPath, [BIN, loop.specPath], { cwd: loop.dir, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end();
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const hang = join(loop.capture, 'judge.hang');
    while (!existsSync(hang)) {
      if (child.exitCode !== null) throw new Error('loop-run ended before the judge hung');
      await new Promise((r) => setTimeout(r, 20));
    }
    const judgePid = Number(readFileSync(hang, 'utf8'));
    const exit = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    child.kill('SIGTERM');
    expect(await exit).toBe(130);
    expect(loop.state()).toMatchObject({ status: 'failed', failure: 'interrupted' });
    expect(() => process.kill(judgePid, 0)).toThrow();
    expect(stdout.trim().split('\n').map((l) => JSON.parse(l)).at(-1)).toMatchObject({ type: 'loop.failed', failure: 'interrupted', exit_code: 130 });
  });

  it('surfaces judge criteria that no verdict source will ever evaluate', async () => {
    const loop = track(makeLoop({ tweak: (s) => (s.gates.plan_gate = { members: [], verdict_policy: 'fixed_passes', criteria: ['quality'], max_revisions: 0 }) }));
    const { code, err } = await runLoopIn(loop);
    expect(code).toBe(0);
    expect(loop.state().warnings).toContain('plan_gate: judge criteria quality are never evaluated because the gate is fixed_passes');
    expect(err).toContain('never evaluated');
    expect(loop.log()).toContain('`judge_criteria_unreachable`');
  });

  it('a signal while waiting for a consent answer ends the run as interrupted (exit 130)', async () => {
    const loop = track(makeLoop({ tweak: (s) => (s.privacy.egress = []) }));
    const io = memoryIo({ stdin: new PassThrough(), env: { ...process.env, NO_COLOR: '1' } });
    const running = run({ spec: loop.specPath, retries: 0, retryDelayMs: 0, consent: [], level: 'normal' }, io);
    while (!io.err().includes("Type 'yes'")) await new Promise((r) => setTimeout(r, 10));
    io.abort();
    expect(await running).toBe(130);
    expect(loop.state()).toMatchObject({ status: 'failed', failure: 'interrupted' });
    expect(loop.calls('judge')).toBe(0);
  });

  it('a signal during a programmatic check does not spend the round: the resume runs it again', async () => {
    // max_revisions 0: the round cut short is the gate's only one, so counting it would exhaust the gate.
    const started = (l: Loop) => join(l.capture, 'check.started');
    const loop = track(
      makeLoop({
        tweak: (s) => {
          s.goal.verification.push({ id: 'slow', type: 'programmatic', check: [process.execPath, '-e', "require('fs').writeFileSync(process.argv[1],'');setTimeout(()=>{},60000)", join(s.source, '..', '.capture', 'check.started')], expect: 'exit_zero', timeout_sec: 120 });
          s.gates.plan_gate = { ...s.gates.plan_gate, criteria: ['slow', 'quality'], max_revisions: 0 };
        },
      }),
    );
    const io = memoryIo({ stdin: '', env: { ...process.env, NO_COLOR: '1' } });
    const running = run({ spec: loop.specPath, retries: 0, retryDelayMs: 0, consent: [], level: 'normal' }, io);
    while (!existsSync(started(loop))) await new Promise((r) => setTimeout(r, 10));
    io.abort();
    expect(await running).toBe(130);
    expect(loop.state()).toMatchObject({ status: 'failed', failure: 'interrupted' });
    expect(loop.state().gate_progress?.exhausted).toBeUndefined();
    expect(loop.log()).not.toContain('`gate_blocked`');
    expect(existsSync(loop.ws('review-plan_gate-1.md'))).toBe(false);

    loop.spec.goal.verification.at(-1).check = [process.execPath, '-e', ''];
    loop.write();
    const again = await runLoopIn(loop);
    expect(again.err).not.toContain('in an earlier run');
    expect(again.code).toBe(0);
    expect(loop.state().status).toBe('passed');
  });

  it('writes a state file and a run log named in subfolders of the workspace, making the folders (as Looper does)', async () => {
    const loop = track(makeLoop({ tweak: (s) => (s.observability = { state_file: 'meta/state.json', run_log: 'logs/run-log.md', checkpoint_granularity: 'gate' }) }));
    const { code } = await runLoopIn(loop);
    expect(code).toBe(0);
    expect(JSON.parse(readFileSync(loop.ws('meta/state.json'), 'utf8')).status).toBe('passed');
    expect(readFileSync(loop.ws('logs/run-log.md'), 'utf8')).toContain('`run_passed`');
  });

  it('refuses a state file that shares its name with the run log or an artifact, before writing anything', () => {
    for (const [observability, says] of [
      [{ state_file: 'same.json', run_log: 'same.json' }, "both name 'loop-workspace/same.json'"],
      [{ state_file: 'plan.md', run_log: 'run-log.md' }, "'loop-workspace/plan.md' is a file the runner writes itself (plan.md)"],
      [{ state_file: 'state.json', run_log: './context.md' }, 'is a file the runner writes itself (context.md)'],
    ] as const) {
      const loop = track(makeLoop({ tweak: (s) => (s.observability = { ...s.observability, ...observability }) }));
      const r = spawnSync(process.execPath, [BIN, 'loop.resolved.json'], { cwd: loop.dir, input: '', encoding: 'utf8' });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(says);
      expect(existsSync(join(loop.dir, 'loop-workspace'))).toBe(false);
      expect(loop.calls('host')).toBe(0);
    }
  });

  it('names an escaping state file or run log as the spec writes it, and a workspace behind a dangling link as an escape', () => {
    for (const [tweak, says] of [
      [(s: Record<string, any>) => (s.observability.state_file = '../escaped-state.json'), "observability.state_file '../escaped-state.json' escapes the workspace"],
      [(s: Record<string, any>) => (s.observability.run_log = 'logs/../../../x.md'), "observability.run_log 'logs/../../../x.md' escapes the workspace"],
      // Looper's Path.resolve follows the link to where it points; stat-ing through it is no answer.
      [(s: Record<string, any>) => (s.workspace.dir = './up/ws'), "Path './up/ws' escapes the loop directory"],
    ] as const) {
      const loop = track(makeLoop({ tweak }));
      symlinkSync(join(loop.dir, '..', `${basename(loop.dir)}-away`), join(loop.dir, 'up'));
      const r = spawnSync(process.execPath, [BIN, 'loop.resolved.json'], { cwd: loop.dir, input: '', encoding: 'utf8' });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(says);
      expect(r.stderr).not.toContain('internal error');
      expect(existsSync(join(loop.dir, '..', `${basename(loop.dir)}-away`))).toBe(false);
      expect(existsSync(join(loop.dir, '..', 'escaped-state.json'))).toBe(false);
      expect(loop.calls('host')).toBe(0);
    }
  });

  it('asks again when a member would get more than it was granted (fewer redactions, more sends) since the consent was given', async () => {
    const narrow = ['.env', '.env.*', 'secrets/**', '**/*.key', 'private/**'];
    const loop = track(makeLoop({ judge: ['--same'], tweak: (s) => (s.privacy.egress = [{ to: 'judge-1', sends: ['plan'], redact: narrow, consent: 'required' }]) }));
    expect((await runLoopIn(loop, { stdin: 'yes\n' })).code).toBe(1); // no progress, after the consent
    expect(loop.state().consent['judge-1']).toMatchObject({ sends: ['plan'], redact: narrow });
    const judged = loop.calls('judge');

    // The same scope: the recorded consent still covers it.
    const same = await runLoopIn(loop, { stdin: '' });
    expect(same.code).toBe(1);
    expect(same.err).not.toContain("Type 'yes' to consent");

    // private/** no longer redacted for judge-1: what it would now see was never agreed to.
    loop.spec.privacy.egress[0].redact = ['.env'];
    loop.write();
    const wider = await runLoopIn(loop, { stdin: '' });
    expect(wider.code).toBe(2);
    expect(loop.state()).toMatchObject({ status: 'blocked', failure: 'consent_refused:judge-1' });
    expect(loop.calls('judge')).toBe(judged + 2); // only the unchanged-scope run called it

    // More sends than granted: asked again too; a yes records the new scope.
    loop.spec.privacy.egress[0] = { to: 'judge-1', sends: ['plan', 'deliveries'], redact: narrow, consent: 'required' };
    loop.write();
    expect((await runLoopIn(loop, { stdin: '' })).code).toBe(2);
    expect((await runLoopIn(loop, { stdin: 'yes\n' })).code).toBe(1);
    expect(loop.state().consent['judge-1']).toMatchObject({ sends: ['deliveries', 'plan'], redact: narrow });
  });

  it('asks again when a member now goes to another CLI or model than the one consent was given for', async () => {
    const loop = track(makeLoop({ judge: ['--same'], tweak: (s) => (s.privacy.egress = [{ to: 'judge-1', sends: ['plan'], redact: ['.env'], consent: 'required' }]) }));
    expect((await runLoopIn(loop, { stdin: 'yes\n' })).code).toBe(1);
    const given = loop.state().consent['judge-1'];
    expect(given).toMatchObject({ cli: loop.spec.council[0].cli });
    const judged = loop.calls('judge');
    // The same member id, another destination: what was agreed to was sending to the first one.
    loop.spec.council[0].cli = 'another-vendor-cli';
    loop.write();
    const moved = await runLoopIn(loop, { stdin: '' });
    expect(moved.code).toBe(2);
    expect(moved.err).toContain(`does not cover this send: it now goes to CLI another-vendor-cli (given for ${String(given.cli)})`);
    expect(loop.calls('judge')).toBe(judged);
    expect((await runLoopIn(loop, { stdin: 'yes\n' })).code).toBe(1);
    expect(loop.state().consent['judge-1']).toMatchObject({ cli: 'another-vendor-cli' });
    // A model of its own too.
    loop.spec.council[0].model = 'a-bigger-model';
    loop.write();
    const remodelled = await runLoopIn(loop, { stdin: '' });
    expect(remodelled.code).toBe(2);
    expect(remodelled.err).toContain('it now goes to model a-bigger-model');
  });

  it('after a refusal, the same workspace resumes with one yes and keeps what was drafted', async () => {
    const loop = track(makeLoop({ tweak: (s) => (s.privacy.egress = []) }));
    expect((await runLoopIn(loop, { stdin: '' })).code).toBe(2);
    expect(loop.state()).toMatchObject({ status: 'blocked', failure: 'consent_refused:judge-1' });
    const { code, events } = await runLoopIn(loop, { stdin: 'yes\n' });
    expect(code).toBe(0);
    expect(loop.state().status).toBe('passed');
    expect(loop.state().failure).toBeUndefined();
    expect(loop.calls('host')).toBe(2); // plan.md from the refused run was kept
    expect(events[0]).toMatchObject({ type: 'loop.started', resumed: true, status: 'blocked' });
  });

  it('takes a human verdict source from stdin: anything but pass revises', async () => {
    const loop = track(
      makeLoop({
        tweak: (s) => {
          s.gates.plan_gate = { members: [], verdict_policy: 'revise_until_clean', verdict_source: 'human', criteria: [], max_revisions: 1 };
        },
      }),
    );
    const { code, err, events } = await runLoopIn(loop, { stdin: 'needs milestones\npass\n' });
    expect(code).toBe(0);
    expect(loop.state().status).toBe('passed');
    expect(err).toContain("Type 'pass' if loop-workspace/plan.md is clean:");
    expect(events.filter((e) => e.type === 'gate.verdict' && e.gate === 'plan_gate').map((e) => [e.verdict, e.source])).toEqual([
      ['revise', 'human'],
      ['pass', 'human'],
    ]);
    expect(loop.prompts('host')[1]).toContain('Human requested revision: needs milestones');
  });

  it('no_progress action human_checkpoint: continue grants more rounds, anything else stops', async () => {
    const loop = track(
      makeLoop({
        judge: ['--same'],
        tweak: (s) => {
          s.gates.plan_gate.max_revisions = 9;
          s.loop_control.no_progress.action = 'human_checkpoint';
        },
      }),
    );
    const { code, err } = await runLoopIn(loop, { stdin: 'continue\nstop\n' });
    expect(code).toBe(1);
    expect(loop.state()).toMatchObject({ status: 'failed', failure: 'no_progress_detected' });
    expect(err).toContain("No-progress detected. Type 'continue' to allow one more revision:");
    expect(loop.calls('judge')).toBe(4); // 2 rounds, continue, 2 more rounds, stop
    expect(loop.log()).toContain('`no_progress_override`');
  });
});
