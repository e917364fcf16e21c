// Workspaces shared with Looper's runner, and paths that reach flagged files through links.
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeLoop, runLoopIn, type Loop } from './helpers.js';

const loops: Loop[] = [];
const track = (l: Loop): Loop => (loops.push(l), l);
afterEach(() => {
  for (const l of loops.splice(0)) l.cleanup();
});

describe('a workspace Looper’s runner left', () => {
  it('keeps the review files Looper wrote: new rounds are numbered after them', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'revise,pass'] }));
    const ws = join(loop.dir, 'loop-workspace');
    mkdirSync(ws);
    // What run-loop.py leaves after a plan gate that ran out of revisions: its state has no
    // review_rounds, and its review files are numbered from 1 in each process.
    writeFileSync(join(ws, 'plan.md'), '# Plan\n');
    writeFileSync(join(ws, 'review-plan_gate-1.md'), 'Looper round 1\n');
    writeFileSync(join(ws, 'review-plan_gate-2.md'), 'Looper round 2\n');
    writeFileSync(
      join(ws, 'state.json'),
      `${JSON.stringify({ status: 'failed', failure: 'plan_gate_max_revisions_reached', iteration: 0, started_at: '2026-07-05T06:02:07+00:00', updated_at: '2026-07-05T06:03:00+00:00', wall_clock_used_sec: 1.2, warnings: [], consent: {}, no_progress: { count: 1, gate: 'plan_gate', signature: 'x', threshold: 2 }, last_review: join(ws, 'review-plan_gate-2.md') }, null, 2)}\n`,
    );
    const { code } = await runLoopIn(loop);
    expect(code).toBe(0);
    expect(readFileSync(join(ws, 'review-plan_gate-1.md'), 'utf8')).toBe('Looper round 1\n');
    expect(readFileSync(join(ws, 'review-plan_gate-2.md'), 'utf8')).toBe('Looper round 2\n');
    expect(readFileSync(join(ws, 'review-plan_gate-3.md'), 'utf8')).toContain('the plan has no milestones');
    expect(loop.state().review_rounds.plan_gate).toBe(4);
  });

  it('does not hold a gate to its exhaustion once Looper has written the state after it (here: passed the plan)', async () => {
    const loop = track(makeLoop({ judge: ['--unique'], tweak: (s) => (s.gates.plan_gate.max_revisions = 0) }));
    expect((await runLoopIn(loop)).code).toBe(1);
    // Our own exhaustion holds across a re-run of ours.
    const again = await runLoopIn(loop);
    expect(again.code).toBe(1);
    expect(again.err).toContain('in an earlier run');
    // Then run-loop.py resumes the workspace: its plan gate starts afresh and passes, it records the
    // pass its way ({passed_at} only) and saves the state with its own updated_at, keeping our keys.
    const path = loop.ws('state.json');
    const state = JSON.parse(readFileSync(path, 'utf8'));
    Object.assign(state, { status: 'failed', failure: 'max_iterations_reached', iteration: 1, plan_gate: { passed_at: '2026-07-05T07:00:00+00:00' }, updated_at: '2026-07-05T07:01:00+00:00' });
    writeFileSync(path, `${JSON.stringify(state, null, 2)}\n`);
    const judge = loop.spec.council[0];
    judge.invoke = judge.invoke.map((a: string) => (a === '--unique' ? '--verdicts' : a));
    judge.invoke.push('pass');
    loop.write();
    const { code, err } = await runLoopIn(loop);
    expect(err).not.toContain('in an earlier run');
    expect(code).toBe(0);
    expect(loop.state().status).toBe('passed');
  });
});

