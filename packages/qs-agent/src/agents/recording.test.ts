import { describe, expect, it } from 'vitest';
import { cut, diverges, parseRecording, pickRun } from './recording.js';

const line = (o: Record<string, unknown>) => JSON.stringify({ v: 1, ts: '2026-01-01T00:00:00.000Z', stage: 'qs-agent', ...o });
const usage = { input_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0, output_tokens: 1, reasoning_tokens: 0 };

function stream(runId = 'r1', task = 'greeter') {
  return [
    line({ type: 'task.loaded', run_id: runId, task: { name: task } }),
    line({ type: 'agent.started', run_id: runId, agent: 'anthropic', task }),
    line({ type: 'agent.turn', run_id: runId, id: `${runId}-t1`, turn: 1, model: 'm', stop: 'tool_use', blocks: [{ type: 'text', text: 'reading' }, { type: 'tool_call', id: 'a', name: 'read_docs', input: { url: 'https://d.test/' } }], usage, usd: null, duration_ms: 1, request_id: null, attempts: 1 }),
    line({ type: 'tool.call', run_id: runId, id: `${runId}-c1`, parent_id: `${runId}-t1`, tool: 'read_docs', url: 'https://d.test/', call_id: 'a' }),
    line({ type: 'docs.read', run_id: runId, id: `${runId}-d1`, parent_id: `${runId}-c1`, url: 'https://d.test/', status: 200, from: 'fetch', chars: 3, original_chars: 3, truncated: false, sha256: 'a'.repeat(64) }),
    line({ type: 'agent.turn', run_id: runId, id: `${runId}-t2`, turn: 2, model: 'm', stop: 'tool_use', blocks: [{ type: 'tool_call', id: 'b', name: 'bash', input: { command: 'echo hi' } }, { type: 'tool_call', id: 'c', name: 'python', input: {} }], usage, usd: null, duration_ms: 1, request_id: null, attempts: 1 }),
    line({ type: 'tool.call', run_id: runId, id: `${runId}-c2`, parent_id: `${runId}-t2`, tool: 'bash', command: 'echo hi', call_id: 'b' }),
    line({ type: 'tool.result', run_id: runId, id: `${runId}-r2`, parent_id: `${runId}-c2`, tool: 'bash', exit_code: 0, timed_out: false, duration_ms: 1, output: 'hi\n', original_chars: 3, truncated: false }),
    line({ type: 'tool.call', run_id: runId, id: `${runId}-c3`, parent_id: `${runId}-t2`, tool: 'python', call_id: 'c', input: {} }),
    line({ type: 'tool.error', run_id: runId, id: `${runId}-e3`, parent_id: `${runId}-c3`, tool: 'python', error: 'unknown tool' }),
    line({ type: 'agent.turn', run_id: runId, id: `${runId}-t3`, turn: 3, model: 'm', stop: 'end_turn', blocks: [{ type: 'text', text: 'done' }], usage, usd: null, duration_ms: 1, request_id: null, attempts: 1 }),
    line({ type: 'agent.completed', run_id: runId, agent: 'anthropic', stop_reason: 'completed', detail: 'done', commands: 1, duration_ms: 3 }),
  ];
}

