// The Anthropic Messages adapter over @anthropic-ai/sdk: normalised blocks, stops, five counters and refusals.
import Anthropic from '@anthropic-ai/sdk';
import { ModelError } from '../errors.js';
import type { RetryPolicy } from '../retry.js';
import { toolCall, usage, type Block, type Message, type ModelAdapter, type Stop, type TurnRequest, type TurnResult, type Usage } from '../types.js';
import { errorInBody } from './classify.js';
import { sdkClient } from './endpoint.js';
import { anthropicFetch } from './sse-fetch.js';
import { asText, callIdentity, objects, readable, retryingTurn } from './run-turn.js';
import type { LogLine } from './sdk-log.js';

export interface AnthropicAdapterOptions {
  apiKey: string;
  /** The host root; the SDK appends `/v1/messages`. */
  baseURL?: string;
  /** Per request. Explicit, because the SDK refuses long non-streaming calls without one. */
  timeoutMs?: number;
  retry?: RetryPolicy;
  /** Where the SDK's own log lines go (default stderr; never stdout, the event stream). */
  log?: LogLine;
}

type Params = Anthropic.MessageCreateParamsNonStreaming;

function toParams(request: TurnRequest): Params {
  // An empty answer (cut at max_tokens before its first word) is not sent back: the API refuses an
  // assistant message with no content, and consecutive user messages are one turn to it.
  const messages: Anthropic.MessageParam[] = request.messages.map((m) => messageParam(m)).filter((m) => m.role !== 'assistant' || m.content.length > 0);
  // A cache breakpoint on the newest block makes each turn read the previous turn's prefix from cache.
  const last = messages.at(-1);
  if (last && Array.isArray(last.content) && last.content.length > 0) {
    const block = last.content.at(-1) as { cache_control?: unknown };
    block.cache_control = { type: 'ephemeral' };
  }
  const params: Params = {
    model: request.model,
    max_tokens: request.maxTokens,
    system: [{ type: 'text', text: request.system, cache_control: { type: 'ephemeral' } }],
    messages,
  };
  if (request.tools?.length) {
    params.tools = request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.schema as Anthropic.Tool.InputSchema }));
  }
  return params;
}

function messageParam(m: Message): Anthropic.MessageParam {
  if (m.role === 'assistant' && Array.isArray(m.native)) return { role: 'assistant', content: structuredClone(m.native) as Anthropic.ContentBlockParam[] };
  const content: Anthropic.ContentBlockParam[] = m.blocks.map((b) => {
    if (b.type === 'text') return { type: 'text', text: b.text };
    if (b.type === 'tool_call') return { type: 'tool_use', id: b.id, name: b.name, input: b.input };
    return { type: 'tool_result', tool_use_id: b.id, content: b.output, is_error: b.is_error ?? false };
  });
  return { role: m.role, content };
}

const STOPS: Record<string, Stop> = {
  end_turn: 'end_turn',
  stop_sequence: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  refusal: 'refusal',
  model_context_window_exceeded: 'context_overflow',
  pause_turn: 'pause',
};

/** Stops that cut the answer wherever the model was: its last block may be a tool call half written. */
const CUT = new Set(['max_tokens', 'model_context_window_exceeded']);

/** The five counters of a Messages API usage (`input_tokens` already leaves the cache out). */
function usageOf(raw: unknown): Usage {
  const u = (raw ?? {}) as Partial<Anthropic.Usage> & { output_tokens_details?: { reasoning_tokens?: number } | null };
  return usage({ input: u.input_tokens, cache_read: u.cache_read_input_tokens, cache_write: u.cache_creation_input_tokens, output: u.output_tokens, reasoning: u.output_tokens_details?.reasoning_tokens });
}

