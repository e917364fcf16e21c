// loop-gate as a stage: exit 0 pass / 1 revise / 2 error, events out, artifacts from args or from stdin events.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { memoryIo } from '@quickloop/cli-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { run, type RunOptions } from '../src/run.js';
import { BIN, gateLoop } from './loop.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});
const loopOf = (...a: Parameters<typeof gateLoop>) => {
  const l = gateLoop(...a);
  cleanups.push(l.cleanup);
  return l;
};
const base = (dir: string, o: Partial<RunOptions> = {}): RunOptions => ({
  spec: join(dir, 'loop.resolved.json'),
  gate: 'delivery',
  artifact: join(dir, 'loop-workspace', 'delivery-2.md'),
  round: 1,
  revision: 0,
  consent: ['judge-1'],
  retries: 0,
  retryDelayMs: 0,
  level: 'normal',
  ...o,
});
const parse = (out: string) => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);

describe('loop-gate', () => {
  it('passes: checks with {artifact}/{n}, the reviewer, then the judge with goal, DoD and check results', async () => {
    const l = loopOf(['--verdicts', 'pass']);
    const io = memoryIo();
    const code = await run(base(l.dir), io);
    expect(code).toBe(0);
    const events = parse(io.out());
    expect(events.map((e) => e.type)).toEqual(['gate.started', 'gate.check', 'model.call', 'model.result', 'review.completed', 'consent.answered', 'model.call', 'model.result', 'gate.verdict']);
    expect(events.find((e) => e.type === 'gate.check')).toMatchObject({ passed: true, argv: expect.arrayContaining(['loop-workspace/delivery-2.md', '2']) });
    expect(events.at(-1)).toMatchObject({ verdict: 'pass', source: 'judge-1', failures: [], review: null });
    const judge = l.prompt('judge', 1);
    expect(judge).toContain('Write a haiku.');
    expect(judge).toContain('Three lines.');
    expect(judge).toContain('"id":"names-it","type":"programmatic","passed":true');
    expect(judge).toContain('Reviewer notes from reviewer-1');
  });

  it("passes a judge's pass that lists blocking issues, as Looper does, but says so: a warning on stderr and in the verdict event", async () => {
    const l = loopOf(['--verdicts', 'pass-with-issues']);
    const io = memoryIo();
    expect(await run(base(l.dir), io)).toBe(0);
    expect(parse(io.out()).at(-1)).toMatchObject({ type: 'gate.verdict', verdict: 'pass', failures: [], warnings: ['pass_with_blocking_issues'] });
    expect(io.err()).toContain("warning: judge-1 passed delivery_gate with 1 blocking issue listed (the plan has no milestones); passed, as its verdict says");
  });

  it('revises on malformed judge output (exit 1) and writes the review', async () => {
    const l = loopOf(['--verdicts', 'malformed']);
    const io = memoryIo();
    const code = await run(base(l.dir, { review: join(l.dir, 'review.md') }), io);
    expect(code).toBe(1);
    expect(parse(io.out()).at(-1)).toMatchObject({ type: 'gate.verdict', verdict: 'revise', warnings: ['unparseable_judge_output'], review: 'review.md' });
    expect(readFileSync(join(l.dir, 'review.md'), 'utf8')).toContain('- Judge output was not parseable JSON.');
    expect(io.err()).toContain('not parseable JSON; treated as revise');
  });

  it('skips the judge when a check fails', async () => {
    const l = loopOf(['--verdicts', 'pass'], (s) => (s.criteria_by_id['names-it'].contains = 'something else'));
    const io = memoryIo();
    expect(await run(base(l.dir), io)).toBe(1);
    expect(l.calls('judge')).toBe(0);
    expect(parse(io.out()).at(-1)).toMatchObject({ source: 'checks', failures: ['Programmatic check failed: names-it'] });
    // stderr's last line names what the check said, and the review to open, as the terminal view does.
    const review = join(l.dir, 'review.md');
    const again = memoryIo({ env: { ...process.env, NO_COLOR: '1' } });
    expect(await run(base(l.dir, { review }), again)).toBe(1);
    expect(again.err().trimEnd().split('\n').at(-1)).toBe(`delivery_gate: revise (Programmatic check failed: names-it (loop-workspace/delivery-2.md 2)) (see review.md)`);
  });

  it('refuses to send without consent when stdin is closed (exit 2, judge never called)', async () => {
    const l = loopOf(['--verdicts', 'pass']);
    const io = memoryIo({ stdin: '' });
    expect(await run(base(l.dir, { consent: [] }), io)).toBe(2);
    expect(l.calls('judge')).toBe(0);
    expect(io.err()).toContain('consent for judge-1 refused');
  });

  it('reports a round whose human criterion meets end of input as blocked (gate.verdict, exit 2), as loop-run ends it', async () => {
    const l = loopOf(['--verdicts', 'pass'], (s) => {
      s.criteria_by_id.signoff = { id: 'signoff', type: 'human', prompt: 'Does it read well?' };
      s.gates.delivery_gate.criteria = ['names-it', 'signoff'];
    });
    const io = memoryIo({ stdin: '' });
    expect(await run(base(l.dir, { review: join(l.dir, 'review.md') }), io)).toBe(2);
    const events = parse(io.out());
    expect(events.at(-1)).toMatchObject({
      type: 'gate.verdict',
      gate: 'delivery_gate',
      round: 1,
      verdict: 'blocked',
      source: 'human',
      failures: ['interactive_input_required:human criterion signoff'],
      warnings: [],
      review: null,
    });
    // Nothing was decided: no reviewer or judge was asked, no review written.
    expect(l.calls('judge')).toBe(0);
    expect(existsSync(join(l.dir, 'review.md'))).toBe(false);
    expect(io.err()).toContain('interactive input required for human criterion signoff');
  });

  it('reports a human verdict source meeting end of input as blocked too', async () => {
    const l = loopOf(['--verdicts', 'pass'], (s) => (s.gates.delivery_gate.verdict_source = 'human'));
    const io = memoryIo({ stdin: '' });
    expect(await run(base(l.dir), io)).toBe(2);
    expect(parse(io.out()).at(-1)).toMatchObject({ type: 'gate.verdict', verdict: 'blocked', source: 'human', failures: ['interactive_input_required:human verdict on delivery_gate'] });
  });

  it('refuses --consent naming no council member before anything runs (a typo is not consent)', async () => {
    const l = loopOf(['--verdicts', 'pass']);
    await expect(run(base(l.dir, { consent: ['judge'] }), memoryIo({ stdin: '' }))).rejects.toThrow(/--consent judge names no council member \(known: host, judge-1/);
    expect(l.calls('judge')).toBe(0);
  });

  it('gates artifact.written events from stdin, passing every event through unchanged', async () => {
    const l = loopOf(['--verdicts', 'revise']);
    const upstream = [
      { v: 1, type: 'artifact.written', ts: '2026-01-01T00:00:00.000Z', run_id: 'r-9', stage: 'loop-run', path: 'loop-workspace/delivery-2.md', phase: 'delivery', iteration: 2 },
      { v: 1, type: 'some.other', ts: '2026-01-01T00:00:01.000Z', run_id: 'r-9', stage: 'x', n: 1 },
    ].map((e) => JSON.stringify(e));
    const io = memoryIo({ stdin: `${upstream.join('\n')}\n` });
    const code = await run(base(l.dir, { artifact: undefined }), io);
    expect(code).toBe(1);
    const lines = io.out().split('\n').filter(Boolean);
    expect(lines[0]).toBe(upstream[0]);
    expect(lines.at(-1)).toBe(upstream[1]);
    expect(parse(io.out()).filter((e) => e.stage === 'loop-gate').every((e) => e.run_id === 'r-9')).toBe(true);
  });

  it('works as a Makefile step: the real bin exits 0 on pass and 1 on revise', () => {
    const pass = loopOf(['--verdicts', 'pass']);
    const r1 = spawnSync(process.execPath, [BIN, 'loop.resolved.json', 'delivery', 'loop-workspace/delivery-2.md', '--consent', 'judge-1'], { cwd: pass.dir, encoding: 'utf8', input: '' });
    expect(r1.status).toBe(0);
    expect(parse(r1.stdout).at(-1)).toMatchObject({ type: 'gate.verdict', verdict: 'pass', stage: 'loop-gate' });
    const revise = loopOf(['--verdicts', 'revise']);
    const r2 = spawnSync(process.execPath, [BIN, 'loop.resolved.json', 'delivery', 'loop-workspace/delivery-2.md'], { cwd: revise.dir, encoding: 'utf8', input: 'yes\n' });
    expect(r2.status).toBe(1);
    expect(r2.stderr).toContain("Type 'yes' to consent");
    const bad = spawnSync(process.execPath, [BIN, 'loop.resolved.json', 'sideways', 'x'], { cwd: revise.dir, encoding: 'utf8', input: '' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('gate must be plan or delivery');
  });

  it('keeps its verdict as the exit code when the reader goes away (| head)', () => {
    const l = loopOf(['--verdicts', 'revise']);
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" loop.resolved.json delivery loop-workspace/delivery-2.md --consent judge-1 2>/dev/null | head -n 1 > /dev/null; echo "exit=\${PIPESTATUS[0]}"`], { cwd: l.dir, encoding: 'utf8' });
    expect(r.stdout.trim()).toBe('exit=1');
  });

  it('a check that outlives its timeout_sec fails with 124, and the judge is not asked', async () => {
    const l = loopOf(['--verdicts', 'pass'], (s) => {
      s.criteria_by_id['names-it'] = { id: 'names-it', type: 'programmatic', check: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], expect: 'exit_zero', timeout_sec: 1 };
    });
    const io = memoryIo();
    expect(await run(base(l.dir), io)).toBe(1);
    expect(parse(io.out()).find((e) => e.type === 'gate.check')).toMatchObject({ passed: false, exit_code: 124 });
    expect(l.calls('judge')).toBe(0);
  });

  it('a check that exits leaving a background child (a server it started) ends with its own exit code', async () => {
    // The child holds the pipes open for 60 s; before, the round waited out timeout_sec and read 124.
    const l = loopOf(['--verdicts', 'pass'], (s) => {
      s.criteria_by_id['names-it'] = { id: 'names-it', type: 'programmatic', check: ['sh', '-c', 'sleep 60 & echo started'], expect: 'exit_zero', timeout_sec: 5 };
    });
    const io = memoryIo();
    expect(await run(base(l.dir), io)).toBe(0);
    expect(parse(io.out()).find((e) => e.type === 'gate.check')).toMatchObject({ criterion: 'names-it', passed: true, exit_code: 0 });
    expect(l.calls('judge')).toBe(1);
  });
});