describe('what a model CLI prints, read as Looper reads it', () => {
  it('writes LF artifacts from a CLI that prints CRLF or redraws a line with a lone CR (universal newlines)', async () => {
    const loop = track(
      makeLoop({
        tweak: (s) => {
          s.host.invoke = ['bash', '-c', "cat > /dev/null; printf '# Draft\\r\\n\\r\\nA haiku about a gate.\\r\\nthinking\\rdone\\r\\n'"];
        },
      }),
    );
    const { code } = await runLoopIn(loop);
    expect(code).toBe(0);
    for (const file of ['plan.md', 'delivery-1.md']) {
      const text = readFileSync(loop.ws(file), 'utf8');
      expect(text).not.toContain('\r');
      expect(text).toContain('# Draft\n\nA haiku about a gate.\nthinking\ndone');
    }
  });
});

describe('the JSON Looper’s runner writes, byte for byte (json.dumps: ensure_ascii, its separators, floats kept)', () => {
  // A judge that always says the same revise, in prose, with non-ASCII text, floats and integer-like keys.
  const ANSWER = 'Verdict: {"verdict": "revise", "blocking_issues": ["café ☕ 😀"], "confidence": 1.0, "notes": {"10": 1e-7, "2": 0.5, "a": "\\u00e9"}} thanks';
  const looperLoop = () =>
    makeLoop({
      tweak: (s) => {
        s.council[0].invoke = [process.execPath, '-e', `require('fs').readFileSync(0); process.stdout.write(${JSON.stringify(ANSWER)})`];
        s.goal.verification.push({ id: 'says', type: 'programmatic', check: [process.execPath, '-e', "console.log('ünï ✓ 😀'); console.error('— \\u2028')"], expect: 'exit_zero', timeout_sec: 60 });
        s.gates.plan_gate.criteria = ['says', 'quality'];
        s.gates.plan_gate.max_revisions = 1;
      },
    });

  it('writes the review file’s JSON blocks as Looper does', async () => {
    const loop = track(looperLoop());
    const now = () => new Date('2026-07-05T06:02:07.000Z');
    expect((await runLoopIn(loop, { now })).code).toBe(1);
    const review = readFileSync(loop.ws('review-plan_gate-1.md'), 'utf8');
    // What run-loop.py writes for the same check and the same answer (CPython 3.11).
    expect(review).toContain(
      '```json\n{\n  "id": "says",\n  "type": "programmatic",\n  "passed": true,\n  "returncode": 0,\n  "stdout": "\\u00fcn\\u00ef \\u2713 \\ud83d\\ude00\\n",\n  "stderr": "\\u2014 \\u2028\\n"\n}\n```',
    );
    expect(review).toContain(
      '## Verdict\n\n```json\n{\n  "verdict": "revise",\n  "blocking_issues": [\n    "caf\\u00e9 \\u2615 \\ud83d\\ude00"\n  ],\n  "confidence": 1.0,\n  "notes": {\n    "10": 1e-07,\n    "2": 0.5,\n    "a": "\\u00e9"\n  },\n  "member": "judge-1"\n}\n```',
    );
    expect(review).toContain('## Blocking Issues\n\n- café ☕ 😀\n');
  });

  it('writes state.json and the run log as json.dumps(…, sort_keys=True) does', async () => {
    const loop = track(looperLoop());
    const now = () => new Date('2026-07-05T06:02:07.000Z');
    expect((await runLoopIn(loop, { now })).code).toBe(1);
    const state = readFileSync(loop.ws('state.json'), 'utf8');
    expect(state).toContain('"signature": "caf\\u00e9 \\u2615 \\ud83d\\ude00",');
    expect(state).toContain('"wall_clock_used_sec": 0.0');
    expect(state).not.toMatch(/[^\x00-\x7f]/);
    const blocked = loop.log().split('\n').find((l) => l.includes('`gate_blocked`'));
    expect(blocked).toMatch(/`gate_blocked` \{"failures": \["caf\\u00e9 \\u2615 \\ud83d\\ude00"\], "gate": "plan_gate", "review": "[^"]+"\}$/);
    expect(loop.log()).not.toMatch(/[^\x00-\x7f]/);
  });

  it('names files in the run log as Looper does: the spec by its absolute path, artifacts and reviews by their names in the workspace', async () => {
    const loop = track(looperLoop());
    expect((await runLoopIn(loop)).code).toBe(1);
    const fields = (event: string) => loop.log().split('\n').filter((l) => l.includes(`\`${event}\``)).map((l) => JSON.parse(l.slice(l.indexOf('{'))));
    expect(fields('run_start')[0].spec).toBe(realpathSync(loop.specPath));
    expect(fields('host_start')[0]).toEqual({ phase: 'plan', target: 'plan.md' });
    expect(fields('host_done')[0]).toEqual({ phase: 'plan', target: 'plan.md' });
    expect(fields('gate_start')[0]).toMatchObject({ gate: 'plan_gate', artifact: 'plan.md' });
    expect(fields('gate_blocked')[0]).toMatchObject({ gate: 'plan_gate', review: 'review-plan_gate-1.md' });
    expect(fields('revision')[0]).toEqual({ gate: 'plan_gate', revision: 1, artifact: 'plan.md' });
  });
});

describe('text as Python reads and strips it', () => {
  it('reads a context file with universal newlines and its BOM, as read_text() does', async () => {
    const loop = track(makeLoop());
    writeFileSync(join(loop.dir, 'notes.md'), '\ufeff# Notes\r\nline two\rline three\r\n');
    expect((await runLoopIn(loop)).code).toBe(0);
    // read_text(encoding='utf-8') keeps a BOM (only utf-8-sig drops it).
    expect(readFileSync(loop.ws('context.md'), 'utf8')).toBe('## Context source 1: notes.md\n\ufeff# Notes\nline two\nline three\n');
  });

  it('strips a model’s answer and an artifact as str.strip() does: \\x1c-\\x1f and NEL go too', async () => {
    const loop = track(
      makeLoop({
        tweak: (s) => {
          s.host.invoke = [process.execPath, '-e', "require('fs').readFileSync(0); process.stdout.write('\\x1c\\x1f # Plan haiku \\x1c\\x85\\u2028 \\n\\x1f')"];
        },
      }),
    );
    expect((await runLoopIn(loop)).code).toBe(0);
    // What run-loop.py writes for the same output (CPython 3.11).
    expect(readFileSync(loop.ws('plan.md'), 'utf8')).toBe('# Plan haiku\n');
  });

  it('keeps a BOM a model CLI or a check prints first, as Python’s utf-8 text mode does', async () => {
    const loop = track(
      makeLoop({
        tweak: (s) => {
          s.host.invoke = [process.execPath, '-e', "require('fs').readFileSync(0); process.stdout.write('\\ufeff# Plan haiku\\n')"];
          s.goal.verification.push({ id: 'bom', type: 'programmatic', check: [process.execPath, '-e', "process.stdout.write('\\ufeffok'); process.exit(1)"], expect: 'exit_zero', timeout_sec: 60 });
          s.gates.plan_gate.criteria = ['bom'];
          s.gates.plan_gate.max_revisions = 0;
        },
      }),
    );
    expect((await runLoopIn(loop)).code).toBe(1);
    expect(readFileSync(loop.ws('plan.md'), 'utf8')).toBe('\ufeff# Plan haiku\n');
    expect(readFileSync(loop.ws('review-plan_gate-1.md'), 'utf8')).toContain('"stdout": "\\ufeffok",');
  });
});

describe('what Looper’s compiler accepts, loop-run runs', () => {
  // Python's bools are ints: `max_iterations: yes` compiles (in Looper and here) and Looper's runner
  // reads it as 1, `max_revisions: no` as 0. Refusing them would refuse a spec `loop compile` wrote.
  it('reads true and false as 1 and 0 where a count is due, as Looper’s runner does', async () => {
    const loop = track(
      makeLoop({
        judge: ['--unique'],
        tweak: (s) => {
          s.loop_control.max_iterations = true;
          s.gates.plan_gate.max_revisions = false;
          s.loop_control.no_progress.max_stalled_iterations = true;
        },
      }),
    );
    const { code } = await runLoopIn(loop);
    // One stalled round is enough (max_stalled_iterations 1), checked before the revision cap.
    expect(code).toBe(1);
    expect(loop.state()).toMatchObject({ status: 'failed', failure: 'no_progress_detected' });
    expect(loop.calls('judge')).toBe(1);
  });

  it('reads the Infinity and NaN that Python writes for .inf and .nan (budget: {usd: .inf} compiles in both)', async () => {
    const loop = track(makeLoop());
    const text = readFileSync(loop.specPath, 'utf8');
    expect(text).toContain('"wall_clock_min": 30');
    // What json.dumps writes for `wall_clock_min: .inf` and `usd: .nan`.
    writeFileSync(loop.specPath, text.replace('"wall_clock_min": 30', '"usd": NaN,\n      "wall_clock_min": Infinity'));
    const { code, err } = await runLoopIn(loop);
    expect(err).not.toContain('Could not parse JSON');
    expect(code).toBe(0);
  });

  it('runs one iteration for max_iterations: true and gives a gate with max_revisions: true one revision', async () => {
    const loop = track(
      makeLoop({
        judge: ['--verdicts', 'revise,pass,revise'],
        tweak: (s) => {
          s.loop_control.max_iterations = true;
          s.gates.plan_gate.max_revisions = true;
          s.gates.delivery_gate.max_revisions = false;
        },
      }),
    );
    const { code } = await runLoopIn(loop);
    expect(code).toBe(1);
    expect(loop.state()).toMatchObject({ status: 'failed', failure: 'max_iterations_reached', iteration: 1 });
    expect(loop.calls('judge')).toBe(3);
  });
});

describe('context files behind links', () => {
  it('never reads a context file whose link leads to a flagged file (layer 1 judges where it resolves)', async () => {
    const loop = track(
      makeLoop({
        tweak: (s) => {
          s.goal.context_sources = [{ file: 'notes.md' }, { file: 'inputs/dump.md' }];
        },
      }),
    );
    // Too large for the scrub (a blind spot), so only layer 1 can keep it out of the host's prompt.
    mkdirSync(join(loop.dir, 'secrets'));
    writeFileSync(join(loop.dir, 'secrets', 'dump.txt'), `DUMP-SECRET-4e1f\n${'x'.repeat(1_100_000)}\n`);
    mkdirSync(join(loop.dir, 'inputs'));
    symlinkSync(join('..', 'secrets', 'dump.txt'), join(loop.dir, 'inputs', 'dump.md'));
    const { code, events } = await runLoopIn(loop);
    expect(code).toBe(0);
    const context = readFileSync(loop.ws('context.md'), 'utf8');
    // Booleans, not the texts: a failure would print a megabyte.
    expect(context.includes('## Context source 2: inputs/dump.md\n[redacted]\n')).toBe(true);
    expect(context.includes('DUMP-SECRET-4e1f')).toBe(false);
    for (const p of [...loop.prompts('host'), ...loop.prompts('judge')]) expect(p.includes('DUMP-SECRET-4e1f')).toBe(false);
    expect(loop.log()).toContain('`context` {"source": "inputs/dump.md", "status": "redacted"}');
    expect(events.find((e) => e.type === 'loop.context' && e.source === 'inputs/dump.md')).toMatchObject({ status: 'redacted' });
    expect(existsSync(loop.ws('plan.md'))).toBe(true);
  });

  it('still withholds a flagged name that links to an ordinary file (the safer of the two readings)', async () => {
    const loop = track(makeLoop({ tweak: (s) => (s.goal.context_sources = [{ file: 'secrets/notes-link.md' }]) }));
    mkdirSync(join(loop.dir, 'secrets'));
    symlinkSync(join('..', 'notes.md'), join(loop.dir, 'secrets', 'notes-link.md'));
    const { code } = await runLoopIn(loop);
    expect(code).toBe(0);
    expect(readFileSync(loop.ws('context.md'), 'utf8')).toContain('## Context source 1: secrets/notes-link.md\n[redacted]\n');
  });
});
