// What real runs broke: each case reproduces a way a new user's run went wrong, and pins the fix.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { memoryIo } from '@quickloop/cli-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../src/run.js';
import { pidScope, processStart } from '@quickloop/cli-kit/process-group';
import { BIN, makeLoop, runLoopIn, type Loop } from './helpers.js';

const loops: Loop[] = [];
const track = (l: Loop): Loop => (loops.push(l), l);
const children: ChildProcess[] = [];
// SIGTERM, as a user's Ctrl-C: a loop-run then ends its model call's process tree, which a SIGKILL
// would leave running (a hanging judge outlived the suite). SIGKILL only for one that does not end.
const end = (c: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (c.exitCode !== null || c.signalCode !== null) return resolve();
    const late = setTimeout(() => c.kill('SIGKILL'), 10_000);
    c.once('close', () => {
      clearTimeout(late);
      resolve();
    });
    c.kill('SIGTERM');
  });

afterEach(async () => {
  await Promise.all(children.splice(0).map(end));
  for (const l of loops.splice(0)) l.cleanup();
});

const rounds = (events: Record<string, any>[], gate: string): number => events.filter((e) => e.type === 'gate.started' && e.gate === gate).length;
/** A plan gate that passes without a call, so only the delivery gate spends judge calls. */
const freePlanGate = (s: Record<string, any>): void => {
  s.gates.plan_gate = { members: [], verdict_policy: 'fixed_passes', criteria: [], max_revisions: 0 };
};

describe('the plan that is used is the plan that was gated', () => {
  it('gates a redrafted plan on the next run', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'pass,revise'], tweak: (s) => (s.loop_control.max_iterations = 1) }));
    const first = await runLoopIn(loop);
    expect(first.code).toBe(1);
    expect(rounds(first.events, 'plan_gate')).toBe(1);
    rmSync(loop.ws('plan.md'));
    const second = await runLoopIn(loop);
    expect(second.events.some((e) => e.type === 'artifact.written' && e.phase === 'plan')).toBe(true);
    expect(rounds(second.events, 'plan_gate')).toBeGreaterThan(0);
    expect(loop.state().status).not.toBe('passed');
  });

  it('gates an unchanged plan again when the plan gate gained a criterion', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'pass,revise'], tweak: (s) => (s.loop_control.max_iterations = 1) }));
    expect((await runLoopIn(loop)).code).toBe(1);
    loop.spec.gates.plan_gate.criteria = ['quality', 'has-haiku'];
    loop.write();
    const second = await runLoopIn(loop);
    expect(rounds(second.events, 'plan_gate')).toBeGreaterThan(0);
    expect(second.events.some((e) => e.type === 'gate.check' && e.gate === 'plan_gate' && e.criterion === 'has-haiku')).toBe(true);
  });

  it('gates a plan edited by hand after it passed, and keeps an untouched one', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'pass,revise'], tweak: (s) => (s.loop_control.max_iterations = 1) }));
    expect((await runLoopIn(loop)).code).toBe(1);
    const untouched = await runLoopIn(loop);
    expect(rounds(untouched.events, 'plan_gate')).toBe(0);
    writeFileSync(loop.ws('plan.md'), `${readFileSync(loop.ws('plan.md'), 'utf8')}\nOne more step.\n`);
    const edited = await runLoopIn(loop);
    expect(rounds(edited.events, 'plan_gate')).toBeGreaterThan(0);
  });
});

