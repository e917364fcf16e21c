// The normalised model vocabulary every adapter speaks: five token counters, error kinds, the turn interface.
import type { ModelError } from './errors.js';

/** Token counts; `input` excludes cache reads and writes, `output` includes `reasoning`. */
export interface Usage {
  input: number;
  cache_read: number;
  cache_write: number;
  output: number;
  reasoning: number;
  /**
   * Of `cache_write`, the tokens written to a cache that lives an hour (Anthropic's `ttl: '1h'`), which
   * the vendor bills dearer than its five-minute writes; absent: none, or not told apart.
   */
  cache_write_1h?: number;
}

/**
 * Why a model call did not give a usable answer.
 * `infra`: the provider or network (rate limits, 5xx, overload, timeouts) — not the prompt's fault.
 * `config`: our setup (missing binary, bad key, bad argv, unknown model).
 * `context_overflow`: the prompt is too long for the model.
 * `harness`: output we cannot read (malformed JSON, output over the cap) — a bug to look at.
 * `refusal`: the model declined.
 */
export type ErrorKind = 'infra' | 'config' | 'context_overflow' | 'harness' | 'refusal';

export type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_call'; id: string; name: string; input: Record<string, unknown>; invalid?: string }
  | { type: 'tool_result'; id: string; name: string; output: string; is_error?: boolean };

export interface Message {
  role: 'user' | 'assistant';
  blocks: Block[];
  /** The provider's own items for an assistant turn, replayed verbatim (reasoning items, thinking blocks). */
  native?: unknown;
}

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the tool's input object. */
  schema: Record<string, unknown>;
}

export interface TurnRequest {
  model: string;
  system: string;
  messages: Message[];
  tools?: ToolSpec[];
  maxTokens: number;
  signal?: AbortSignal;
  /** Stream the response (the result is the same; streaming keeps long turns under proxy idle limits). */
  stream?: boolean;
  /** A `performance.now()` value: no retry wait that would end past it is started (the caller aborts `signal` at it). */
  deadline?: number;
  /** Called before each retry wait with the attempt that failed (the agent emits an event per retry). */
  onRetry?: (failed: { attempt: number; waitMs: number; error: ModelError }) => void | Promise<void>;
}

/** `pause`: the provider paused a long turn (Anthropic's pause_turn); sending it back as it is continues it. */
export type Stop = 'end_turn' | 'tool_use' | 'max_tokens' | 'refusal' | 'context_overflow' | 'pause' | 'other';

export interface TurnResult {
  blocks: Block[];
  /** The model that served the turn, as the provider reported it. */
  model?: string;
  stop: Stop;
  usage: Usage;
  /** Set when `stop` is `refusal`: the provider's category and explanation, when it gives them. */
  refusal?: { category?: string; explanation?: string };
  requestId?: string;
  /** Attempts made, retries included. */
  attempts: number;
  /**
   * What the attempts that failed before this answer were billed, as far as their responses said (a
   * stream that reported usage, then failed or was cut); not in `usage`. Absent when none said anything.
   */
  failedUsage?: Usage;
  durationMs: number;
  /** The assistant turn as the provider returned it, to replay in the next request. */
  native?: unknown;
}

/** One model turn, whatever the vendor. Adapters never run tools; the agent loop does. */
export interface ModelAdapter {
  readonly name: string;
  turn(request: TurnRequest): Promise<TurnResult>;
}

export const ZERO_USAGE: Readonly<Usage> = Object.freeze({ input: 0, cache_read: 0, cache_write: 0, output: 0, reasoning: 0 });

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input: a.input + b.input,
    cache_read: a.cache_read + b.cache_read,
    cache_write: a.cache_write + b.cache_write,
    output: a.output + b.output,
    reasoning: a.reasoning + b.reasoning,
  };
}

/** Providers report overlapping totals; a negative or missing count becomes 0 rather than poisoning a budget. */
export function usage(parts: Partial<Record<keyof Usage, unknown>>): Usage {
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.round(v) : 0);
  return { input: n(parts.input), cache_read: n(parts.cache_read), cache_write: n(parts.cache_write), output: n(parts.output), reasoning: n(parts.reasoning) };
}

/**
 * A tool call from arguments the model wrote as JSON text. Arguments that are not a JSON object are
 * the model's mistake, not a failed turn: the call gets `{}` and `invalid` says why, so the agent
 * answers it with a tool error and the model can try again.
 */
export function toolCall(id: string, name: string, args: unknown): Extract<Block, { type: 'tool_call' }> {
  let input: unknown = args;
  // Some compatible servers send the arguments already parsed, which the types do not allow for: read as given.
  if (typeof args === 'string' || args === undefined || args === null) {
    try {
      input = JSON.parse(args || '{}');
    } catch {
      return { type: 'tool_call', id, name, input: {}, invalid: `the arguments are not JSON: ${String(args).slice(0, 80)}` };
    }
  }
  if (!input || typeof input !== 'object' || Array.isArray(input)) return { type: 'tool_call', id, name, input: {}, invalid: 'the arguments are not a JSON object' };
  return { type: 'tool_call', id, name, input: input as Record<string, unknown> };
}
