// A model run saved in an event stream, read back for `--agent recorded`: its turns in order, and what
// each of its tool calls returned, so a re-run can say where the world answered differently.
import { InputError, UsageError } from '@quickloop/cli-kit';
import type { StopReasonName } from '@quickloop/events';

export type RecordedBlock = { type: 'text'; text: string } | { type: 'tool_call'; id: string; name: string; input: Record<string, unknown> };

export interface RecordedTurn {
  turn: number;
  model: string;
  stop: 'end_turn' | 'tool_use' | 'max_tokens' | 'refusal' | 'context_overflow' | 'other';
  blocks: RecordedBlock[];
  refusal?: { category?: string; explanation?: string };
}

/** What a recorded tool call returned, in the terms both runs can be compared in (the loop's ToolOutcome without the page text). */
export type RecordedOutcome =
  | { kind: 'bash'; exitCode: number; output: string; timedOut: boolean }
  | { kind: 'read_docs'; ok: boolean; status?: number; sha256?: string; text?: string }
  | { kind: 'error'; error: string };

export interface RecordedRun {
  runId: string;
  task: string;
  agent: string;
  turns: RecordedTurn[];
  /** By the model's call id. A call with no result in the stream (the run was cut short) is absent. */
  results: Map<string, RecordedOutcome>;
  /** How the recorded agent stopped, when the stream has its agent.completed. */
  completed?: { stopReason: StopReasonName; detail: string; errorKind?: string };
}

export interface Recording {
  file: string;
  runs: RecordedRun[];
}

const STOPS = new Set(['end_turn', 'tool_use', 'max_tokens', 'refusal', 'context_overflow', 'other']);

/**
 * Reads every model run of a saved stream. Lines that are not events are an error naming the line
 * (a truncated file must not replay as a shorter run); events of other types are ignored.
 */
export function parseRecording(file: string, text: string): Recording {
  const runs = new Map<string, RecordedRun>();
  const tasks = new Map<string, string>();
  const agents = new Map<string, string>();
  /** tool.call id → [run id, model call id, tool]: results point at the call event, not the model's id. */
  const calls = new Map<string, [string, string, string]>();
  const lines = text.split('\n');
  const where = (i: number) => `${file}:${i + 1}`;
  for (const [i, raw] of lines.entries()) {
    if (raw.trim() === '') continue;
    let e: Record<string, unknown>;
    try {
      e = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      throw new InputError(`${where(i)}: not a JSON event${i === lines.length - 1 ? ' (the file ends mid-line: was it cut short?)' : ''}`);
    }
    if (e === null || typeof e !== 'object' || Array.isArray(e) || typeof e.type !== 'string' || typeof e.run_id !== 'string') {
      throw new InputError(`${where(i)}: not an event (an object with type and run_id)`);
    }
    const runId = e.run_id;
    const get = (): RecordedRun => {
      let r = runs.get(runId);
      if (!r) {
        r = { runId, task: tasks.get(runId) ?? '', agent: agents.get(runId) ?? '', turns: [], results: new Map() };
        runs.set(runId, r);
      }
      return r;
    };
    switch (e.type) {
      case 'task.loaded': {
        const name = (e.task as { name?: unknown } | undefined)?.name;
        if (typeof name === 'string') tasks.set(runId, name);
        break;
      }
      case 'agent.started':
        if (typeof e.agent === 'string') agents.set(runId, e.agent);
        break;
      case 'agent.turn': {
        const turn = e.turn;
        if (!Number.isInteger(turn) || typeof e.stop !== 'string' || !STOPS.has(e.stop) || !Array.isArray(e.blocks)) {
          throw new InputError(`${where(i)}: agent.turn needs turn, stop and blocks`);
        }
        const blocks = (e.blocks as unknown[]).map((b, j) => block(b, `${where(i)}: agent.turn blocks[${j}]`));
        const r = get();
        const expected = r.turns.length + 1;
        if (turn !== expected) throw new InputError(`${where(i)}: agent.turn ${String(turn)} of run ${runId} follows turn ${expected - 1}: the turns are out of order or one is missing`);
        r.turns.push({
          turn,
          model: typeof e.model === 'string' ? e.model : '',
          stop: e.stop as RecordedTurn['stop'],
          blocks,
          ...(e.refusal !== undefined && typeof e.refusal === 'object' && e.refusal !== null ? { refusal: e.refusal as RecordedTurn['refusal'] } : {}),
        });
        break;
      }
      case 'tool.call':
        if (typeof e.id === 'string' && typeof e.call_id === 'string') calls.set(e.id, [runId, e.call_id, String(e.tool)]);
        break;
      case 'tool.result':
      case 'docs.read':
      case 'docs.error':
      case 'tool.error': {
        const call = typeof e.parent_id === 'string' ? calls.get(e.parent_id) : undefined;
        if (!call || call[0] !== runId) break;
        const outcome = outcomeOf(e);
        if (outcome) get().results.set(call[1], outcome);
        break;
      }
      case 'agent.completed':
        if (typeof e.stop_reason === 'string') get().completed = { stopReason: e.stop_reason as StopReasonName, detail: String(e.detail ?? ''), ...(typeof e.error_kind === 'string' ? { errorKind: e.error_kind } : {}) };
        break;
    }
  }
  const found = [...runs.values()].filter((r) => r.turns.length > 0);
  for (const r of found) {
    r.task ||= tasks.get(r.runId) ?? '';
    r.agent ||= agents.get(r.runId) ?? '';
  }
  return { file, runs: found };
}