describe('questions', () => {
  it("refuses a council member with the id 'host' before anything runs (it would share the host's consent)", async () => {
    const loop = track(
      makeLoop({
        tweak: (s) => {
          s.council[0].id = 'host';
          s.gates.plan_gate.members = ['host'];
          s.gates.plan_gate.verdict_source = 'host';
          s.gates.delivery_gate.members = ['host'];
          s.gates.delivery_gate.verdict_source = 'host';
          s.privacy.egress = [];
        },
      }),
    );
    await expect(runLoopIn(loop, { consent: [] })).rejects.toThrow(/council\.host uses the id 'host'.*rename the member/);
    expect(loop.calls('host')).toBe(0);
    expect(loop.calls('judge')).toBe(0);
    expect(existsSync(join(loop.dir, 'loop-workspace'))).toBe(false);
  });

  it("records consent for a member whose id is an Object property name (__proto__, constructor), as Looper's dict does", async () => {
    for (const id of ['__proto__', 'constructor']) {
      const loop = track(
        makeLoop({
          tweak: (s) => {
            s.council[0].id = id;
            for (const g of [s.gates.plan_gate, s.gates.delivery_gate]) [g.members, g.verdict_source] = [[id], id];
            s.privacy.egress = [{ to: id, sends: ['plan.md', 'delivery artifacts'], redact: [], consent: 'required' }];
          },
        }),
      );
      const first = await runLoopIn(loop, { stdin: 'yes\n' });
      expect(first.code, first.err).toBe(0);
      expect(first.err).not.toContain('does not cover');
      const consent = JSON.parse(readFileSync(loop.ws('state.json'), 'utf8')).consent;
      expect(Object.keys(consent)).toEqual([id]);
      expect(Object.getOwnPropertyDescriptor(consent, id)?.value).toMatchObject({ how: 'answered_yes' });
    }
  });

  it('Ctrl-C at a consent question in a terminal ends loop-run and loop gate with 130 interrupted', () => {
    const loop = track(makeLoop({ tweak: (s) => (s.privacy.egress = []) }));
    const loopBin = join(BIN, '..', '..', '..', 'loop', 'bin', 'loop.js');
    writeFileSync(join(loop.dir, 'art.md'), '# a plan\n');
    for (const argv of [
      [BIN, loop.specPath],
      [loopBin, 'gate', loop.specPath, 'plan', join(loop.dir, 'art.md')],
    ]) {
      rmSync(join(loop.dir, 'loop-workspace'), { recursive: true, force: true });
      rmSync(join(loop.dir, 'tty.log'), { force: true });
      const out = join(loop.dir, 'events.ndjson');
      // The question is on the terminal; the feeder waits for it, then types Ctrl-C (a real SIGINT from the pty).
      const cmd = `${[process.execPath, ...argv].map((a) => `'${a}'`).join(' ')} > '${out}'`;
      const feeder = `while ! grep -q "Type 'yes'" '${join(loop.dir, 'tty.log')}' 2>/dev/null; do sleep 0.05; done; printf '\\003'; while ! grep -q '\\^C' '${join(loop.dir, 'tty.log')}'; do sleep 0.05; done`;
      const r = spawnSync('sh', ['-c', `(${feeder}) | script -q -e -f -c "${cmd.replace(/"/g, '\\"')}" '${join(loop.dir, 'tty.log')}'`], { encoding: 'utf8', timeout: 60_000 });
      expect(r.status, readFileSync(join(loop.dir, 'tty.log'), 'utf8')).toBe(130);
      const last = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).at(-1);
      expect(last.type).not.toBe('consent.answered');
      if (argv[0] === BIN) {
        expect(loop.state()).toMatchObject({ status: 'failed', failure: 'interrupted' });
        expect(last).toMatchObject({ type: 'loop.failed', failure: 'interrupted', exit_code: 130 });
      }
      expect(loop.calls('judge')).toBe(0);
    }
  });

  it('a signal at a human verdict is an interruption even when stdin ends with it', async () => {
    const loop = track(makeLoop({ tweak: (s) => (s.gates.plan_gate = { members: [], verdict_policy: 'revise_until_clean', verdict_source: 'human', criteria: [], max_revisions: 1 }) }));
    const stdin = new PassThrough();
    const io = memoryIo({ stdin, env: { ...process.env, NO_COLOR: '1' } });
    const running = run({ spec: loop.specPath, retries: 0, retryDelayMs: 0, consent: [], level: 'normal' }, io);
    while (!io.err().includes("Type 'pass'")) await new Promise((r) => setTimeout(r, 10));
    io.abort();
    stdin.end();
    expect(await running).toBe(130);
    expect(loop.state()).toMatchObject({ status: 'failed', failure: 'interrupted' });
  });

  it('end of input means the same at every question: blocked, exit 2, nothing more paid for', async () => {
    const loop = track(
      makeLoop({
        judge: ['--same'],
        tweak: (s) => {
          s.gates.plan_gate.max_revisions = 9;
          s.loop_control.no_progress.action = 'human_checkpoint';
        },
      }),
    );
    const { code } = await runLoopIn(loop, { stdin: '' });
    expect(code).toBe(2);
    expect(loop.state()).toMatchObject({ status: 'blocked', failure: 'interactive_input_required:no-progress checkpoint on plan_gate' });
    expect(loop.calls('judge')).toBe(2);
    const cp = track(makeLoop({ tweak: (s) => (s.loop_control.human_checkpoints = ['after_plan']) }));
    expect((await runLoopIn(cp, { stdin: '' })).code).toBe(2);
    expect(cp.state()).toMatchObject({ status: 'blocked', failure: 'interactive_input_required:human checkpoint after_plan' });
  });
});

