// A person at a terminal: a progress view instead of NDJSON on a TTY, events to --events FILE, NDJSON on a pipe.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { memoryIo } from '@quickloop/cli-kit';
import { run as gate } from '@quickloop/loop-gate';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../src/run.js';
import { BIN, makeLoop, type Loop } from './helpers.js';

const loops: Loop[] = [];
const track = (l: Loop): Loop => (loops.push(l), l);
afterEach(() => {
  for (const l of loops.splice(0)) l.cleanup();
});

/** memoryIo whose stdout says it is a terminal, as a TTY's stream does. */
function ttyIo(env: Record<string, string> = {}) {
  const io = memoryIo({ stdin: '', env: { ...process.env, NO_COLOR: '1', ...env } });
  Object.assign(io.stdout, { isTTY: true });
  return io;
}
const failing = () => makeLoop({ judge: ['--verdicts', 'pass,revise'], tweak: (s) => (s.loop_control.max_iterations = 1) });

describe('progress view on a terminal', () => {
  it('shows phases, calls with durations, verdicts with the review to open, and a last line with the cause', async () => {
    const loop = track(failing());
    const io = ttyIo();
    const events = join(loop.dir, 'events.ndjson');
    expect(await run({ spec: loop.specPath, retries: 0, retryDelayMs: 0, consent: [], level: 'normal', events }, io)).toBe(1);
    const out = io.out();
    expect(out).not.toContain('{"v":1');
    expect(out).toMatch(/^plan_gate round 1 on loop-workspace\/plan\.md$/m);
    expect(out).toMatch(/^iteration 1 of 1$/m);
    expect(out).toMatch(/^ {2}calling judge-1 \(judge: verdict\) …$/m);
    expect(out).toMatch(/^ {2}judge-1 \(verdict\) answered in \d+\.\d s$/m);
    expect(out).toContain('delivery_gate: revise — the plan has no milestones — see loop-workspace/review-delivery_gate-1.md');
    expect(out.trimEnd().split('\n').at(-1)).toBe('FAILED: no_progress_detected — delivery_gate still blocked by: the plan has no milestones (see loop-workspace/review-delivery_gate-2.md)');
    // No escape sequences under NO_COLOR, and the info log does not repeat the view on stderr.
    expect(out).not.toContain('\u001b[');
    expect(io.err()).not.toContain('round 1 on');
    // --events FILE still gets every event, ending with the terminal one.
    const lines = readFileSync(events, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines[0].type).toBe('loop.started');
    expect(lines.at(-1)).toMatchObject({ type: 'loop.failed', failure: 'no_progress_detected' });
  });

  it("names what a failed check said (or the check, when it said nothing) on its line and in the last line", async () => {
    const loop = track(
      makeLoop({
        tweak: (s) => {
          s.gates.plan_gate = { members: [], verdict_policy: 'fixed_passes', criteria: [], max_revisions: 0 };
          s.goal.verification.push(
            { id: 'report', type: 'programmatic', check: ['cat', 'loop-workspace/REPORT.md'], expect: 'exit_zero', timeout_sec: 60 },
            { id: 'quiet', type: 'programmatic', check: ['test', '-s', 'loop-workspace/NOTES.md'], expect: 'exit_zero', timeout_sec: 60 },
          );
          s.gates.delivery_gate = { members: [], verdict_policy: 'fixed_passes', criteria: ['report', 'quiet'], max_revisions: 0 };
          s.loop_control.max_iterations = 1;
        },
      }),
    );
    const io = ttyIo();
    expect(await run({ spec: loop.specPath, retries: 0, retryDelayMs: 0, consent: [], level: 'normal' }, io)).toBe(1);
    const out = io.out();
    expect(out).toContain('  ✗ report (programmatic, exit 1): cat: loop-workspace/REPORT.md: No such file or directory');
    expect(out).toContain('  ✗ quiet (programmatic, exit 1): test -s loop-workspace/NOTES.md printed nothing');
    expect(out.trimEnd().split('\n').at(-1)).toBe(
      'FAILED: max_iterations_reached — delivery_gate still blocked by: Programmatic check failed: report (cat: loop-workspace/REPORT.md: No such file or directory); Programmatic check failed: quiet (test -s loop-workspace/NOTES.md printed nothing) (see loop-workspace/review-delivery_gate-1.md)',
    );
  });

  it('with stdout a pipe, stderr names each failed round and, in its last line, the cause', async () => {
    const loop = track(
      makeLoop({
        tweak: (s) => {
          s.gates.plan_gate = { members: [], verdict_policy: 'fixed_passes', criteria: [], max_revisions: 0 };
          s.goal.verification.push({ id: 'report', type: 'programmatic', check: ['cat', 'loop-workspace/REPORT.md'], expect: 'exit_zero', timeout_sec: 60 });
          s.gates.delivery_gate = { members: [], verdict_policy: 'fixed_passes', criteria: ['report'], max_revisions: 0 };
          s.loop_control.max_iterations = 1;
        },
      }),
    );
    const io = memoryIo({ stdin: '', env: { ...process.env, NO_COLOR: '1' } });
    expect(await run({ spec: loop.specPath, retries: 0, retryDelayMs: 0, consent: [], level: 'normal' }, io)).toBe(1);
    const blocked = 'Programmatic check failed: report (cat: loop-workspace/REPORT.md: No such file or directory)';
    expect(io.err()).toContain(`delivery_gate: revise — ${blocked} — see loop-workspace/review-delivery_gate-1.md\n`);
    expect(io.err().trimEnd().split('\n').at(-1)).toBe(`loop failed: no delivery passed in 1 iteration(s) — delivery_gate still blocked by: ${blocked} (see loop-workspace/review-delivery_gate-1.md)`);
    expect(io.out().trim().split('\n').at(-1)).toContain('"type":"loop.failed"');
  });

  it("scrubs what a failed check said before it reaches an event or the terminal", async () => {
    const loop = track(
      makeLoop({
        tweak: (s) => {
          s.gates.plan_gate = { members: [], verdict_policy: 'fixed_passes', criteria: [], max_revisions: 0 };
          s.goal.verification.push({ id: 'leaky', type: 'programmatic', check: ['sh', '-c', 'cat .env >&2; exit 3'], expect: 'exit_zero', timeout_sec: 60 });
          s.gates.delivery_gate = { members: [], verdict_policy: 'fixed_passes', criteria: ['leaky'], max_revisions: 0 };
          s.loop_control.max_iterations = 1;
        },
      }),
    );
    writeFileSync(join(loop.dir, '.env'), 'DATABASE_URL=postgres://admin:hunter2hunter2@db/prod\n');
    const io = ttyIo();
    const events = join(loop.dir, 'events.ndjson');
    expect(await run({ spec: loop.specPath, retries: 0, retryDelayMs: 0, consent: [], level: 'normal', events }, io)).toBe(1);
    const check = readFileSync(events, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).find((e) => e.type === 'gate.check' && e.criterion === 'leaky');
    expect(check.said).toBe('[redacted:.env]');
    expect(io.out()).not.toContain('hunter2');
  });

  it("shows a model's escape sequences as text: a judge cannot colour, conceal or retitle the operator's terminal", async () => {
    const loop = track(makeLoop({ tweak: (s) => (s.gates.plan_gate.max_revisions = 0) }));
    // A judge whose blocking issue carries SGR (conceal, red), an OSC title and a clear-screen.
    const judge = join(loop.dir, 'esc-judge.mjs');
    const issue = 'fix \u001b[8mhidden\u001b[0m \u001b[31mred \u001b]0;owned\u0007 \u001b[2J';
    writeFileSync(judge, `process.stdin.resume(); process.stdin.on('end', () => console.log(JSON.stringify({ verdict: 'revise', blocking_issues: [${JSON.stringify(issue)}] })));\n`);
    loop.spec.council[0].invoke = [process.execPath, judge];
    loop.write();
    // In colour: the view's own SGR must stay, the judge's must not act.
    const io = ttyIo({ NO_COLOR: '' });
    expect(await run({ spec: loop.specPath, retries: 0, retryDelayMs: 0, consent: [], level: 'normal' }, io)).toBe(1);
    const out = io.out();
    for (const raw of ['\u001b[8mhidden', '\u001b[0m \u001b[31mred', '\u001b]0;owned', '\u001b[2J']) expect(out.includes(raw)).toBe(false);
    expect(out).toContain('fix \\x1b[8mhidden\\x1b[0m \\x1b[31mred \\x1b]0;owned\\x07 \\x1b[2J');
  });

  it("shows a model CLI's escape sequences in its failure line as text", async () => {
    const loop = track(makeLoop({ host: ['--fail-first', '9', '--stderr', 'error: \u001b[8mconcealed\u001b[0m'] }));
    const io = ttyIo({ NO_COLOR: '' });
    Object.assign(io.stderr, { isTTY: true });
    expect(await run({ spec: loop.specPath, retries: 0, retryDelayMs: 0, consent: [], level: 'normal' }, io)).toBe(2);
    expect(io.out().includes('\u001b[8mconcealed')).toBe(false);
    expect(io.out()).toContain('\\x1b[8mconcealed');
    // The stop line on stderr names the same failure: there too as text.
    expect(io.err().includes('\u001b[8mconcealed')).toBe(false);
  });

  it('colours the view without NO_COLOR, and names a model failure as the cause', async () => {
    const loop = track(makeLoop({ host: ['--fail-first', '9', '--stderr', "error: invalid --model 'gpt-9'"] }));
    const io = ttyIo({ NO_COLOR: '' });
    expect(await run({ spec: loop.specPath, retries: 0, retryDelayMs: 0, consent: [], level: 'normal' }, io)).toBe(2);
    const out = io.out();
    expect(out).toContain('\u001b[');
    const last = out.trimEnd().split('\n').at(-1)!.replace(/\u001b\[[0-9;]*m/g, '');
    expect(last).toMatch(/^FAILED: Model invocation failed \(.*\): exit 1$/);
    expect(out).toContain("host (plan) failed after");
  });

  it('loop gate on a terminal ends with the verdict and the review file', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'revise'] }));
    const artifact = join(loop.dir, 'plan.md');
    writeFileSync(artifact, '# plan\n');
    const io = ttyIo();
    const review = join(loop.dir, 'review.md');
    const code = await gate({ spec: loop.specPath, gate: 'plan', artifact, review, round: 1, revision: 0, consent: [], retries: 0, retryDelayMs: 0, level: 'normal' }, io);
    expect(code).toBe(1);
    expect(io.out()).not.toContain('{"v":1');
    expect(io.out().trimEnd().split('\n').at(-1)).toBe('REVISE: the plan has no milestones (see review.md)');
  });

  it('refuses an --events FILE it cannot write before anything runs (exit 2), loop-run and loop-gate alike', () => {
    const loop = track(makeLoop());
    const events = join(loop.dir, 'no-such-dir', 'events.ndjson');
    const r = spawnSync(process.execPath, [BIN, loop.specPath, '--events', events], { cwd: loop.dir, encoding: 'utf8', input: '' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`cannot write --events ${events}`);
    expect(loop.calls('host')).toBe(0);
    writeFileSync(join(loop.dir, 'plan.md'), '# plan\n');
    const GATE = join(BIN, '..', '..', '..', 'loop-gate', 'bin', 'loop-gate.js');
    const g = spawnSync(process.execPath, [GATE, loop.specPath, 'plan', join(loop.dir, 'plan.md'), '--events', events], { cwd: loop.dir, encoding: 'utf8', input: '' });
    expect(g.status).toBe(2);
    expect(g.stderr).toContain(`cannot write --events ${events}`);
    expect(loop.calls('judge')).toBe(0);
  });

  it('a real pseudo-terminal gets the view; a pipe gets NDJSON', () => {
    const loop = track(makeLoop());
    const tty = spawnSync('script', ['-q', '-e', '-c', `'${process.execPath}' '${BIN}' loop.resolved.json < /dev/null`, '/dev/null'], { cwd: loop.dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(tty.status).toBe(0);
    expect(tty.stdout).not.toContain('{"v":1');
    expect(tty.stdout.trimEnd().split(/\r?\n/).at(-1)).toMatch(/^PASSED: loop-workspace\/delivery-1\.md — iteration 1, 4 call\(s\), [\d.]+ s$/);
    const pipe = spawnSync(process.execPath, [BIN, loop.specPath], { cwd: loop.dir, encoding: 'utf8', input: '' });
    expect(pipe.status).toBe(0);
    expect(JSON.parse(pipe.stdout.trim().split('\n').at(-1)!)).toMatchObject({ type: 'loop.completed', already_passed: true });
  });

  it('on a real pseudo-terminal, a call that is still out shows who and for how long, and the line is taken back', () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'pass', '--slow-first', '2500'] }));
    const tty = spawnSync('script', ['-q', '-e', '-c', `'${process.execPath}' '${BIN}' loop.resolved.json < /dev/null`, '/dev/null'], { cwd: loop.dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(tty.status).toBe(0);
    const live = '  … waiting on judge-1 (verdict) 1 s';
    expect(tty.stdout).toContain(`\r${live}`);
    // Taken back (blanked, the cursor home) before the answer's own line.
    expect(tty.stdout).toMatch(new RegExp(`\\r {${live.length}}\\r {2}judge-1 \\(verdict\\) answered in \\d\\.\\d s`));
    expect(tty.stdout).not.toContain('\u001b');
    // A pipe gets events only: no live line in the NDJSON.
    const pipe = spawnSync(process.execPath, [BIN, loop.specPath], { cwd: loop.dir, encoding: 'utf8', input: '' });
    expect(pipe.stdout).not.toContain('waiting on');
  });
});