function toResult(msg: Anthropic.Message, attempts: number, durationMs: number, newId: () => string): TurnResult {
  // A 200 that is not a Messages API body (a proxy's page) reaches here as the SDK's text.
  if (!msg || typeof msg !== 'object' || !Array.isArray(msg.content)) throw new ModelError('harness', 'anthropic: unreadable response: the body is not a message');
  const blocks: Block[] = [];
  // A null where a block should be carries nothing, and would be refused if sent back.
  const content = objects<Anthropic.ContentBlock & Record<string, unknown>>(msg.content);
  const last = content.at(-1);
  for (const b of content) {
    if (b.type === 'text') {
      if (typeof b.text === 'string') blocks.push({ type: 'text', text: b.text });
    } else if (b.type === 'tool_use') {
      // A call needs an id for its result and a name; what is made up goes in the replayed block too, so the two pair.
      Object.assign(b, callIdentity(b.id, b.name, newId));
      // The SDK reads a streamed input that stopped mid-way as what it had (`{"command": "rm -rf bu`
      // becomes `rm -rf bu`): a call the limit cut is no command to run, and the model is told so.
      if (b === last && CUT.has(msg.stop_reason ?? '')) {
        blocks.push({ type: 'tool_call', id: b.id, name: b.name, input: {}, invalid: `the call was cut off at the output limit (stop_reason ${msg.stop_reason}) before it was complete, so it was not run` });
        continue;
      }
      const bad = BAD_INPUT.get(b);
      if (bad !== undefined) {
        blocks.push({ type: 'tool_call', id: b.id, name: b.name, input: {}, invalid: bad });
        continue;
      }
      blocks.push(toolCall(b.id, b.name, b.input ?? {}));
    }
    // Thinking blocks are not text; they travel in `native` to be replayed unchanged.
  }
  const result: TurnResult = {
    blocks,
    stop: STOPS[msg.stop_reason ?? ''] ?? 'other',
    usage: usageOf(msg.usage),
    attempts,
    durationMs,
    native: content,
  };
  const requestId = (msg as { _request_id?: string | null })._request_id;
  if (requestId) result.requestId = requestId;
  if (result.stop === 'refusal') {
    const details = (msg as { stop_details?: { category?: string | null; explanation?: string | null } | null }).stop_details;
    result.refusal = {};
    const category = asText(details?.category);
    const explanation = asText(details?.explanation);
    if (category !== undefined) result.refusal.category = category;
    if (explanation !== undefined) result.refusal.explanation = explanation;
  }
  const served = (msg as { model?: unknown }).model;
  if (typeof served === 'string' && served !== '') result.model = served;
  return result;
}

/** Tool inputs a stream sent that were not a JSON object once whole, and why (the call is not run). */
const BAD_INPUT = new WeakMap<object, string>();

type Json = Record<string, unknown>;

/** A block's streamed `input_json_delta` text as its input: a JSON object, or `{}` and the reason it is none. */
function finishInput(block: Json, text: string): void {
  if (text === '') return;
  try {
    const input = JSON.parse(text) as unknown;
    if (input && typeof input === 'object' && !Array.isArray(input)) {
      block.input = input;
      return;
    }
    BAD_INPUT.set(block, 'the arguments are not a JSON object');
  } catch {
    BAD_INPUT.set(block, `the arguments are not JSON: ${text.slice(0, 80)}`);
  }
  block.input = {};
}

/**
 * A streamed message, read event by event. Not the SDK's MessageStream: it adds each block it is told
 * of to the end of its content and each delta to the block at the delta's index, so blocks whose
 * indexes leave a gap (0, 2) or start out of order lose their deltas (a tool call without its input);
 * and it reads a tool input that is not JSON as whatever part of it parsed, or fails the whole turn.
 * Here each block is kept under the index the API gave it, content in index order; a usage the stream
 * reported (message_start, then message_delta) is handed to `onUsage` as it comes, so an attempt that
 * fails after it is billed for what it said.
 */