describe('before any call', () => {
  it('refuses {{PLACEHOLDER}} tokens, naming them, before the host is called', async () => {
    const loop = track(
      makeLoop({
        tweak: (s) => {
          s.goal.statement = 'Fix {{PAGE}} so that {{COMMAND}} works.';
          s.goal.definition_of_done = '{{PAGE}} passes.';
        },
      }),
    );
    await expect(runLoopIn(loop)).rejects.toThrow(/unresolved template placeholders remain \(\{\{COMMAND\}\}, \{\{PAGE\}\}\)/);
    expect(loop.calls('host')).toBe(0);
  });
});

describe('re-runs and the lock', () => {
  it('a re-run after max_iterations_reached gives the last delivery no fresh revision budget', async () => {
    const loop = track(
      makeLoop({
        judge: ['--unique'],
        tweak: (s) => {
          freePlanGate(s);
          s.loop_control.max_iterations = 1;
          s.gates.delivery_gate.max_revisions = 1;
        },
      }),
    );
    expect((await runLoopIn(loop)).code).toBe(1);
    expect(loop.state().failure).toBe('max_iterations_reached');
    const [host, judge] = [loop.calls('host'), loop.calls('judge')];
    const again = await runLoopIn(loop);
    expect(again.code).toBe(1);
    expect(loop.state().failure).toBe('max_iterations_reached');
    expect([loop.calls('host'), loop.calls('judge')]).toEqual([host, judge]);
    // Raising the cap is how to give it more: exactly the difference.
    loop.spec.gates.delivery_gate.max_revisions = 2;
    loop.write();
    expect((await runLoopIn(loop)).code).toBe(1);
    expect([loop.calls('host'), loop.calls('judge')]).toEqual([host + 1, judge + 2]);
  });

  it('gating an edited plan again gives the exhausted delivery no fresh revision budget', async () => {
    const loop = track(
      makeLoop({
        judge: ['--unique'],
        tweak: (s) => {
          s.goal.verification.push({ id: 'plan-ok', type: 'programmatic', check: [process.execPath, '-e', ''], expect: 'exit_zero', timeout_sec: 60 });
          s.gates.plan_gate = { members: [], verdict_policy: 'fixed_passes', criteria: ['plan-ok'], max_revisions: 0 };
          s.loop_control.max_iterations = 1;
          s.gates.delivery_gate.max_revisions = 1;
        },
      }),
    );
    expect((await runLoopIn(loop)).code).toBe(1);
    expect(loop.state().failure).toBe('max_iterations_reached');
    const [host, judge] = [loop.calls('host'), loop.calls('judge')];
    writeFileSync(loop.ws('plan.md'), `${readFileSync(loop.ws('plan.md'), 'utf8')}\nOne more step.\n`);
    const again = await runLoopIn(loop);
    expect(rounds(again.events, 'plan_gate')).toBe(1);
    expect(again.code).toBe(1);
    expect(loop.state().failure).toBe('max_iterations_reached');
    expect(rounds(again.events, 'delivery_gate')).toBe(0);
    expect([loop.calls('host'), loop.calls('judge')]).toEqual([host, judge]);
  });

  it('takes over a lock whose pid is alive but is not a loop-run (a reused pid)', async () => {
    const loop = track(makeLoop());
    mkdirSync(join(loop.dir, 'loop-workspace'));
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e9)'], { stdio: 'ignore' });
    children.push(other);
    // Without a start time (an old lock): the command line says it is no loop runner.
    writeFileSync(loop.ws('.loop-run.lock'), `${other.pid}\n`);
    expect((await runLoopIn(loop)).code).toBe(0);
    rmSync(loop.ws('state.json'));
    // With a start time that is not the process's own: the pid was reused.
    writeFileSync(loop.ws('.loop-run.lock'), `${other.pid}\n1\n`);
    expect((await runLoopIn(loop)).code).toBe(0);
    expect(existsSync(loop.ws('.loop-run.lock'))).toBe(false);
  });

  it("judges a lock's pid only in the pid namespace and boot it was taken in", async () => {
    const loop = track(makeLoop());
    mkdirSync(join(loop.dir, 'loop-workspace'));
    const [ns, boot] = pidScope()!.split(' ');
    // Taken in another pid namespace of this boot: its pid (here: our own test runner's, alive) says nothing here.
    writeFileSync(loop.ws('.loop-run.lock'), `${process.pid}\n${processStart(process.pid)}\n${Number(ns) + 1} ${boot}\n`);
    await expect(runLoopIn(loop)).rejects.toThrow(`was taken by pid ${process.pid} of another pid namespace (a container sharing this folder?), which cannot be checked from here: remove the lock if that loop-run has ended`);
    // Taken before this boot, whatever its namespace: its holder is gone, and the lock is taken over.
    writeFileSync(loop.ws('.loop-run.lock'), `${process.pid}\n${processStart(process.pid)}\n${Number(ns) + 1} 00000000-0000-0000-0000-000000000000\n`);
    expect((await runLoopIn(loop)).code).toBe(0);
    expect(existsSync(loop.ws('.loop-run.lock'))).toBe(false);
  });

  it('refuses while a live loop-run holds the lock, and records its start time there', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'hang'] }));
    const holder = spawn(process.execPath, [BIN, loop.specPath], { cwd: loop.dir, stdio: ['pipe', 'ignore', 'ignore'] });
    children.push(holder);
    holder.stdin.end();
    while (!existsSync(join(loop.capture, 'judge.hang'))) {
      if (holder.exitCode !== null) throw new Error('loop-run ended before the judge hung');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(readFileSync(loop.ws('.loop-run.lock'), 'utf8')).toBe(`${holder.pid}\n${processStart(holder.pid!)}\n${pidScope()}\n`);
    await expect(runLoopIn(loop)).rejects.toThrow(`another loop-run (pid ${holder.pid}) is running this loop`);
    const judge = Number(readFileSync(join(loop.capture, 'judge.hang'), 'utf8'));
    await end(holder);
    expect(() => process.kill(judge, 0)).toThrow();
  });
});