describe('parseRecording', () => {
  it('reads the turns in order and each call\'s result by the model\'s call id', () => {
    const rec = parseRecording('run.ndjson', stream().join('\n') + '\n');
    expect(rec.runs).toHaveLength(1);
    const r = rec.runs[0]!;
    expect(r).toMatchObject({ runId: 'r1', task: 'greeter', agent: 'anthropic', completed: { stopReason: 'completed', detail: 'done' } });
    expect(r.turns.map((t) => [t.turn, t.stop, t.blocks.length])).toEqual([[1, 'tool_use', 2], [2, 'tool_use', 2], [3, 'end_turn', 1]]);
    expect(r.results.get('a')).toEqual({ kind: 'read_docs', ok: true, status: 200, sha256: 'a'.repeat(64) });
    expect(r.results.get('b')).toEqual({ kind: 'bash', exitCode: 0, output: 'hi\n', timedOut: false });
    expect(r.results.get('c')).toEqual({ kind: 'error', error: 'unknown tool' });
  });

  it('keeps interleaved runs apart and leaves out runs without model turns', () => {
    const a = stream('r1', 'one');
    const b = stream('r2', 'two');
    const replayRun = [line({ type: 'task.loaded', run_id: 'r3', task: { name: 'three' } }), line({ type: 'agent.started', run_id: 'r3', agent: 'replay', task: 'three' })];
    const mixed = a.flatMap((l, i) => [l, b[i]!]).concat(replayRun);
    const rec = parseRecording('mixed.ndjson', mixed.join('\n'));
    expect(rec.runs.map((r) => [r.runId, r.task, r.turns.length, r.results.size])).toEqual([['r1', 'one', 3, 3], ['r2', 'two', 3, 3]]);
  });

  it('refuses what would replay as a different run, naming the line', () => {
    const s = stream();
    expect(() => parseRecording('f.ndjson', s.slice(0, 5).join('\n') + '\n{"type":"agent.tu')).toThrow(/^f\.ndjson:6: not a JSON event \(the file ends mid-line/);
    const skipped = s.filter((l) => !l.includes('"turn":2'));
    expect(() => parseRecording('f.ndjson', skipped.join('\n'))).toThrow(/f\.ndjson:\d+: agent\.turn 3 of run r1 follows turn 1/);
    const badBlock = s.map((l) => l.replace('{"type":"text","text":"done"}', '{"type":"image"}'));
    expect(() => parseRecording('f.ndjson', badBlock.join('\n'))).toThrow(/agent\.turn blocks\[0\]: neither a text block nor a tool_call/);
    expect(() => parseRecording('f.ndjson', '[1,2]\n')).toThrow(/^f\.ndjson:1: not an event/);
  });
});

describe('pickRun', () => {
  const rec = parseRecording('f.ndjson', [...stream('r1', 'one'), ...stream('r2', 'two'), ...stream('r3', 'two')].join('\n'));
  it('takes the only run of the task, or the one named', () => {
    expect(pickRun(rec, 'one').runId).toBe('r1');
    expect(pickRun(rec, 'two', 'r3').runId).toBe('r3');
  });
  it('says what is there when the choice is ambiguous or missing', () => {
    expect(() => pickRun(rec, 'two')).toThrow("f.ndjson: 2 model runs of task 'two'; choose one with --from-run (r2, r3)");
    expect(() => pickRun(rec, 'renamed')).toThrow("f.ndjson: no model run of task 'renamed' (runs with turns: r1 (one), r2 (two), r3 (two)); choose one with --from-run");
    expect(() => pickRun(rec, 'one', 'r9')).toThrow('f.ndjson: no model run with run_id r9');
  });
});

describe('diverges', () => {
  const bash = (exitCode: number, output: string, timedOut = false) => ({ kind: 'bash' as const, exitCode, output, timedOut });
  it('is empty when the results agree', () => {
    expect(diverges(bash(0, 'hi\n'), bash(0, 'hi\n'))).toEqual([]);
    expect(diverges({ kind: 'read_docs', ok: true, status: 200, sha256: 'x' }, { kind: 'read_docs', ok: true, status: 200, sha256: 'x', text: 'page' })).toEqual([]);
  });
  it('names each field that differs', () => {
    expect(diverges(bash(0, 'hi\n'), bash(1, 'npm ERR!\n'))).toEqual([
      { field: 'exit_code', recorded: '0', actual: '1' },
      { field: 'output', recorded: 'hi\n', actual: 'npm ERR!\n' },
    ]);
    expect(diverges(bash(0, ''), bash(124, '', true)).map((d) => d.field)).toEqual(['exit_code', 'timed_out']);
    expect(diverges({ kind: 'read_docs', ok: true, status: 200, sha256: 'x' }, { kind: 'read_docs', ok: false, status: 404 })).toEqual([
      { field: 'docs', recorded: 'page read (status 200, sha256 x)', actual: 'page not read (status 404)' },
    ]);
    expect(diverges({ kind: 'error', error: 'unknown tool' }, bash(0, ''))).toEqual([{ field: 'error', recorded: 'tool error: unknown tool', actual: 'bash exit 0' }]);
    expect(diverges(undefined, bash(0, ''))[0]).toMatchObject({ field: 'error', recorded: expect.stringContaining('no result was recorded') });
  });
  it('cuts long values head and tail', () => {
    const long = `${'a'.repeat(5000)}${'z'.repeat(5000)}`;
    const c = cut(long);
    expect(c.length).toBeLessThan(2100);
    expect(c.startsWith('aaa')).toBe(true);
    expect(c.endsWith('zzz')).toBe(true);
    expect(c).toContain('characters …]');
  });
});