async function streamed(client: Anthropic, params: Params, opts: { signal?: AbortSignal }, onUsage: (u: Usage) => void): Promise<Anthropic.Message> {
  const { data, request_id: requestId } = await client.messages.create({ ...params, stream: true }, opts).withResponse();
  const ids = requestId ? { requestId } : {};
  let msg: (Anthropic.Message & { stop_details?: unknown }) | undefined;
  const blocks = new Map<number, Json>();
  const inputs = new Map<number, string>();
  let stopped = false;
  const finish = (index: number): void => {
    const block = blocks.get(index);
    const text = inputs.get(index);
    if (block && text !== undefined) finishInput(block, text);
    inputs.delete(index);
  };
  for await (const event of data as AsyncIterable<{ type: string; [k: string]: any }>) {
    if (event.type === 'message_start') {
      if (msg) continue;
      msg = { ...event.message, content: [], usage: { ...event.message?.usage } };
      (Array.isArray(event.message?.content) ? event.message.content : []).forEach((b: Json, i: number) => blocks.set(i, { ...b }));
      onUsage(usageOf(msg!.usage));
      continue;
    }
    if (!msg) continue;
    if (event.type === 'content_block_start' && Number.isInteger(event.index) && event.content_block && typeof event.content_block === 'object') {
      const block = { ...event.content_block } as Json;
      blocks.set(event.index, block);
      if ('input' in block) inputs.set(event.index, '');
    } else if (event.type === 'content_block_delta') {
      const block = blocks.get(event.index);
      const d = event.delta ?? {};
      if (!block) continue;
      if (d.type === 'text_delta' && block.type === 'text') block.text = `${String(block.text ?? '')}${d.text ?? ''}`;
      else if (d.type === 'citations_delta' && block.type === 'text') block.citations = [...((block.citations as unknown[] | null) ?? []), d.citation];
      else if (d.type === 'input_json_delta' && inputs.has(event.index)) inputs.set(event.index, `${inputs.get(event.index)}${d.partial_json ?? ''}`);
      else if (d.type === 'thinking_delta' && block.type === 'thinking') block.thinking = `${String(block.thinking ?? '')}${d.thinking ?? ''}`;
      else if (d.type === 'signature_delta' && block.type === 'thinking') block.signature = d.signature;
      // A delta type newer than this reader changes nothing it reads.
    } else if (event.type === 'content_block_stop') {
      finish(event.index);
    } else if (event.type === 'message_delta') {
      const d = event.delta ?? {};
      msg.stop_reason = d.stop_reason ?? null;
      msg.stop_sequence = d.stop_sequence ?? null;
      if (d.stop_details !== undefined) msg.stop_details = d.stop_details;
      // output_tokens replaces message_start's placeholder; the others are whole-message totals when present.
      const u = (event.usage ?? {}) as Json;
      for (const [k, v] of Object.entries(u)) if (v !== null && v !== undefined) (msg.usage as unknown as Json)[k] = v;
      onUsage(usageOf(msg.usage));
    } else if (event.type === 'message_stop') {
      stopped = true;
    }
  }
  // Well-formed events that stop before message_stop (or before any): the connection was cut, worth another try.
  if (!msg || !stopped) throw new ModelError('infra', `anthropic: the stream ended before ${msg ? 'message_stop' : 'its first event'}`, { transient: true, ...ids });
  for (const index of [...inputs.keys()]) finish(index);
  msg.content = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, b]) => b) as unknown as Anthropic.ContentBlock[];
  return requestId ? Object.assign(msg, { _request_id: requestId }) : msg;
}

/** A 200 whose body is the API's error object is that error (inside the retry loop: its type says whether to try again). */
function unlessError(msg: Anthropic.Message): Anthropic.Message {
  const e = errorInBody('anthropic', msg, (msg as { _request_id?: string | null } | undefined)?._request_id);
  if (e) throw e;
  return msg;
}

export class AnthropicAdapter implements ModelAdapter {
  readonly name = 'anthropic';
  readonly #client: Anthropic;
  readonly #retry: RetryPolicy;
  readonly #scrub: (text: string) => string;
  /** Ids made up for calls the API sent without one, unique in the adapter's life (one run). */
  #madeUp = 0;

  constructor(options: AnthropicAdapterOptions) {
    // The adapter's fetch names each event of a stream as the SDK needs (it drops one without an `event:` line).
    const sdk = sdkClient('anthropic', options, anthropicFetch);
    // null, not undefined: the SDK would take ANTHROPIC_BASE_URL from the environment for undefined.
    this.#client = new Anthropic({ ...sdk.client, baseURL: sdk.base ?? null });
    this.#retry = options.retry ?? {};
    this.#scrub = sdk.scrub;
  }

  async turn(request: TurnRequest): Promise<TurnResult> {
    const started = performance.now();
    const params = toParams(request);
    const opts = request.signal ? { signal: request.signal } : {};
    const { value, attempts, failedUsage } = await retryingTurn(this.name, this.#retry, request, (meter): Promise<Anthropic.Message> =>
      request.stream ? streamed(this.#client, params, opts, (u) => (meter.usage = u)) : this.#client.messages.create(params, opts).then(unlessError),
      this.#scrub,
    );
    const result = readable(this.name, () => toResult(value, attempts, Math.round(performance.now() - started), () => `anthropic_call_${++this.#madeUp}`));
    return failedUsage ? { ...result, failedUsage } : result;
  }
}