describe('model CLIs', () => {
  it('does not retry a deterministic failure (a stack trace, an invalid --model)', async () => {
    const crashes = [
      'TypeError: x is not a function\n    at main (/usr/lib/cli/index.js:512:7)',
      "error: invalid --model 'gpt-9' (see --help)",
      // A number in a crash's message is no HTTP status.
      'Traceback (most recent call last):\n  File "x.py", line 12\nValueError: boom at offset 429',
    ];
    for (const stderr of crashes) {
      const loop = track(makeLoop({ host: ['--fail-first', '9', '--stderr', stderr] }));
      const { code, events } = await runLoopIn(loop);
      expect(code).toBe(2);
      expect(loop.calls('host')).toBe(1);
      expect(events.find((e) => e.type === 'model.result')).toMatchObject({ ok: false, attempts: 1 });
    }
    // What the CLI or its API marks transient is still retried.
    const flaky = track(makeLoop({ host: ['--fail-first', '1', '--stderr', 'API Error: 500 Internal server error'] }));
    expect((await runLoopIn(flaky)).code).toBe(0);
    expect(flaky.calls('host')).toBe(3);
  });

  it('keeps the tail of a judge that prints more than 16 MiB, and passes on the verdict at its end', async () => {
    const verdict = '```json\n{"verdict":"pass","blocking_issues":[],"confidence":0.9,"notes":""}\n```';
    const loud = [process.execPath, '-e', `process.stdout.write('x'.repeat(17 * 1024 * 1024) + '\\n'); process.stdout.write(${JSON.stringify(verdict)} + '\\n')`];
    const loop = track(makeLoop({ tweak: (s) => (s.council[0].invoke = loud) }));
    const { code, events } = await runLoopIn(loop);
    expect(code).toBe(0);
    expect(events.filter((e) => e.type === 'gate.verdict').map((e) => e.verdict)).toEqual(['pass', 'pass']);
    expect(loop.state().warnings.join('\n')).toContain('judge-1 printed more than 16 MiB; only the tail was kept');
  });

  it('passes a stdout_contains check whose text came before the last 16 MiB of its output, as Looper reads all of it', async () => {
    const chatty = [process.execPath, '-e', "process.stdout.write('ALL TESTS OK\\n' + 'x'.repeat(17 * 1024 * 1024) + '\\n')"];
    const loop = track(
      makeLoop({
        tweak: (s) => {
          freePlanGate(s);
          s.goal.verification.push({ id: 'suite', type: 'programmatic', check: chatty, expect: 'stdout_contains', contains: 'ALL TESTS OK', timeout_sec: 60 });
          s.gates.delivery_gate = { members: [], verdict_policy: 'fixed_passes', criteria: ['suite'], max_revisions: 0 };
        },
      }),
    );
    const { code, events } = await runLoopIn(loop);
    expect(events.filter((e) => e.type === 'gate.check' && e.criterion === 'suite').map((e) => e.passed)).toEqual([true]);
    expect(code).toBe(0);
  });

  it('says so when a context command or a check printed more than the 16 MiB kept of it', async () => {
    const flood = (tag: string) => [process.execPath, '-e', `process.stdout.write('${tag} head\\n' + 'x'.repeat(17 * 1024 * 1024) + '\\n${tag} tail\\n')`];
    const loop = track(
      makeLoop({
        tweak: (s) => {
          freePlanGate(s);
          s.goal.context_sources = [{ cmd: flood('ctx'), timeout_sec: 60 }];
          s.goal.verification.push({ id: 'suite', type: 'programmatic', check: flood('check'), expect: 'exit_zero', timeout_sec: 60 });
          s.gates.delivery_gate = { members: [], verdict_policy: 'fixed_passes', criteria: ['suite'], max_revisions: 0 };
        },
      }),
    );
    const { code, err } = await runLoopIn(loop);
    expect(code).toBe(0);
    const warnings = loop.state().warnings.join('\n');
    expect(warnings).toContain(`context command output (${flood('ctx').join(' ')}) printed more than 16 MiB; only its last 16 MiB were kept`);
    expect(warnings).toContain('programmatic check suite printed more than 16 MiB; only its last 16 MiB were kept');
    expect(err).toContain('only its last 16 MiB were kept');
    expect(readFileSync(loop.ws('context.md'), 'utf8')).toContain('ctx tail');
  });

  it('does not start a call the remaining token budget cannot cover', async () => {
    const loop = track(
      makeLoop({
        host: ['--output-format', 'json'],
        judge: ['--verdicts', 'revise', '--output-format', 'json'],
        tweak: (s) => {
          s.loop_control.budget.tokens = 500;
          s.gates.plan_gate.max_revisions = 9;
          s.loop_control.no_progress.max_stalled_iterations = 99;
        },
      }),
    );
    const { code } = await runLoopIn(loop);
    expect(code).toBe(1);
    const state = loop.state();
    expect(state.failure).toBe('token_budget_exceeded');
    // Every call reports 150 tokens: three fit in 500, a fourth would not.
    expect(state.usage.calls).toBe(3);
    expect(state.usage.input_tokens + state.usage.output_tokens).toBeLessThanOrEqual(500);
  });
});

