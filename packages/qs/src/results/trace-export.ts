// An attempt's stream in quickstarted's own trace format (one `{"ts": epoch seconds, "type": …}` object
// a line), written as `trace.jsonl` beside each attempt's events.ndjson, so that a team that still has
// the prior art's `show` and `report` reads a quickloop sweep folder with them: `report` finds
// `*/*/trace.jsonl`, and `show` renders one. The stream stays the record; this file is derived from it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WireEvent } from '@quickloop/events';
import { foldRun, headChars, type AttemptStream } from './fold.js';

export const TRACE_FILE = 'trace.jsonl';

type Obj = Record<string, unknown>;

/** quickstarted's egress reasons for ours (its proxy names two for a refusal). */
const BLOCKED_REASONS: Record<string, string> = { docs_host: 'docs_host_requires_read_docs' };
/** Our docs.error reasons that are a refusal by policy, which quickstarted traces as docs_read_blocked. */
const DOCS_BLOCKED = new Set(['allow_list', 'credentials', 'robots', 'invalid_url', 'bad_redirect']);
/** How much of the model's final text quickstarted keeps. */
const TRACE_FINAL_TEXT_CHARS = 2000;

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** What the sweep knows of an attempt that its stream may not say: the agent it was given (a run whose setup failed never started one). */
export interface TraceContext {
  agent?: string;
}

/** The agent a stage argv gives qs-agent (`--agent NAME`), for the attempts whose stream never names it. */
export function agentOfArgv(argv: readonly string[]): TraceContext {
  const i = argv.indexOf('--agent');
  const agent = i >= 0 ? argv[i + 1] : undefined;
  return agent === undefined ? {} : { agent };
}