function block(b: unknown, at: string): RecordedBlock {
  const o = b as Record<string, unknown> | null;
  if (o && o.type === 'text' && typeof o.text === 'string') return { type: 'text', text: o.text };
  if (o && o.type === 'tool_call' && typeof o.id === 'string' && typeof o.name === 'string' && o.input !== null && typeof o.input === 'object' && !Array.isArray(o.input)) {
    return { type: 'tool_call', id: o.id, name: o.name, input: o.input as Record<string, unknown> };
  }
  throw new InputError(`${at}: neither a text block nor a tool_call with id, name and an input object`);
}

function outcomeOf(e: Record<string, unknown>): RecordedOutcome | undefined {
  switch (e.type) {
    case 'tool.result':
      return { kind: 'bash', exitCode: Number(e.exit_code), output: String(e.output ?? ''), timedOut: e.timed_out === true };
    case 'docs.read':
      return { kind: 'read_docs', ok: true, ...(typeof e.status === 'number' ? { status: e.status } : {}), ...(typeof e.sha256 === 'string' ? { sha256: e.sha256 } : {}) };
    case 'docs.error':
      return { kind: 'read_docs', ok: false, ...(typeof e.status === 'number' ? { status: e.status } : {}) };
    case 'tool.error':
      return { kind: 'error', error: String(e.error ?? '') };
  }
  return undefined;
}

/** A --from stream's model runs, or the usage error a file that is no recording gets. */
export function loadRecording(o: { text: string; file: string }): Recording {
  let recording: Recording;
  try {
    recording = parseRecording(o.file, o.text);
  } catch (error) {
    throw new UsageError(`--from ${(error as Error).message}`);
  }
  if (recording.runs.length === 0) throw new UsageError(`--from ${o.file}: no model turns in it (agent.turn events): was it a replay run, or an older stream?`);
  return recording;
}

/**
 * The recorded run to re-drive for a task: the one named by `runId`, else the only recorded run of
 * that task name. Anything else is ambiguous (or a different task) and says so.
 */
export function pickRun(rec: Recording, taskName: string, runId?: string): RecordedRun {
  if (runId !== undefined) {
    const r = rec.runs.find((x) => x.runId === runId);
    if (!r) throw new InputError(`${rec.file}: no model run with run_id ${runId} (runs with turns: ${names(rec)})`);
    return r;
  }
  const same = rec.runs.filter((r) => r.task === taskName);
  if (same.length === 1) return same[0] as RecordedRun;
  if (same.length > 1) throw new InputError(`${rec.file}: ${same.length} model runs of task '${taskName}'; choose one with --from-run (${same.map((r) => r.runId).join(', ')})`);
  throw new InputError(`${rec.file}: no model run of task '${taskName}' (runs with turns: ${names(rec)}); choose one with --from-run`);
}

const names = (rec: Recording) => (rec.runs.length === 0 ? 'none' : rec.runs.map((r) => `${r.runId} (${r.task || 'unnamed'})`).join(', '));

export interface Divergence {
  field: 'exit_code' | 'output' | 'timed_out' | 'docs' | 'error';
  recorded: string;
  actual: string;
}

/** Where this run's tool result differs from the recording's, field by field; empty when they agree. */
export function diverges(recorded: RecordedOutcome | undefined, actual: RecordedOutcome): Divergence[] {
  if (recorded === undefined) return [{ field: 'error', recorded: 'no result was recorded for this call (the recorded run ended during it)', actual: describe(actual) }];
  if (recorded.kind !== actual.kind) return [{ field: 'error', recorded: describe(recorded), actual: describe(actual) }];
  const out: Divergence[] = [];
  if (recorded.kind === 'bash' && actual.kind === 'bash') {
    if (recorded.exitCode !== actual.exitCode) out.push({ field: 'exit_code', recorded: String(recorded.exitCode), actual: String(actual.exitCode) });
    if (recorded.timedOut !== actual.timedOut) out.push({ field: 'timed_out', recorded: String(recorded.timedOut), actual: String(actual.timedOut) });
    if (recorded.output !== actual.output) out.push({ field: 'output', recorded: cut(recorded.output), actual: cut(actual.output) });
  } else if (recorded.kind === 'read_docs' && actual.kind === 'read_docs') {
    if (recorded.ok !== actual.ok || recorded.status !== actual.status || recorded.sha256 !== actual.sha256) out.push({ field: 'docs', recorded: describe(recorded), actual: describe(actual) });
  } else if (recorded.kind === 'error' && actual.kind === 'error') {
    if (recorded.error !== actual.error) out.push({ field: 'error', recorded: cut(recorded.error), actual: cut(actual.error) });
  }
  return out;
}

function describe(o: RecordedOutcome): string {
  switch (o.kind) {
    case 'bash':
      return `bash exit ${o.exitCode}${o.timedOut ? ' (timed out)' : ''}`;
    case 'read_docs':
      return o.ok ? `page read (status ${o.status ?? '?'}, sha256 ${o.sha256 ?? '?'})` : `page not read${o.status !== undefined ? ` (status ${o.status})` : ''}`;
    case 'error':
      return `tool error: ${cut(o.error)}`;
  }
}

const LIMIT = 2000;

/** Head and tail of a long value, as the event's fields promise. */
export function cut(s: string): string {
  if (s.length <= LIMIT) return s;
  const half = LIMIT / 2 - 20;
  return `${s.slice(0, half)}\n[… ${s.length - 2 * half} characters …]\n${s.slice(-half)}`;
}