describe('context files that never end', () => {
  it('refuses a context file that is a FIFO, naming it, instead of blocking for good where no signal can end it', () => {
    const loop = track(makeLoop());
    loop.spec.goal.context_sources = [{ file: 'notes.md' }, { file: 'feed.md' }];
    loop.write();
    expect(spawnSync('mkfifo', [join(loop.dir, 'feed.md')]).status).toBe(0);
    // Bounded only so that the old behaviour (a read that never returns) ends the test as a failure.
    const r = spawnSync(process.execPath, [BIN, loop.specPath], { cwd: loop.dir, encoding: 'utf8', input: '', timeout: 60_000, killSignal: 'SIGKILL' });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain('context source 2 (feed.md) is not a regular file (a FIFO)');
    expect(loop.calls('host')).toBe(0);
    expect(loop.state()).toMatchObject({ status: 'failed' });
  });
});

describe('read-only', () => {
  it('reports an already-passed loop on a read-only filesystem without writing', async () => {
    const loop = track(makeLoop());
    expect((await runLoopIn(loop)).code).toBe(0);
    const before = readFileSync(loop.ws('state.json'), 'utf8');
    const r = spawnSync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', process.execPath, BIN, loop.specPath], { cwd: loop.dir, encoding: 'utf8', input: '' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('loop already passed');
    expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toMatchObject({ type: 'loop.completed', already_passed: true });
    expect(readFileSync(loop.ws('state.json'), 'utf8')).toBe(before);
  });

  it('refuses a loop it cannot write on a read-only filesystem in words, not as an internal error, before any call', () => {
    const loop = track(makeLoop());
    const r = spawnSync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', process.execPath, BIN, loop.specPath], { cwd: loop.dir, encoding: 'utf8', input: '' });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).not.toContain('internal error');
    expect(r.stderr).toContain(`cannot write the workspace ${join(loop.dir, 'loop-workspace')}`);
    expect(r.stderr).toContain('read-only file system');
    expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toMatchObject({ type: 'loop.failed', exit_code: 2 });
    expect(loop.calls('host')).toBe(0);
  });
});