/** The trace's events for one attempt's stream, in order. */
export function quickstartedEvents(stream: AttemptStream, context: TraceContext = {}): Obj[] {
  const run = foldRun(stream);
  const out: Obj[] = [];
  let started = false;
  /** Setup commands already traced, by index: quickstarted writes one `setup` event per command. */
  const setups = new Set<unknown>();
  let turnTokens: Obj = {};
  const add = (e: WireEvent, type: string, data: Obj = {}): void => {
    const t = Date.parse(e.ts);
    out.push({ ts: Number.isFinite(t) ? t / 1000 : 0, type, ...data });
  };
  const start = (e: WireEvent): void => {
    if (started) return;
    started = true;
    add(e, 'run_start', { task: run.task, agent: run.agent ?? context.agent ?? '', backend: run.backend ?? '', enforced: run.enforced === true, image: run.image ?? '', attempt: run.attempt, affordance_policy: run.affordances?.policy ?? null });
  };
  for (const e of stream.events) {
    const p = e as unknown as Obj;
    switch (e.type) {
      case 'sandbox.ready':
      case 'agent.started':
        start(e);
        break;
      case 'setup.completed':
        start(e);
        setups.add(p.index);
        add(e, 'setup', { command: str(p.command), exit_code: num(p.exit_code) ?? null, output: str(p.output) });
        break;
      case 'setup.failed':
        start(e);
        // The command's own setup.completed came first and is its event; this only says the run stops here.
        if (setups.has(p.index)) break;
        setups.add(p.index);
        add(e, 'setup', { command: str(p.command), exit_code: num(p.exit_code) ?? null, output: str(p.output ?? p.detail) });
        break;
      case 'egress.allowed':
        add(e, 'egress_allowed', { host: str(p.host), port: num(p.port) ?? null, method: str(p.method) });
        break;
      case 'egress.blocked':
        add(e, 'egress_blocked', { host: str(p.host), reason: BLOCKED_REASONS[str(p.reason)] ?? 'not_allowlisted', method: str(p.method) });
        break;
      case 'egress.error':
        add(e, 'egress_error', { host: str(p.host), error: str(p.error), method: str(p.method) });
        break;
      case 'agent.turn': {
        const u = (p.usage ?? {}) as Obj;
        turnTokens = { input_tokens: num(u.input_tokens) ?? 0, output_tokens: num(u.output_tokens) ?? 0, cache_write_tokens: num(u.cache_write_tokens) ?? 0, cache_read_tokens: num(u.cache_read_tokens) ?? 0 };
        add(e, 'agent_turn', { turn: num(p.turn) ?? null, stop_reason: str(p.stop) || null, model: str(p.model) || null, ...turnTokens });
        break;
      }
      case 'agent.retry':
        add(e, 'api_retry', { turn: num(p.turn) ?? null, attempt: num(p.attempt) ?? null, sleep: (num(p.wait_ms) ?? 0) / 1000, error: str(p.error) });
        break;
      case 'tool.call':
        start(e);
        if (p.tool === 'bash') add(e, 'tool_call', { tool: 'bash', command: str(p.command) });
        else if (p.tool === 'read_docs') add(e, 'tool_call', { tool: 'read_docs', url: str(p.url ?? (p.input as Obj | undefined)?.url) });
        break;
      case 'tool.result':
        if (p.tool === 'bash') add(e, 'tool_result', { tool: 'bash', exit_code: num(p.exit_code) ?? null, duration: (num(p.duration_ms) ?? 0) / 1000, timed_out: p.timed_out === true, output: str(p.output) });
        break;
      case 'docs.read':
        add(e, 'docs_read', { url: str(p.url), chars: num(p.chars) ?? 0, original_chars: num(p.original_chars) ?? num(p.chars) ?? 0, truncated: p.truncated === true, from_cache: p.from === 'cache', content_hash: str(p.sha256) || null });
        if (typeof p.resolved_to === 'string' && p.resolved_to !== p.url) add(e, 'docs_redirect_followed', { requested: str(p.url), resolved_to: p.resolved_to });
        break;
      case 'docs.error':
        if (p.reason === 'affordance_withheld') add(e, 'affordance_withheld', { url: str(p.url) });
        else if (DOCS_BLOCKED.has(str(p.reason))) add(e, 'docs_read_blocked', { url: str(p.url), reason: str(p.reason) });
        else add(e, 'docs_read_error', { url: str(p.url), error: str(p.error) });
        break;
      case 'docs.affordances': {
        start(e);
        // The fold keeps the first probe, keyed by kind, as quickstarted keys its probe by label.
        const probed = run.affordances;
        if (probed?.found) add(e, 'affordances', { entrypoint: probed.entrypoint ?? str(p.entrypoint), found: probed.found });
        break;
      }
      case 'docs.changed':
        add(e, 'docs_changed', { url: str(p.url), content_hash: str(p.sha256) || null });
        break;
      case 'agent.completed':
        if (typeof p.final_text === 'string' && p.final_text !== '') add(e, 'agent_final', { text: headChars(p.final_text, TRACE_FINAL_TEXT_CHARS) });
        break;
      case 'check.completed':
        add(e, 'success_check', { exit_code: num(p.exit_code) ?? null, passed: p.passed === true, output: str(p.output) });
        break;
      case 'run.completed':
      case 'run.failed':
      case 'run.interrupted':
        if (out.some((x) => x.type === 'run_end')) break;
        start(e);
        add(e, 'run_end', { stop_reason: run.stop_reason ?? (e.type === 'run.interrupted' ? 'interrupted' : 'error'), passed: run.passed, classification: run.classification });
        break;
    }
  }
  return out;
}

/** `trace.jsonl` for one attempt, in its folder `dir` (beside its events.ndjson). Never throws: the stream is the record. */
export function writeQuickstartedTrace(dir: string, stream: AttemptStream, context: TraceContext = {}): void {
  try {
    const events = quickstartedEvents(stream, context);
    if (events.length > 0) writeFileSync(join(dir, TRACE_FILE), events.map((e) => `${JSON.stringify(e)}\n`).join(''));
  } catch {
    // a full disk: the prior art's reader finds no transcript for this attempt, and nothing else is lost
  }
}
