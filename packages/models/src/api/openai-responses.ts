// The OpenAI Responses adapter over the openai SDK: stateless turns (store: false) that replay the provider's items.
import OpenAI from 'openai';
import { accumulateResponse } from 'openai/lib/responses/ResponseAccumulator';
import { ModelError } from '../errors.js';
import { errorInBody, streamError } from './classify.js';
import type { RetryPolicy } from '../retry.js';
import { toolCall, usage, type Block, type Message, type ModelAdapter, type Stop, type TurnRequest, type TurnResult, type Usage } from '../types.js';
import { sdkClient } from './endpoint.js';
import { callIdentity, objects, readable, retryingTurn, type Meter } from './run-turn.js';
import type { LogLine } from './sdk-log.js';

export interface OpenAIResponsesAdapterOptions {
  apiKey: string;
  /** Includes `/v1`; the SDK appends `/responses`. */
  baseURL?: string;
  timeoutMs?: number;
  retry?: RetryPolicy;
  /** Where the SDK's own log lines go (default stderr; never stdout, the event stream). */
  log?: LogLine;
}

type Params = OpenAI.Responses.ResponseCreateParamsNonStreaming;

type Item = OpenAI.Responses.ResponseInputItem;

/**
 * A turn's own items as the next request may carry them. The API takes a reasoning item only with the
 * message or function call it was produced for after it (else 400 "provided without its required
 * following item"), so a reasoning item nothing of its turn follows (a turn cut at max_output_tokens
 * after its reasoning) is left out: the model reasons again on the next turn.
 */
function replayable(items: Item[]): Item[] {
  const answered = items.findLastIndex((item) => item.type === 'message' || item.type === 'function_call');
  return items.filter((item, i) => item.type !== 'reasoning' || i < answered);
}

function inputItems(messages: Message[]): Item[] {
  const items: Item[] = [];
  for (const m of messages) {
    // Reasoning items (with their encrypted content) only survive a stateless turn if replayed verbatim.
    if (m.role === 'assistant' && Array.isArray(m.native)) {
      items.push(...replayable(structuredClone(m.native) as Item[]));
      continue;
    }
    for (const b of m.blocks) {
      if (b.type === 'text') items.push({ role: m.role, content: b.text });
      else if (b.type === 'tool_call') items.push({ type: 'function_call', call_id: b.id, name: b.name, arguments: JSON.stringify(b.input) });
      else items.push({ type: 'function_call_output', call_id: b.id, output: b.output });
    }
  }
  return items;
}

function toParams(request: TurnRequest): Params {
  const params: Params = {
    model: request.model,
    instructions: request.system,
    input: inputItems(request.messages),
    store: false,
    include: ['reasoning.encrypted_content'],
    max_output_tokens: request.maxTokens,
  };
  if (request.tools?.length) {
    params.tools = request.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.schema, strict: false }));
  }
  return params;
}

/**
 * A streamed response read event by event with the SDK's accumulator, so that the request id (a header)
 * is kept, an `error` event fails the turn, an event type newer than the SDK is skipped rather than
 * fatal, and a stream that stops before its terminal event is not taken for a finished answer. The
 * accumulator places each event by its output and content index and throws on one it cannot place
 * (an index gap, a delta before its part): such an event is passed over, as a lifecycle event after
 * it (the terminal one above all) carries the whole response. Only a stream that ends with events
 * passed over since the last of them is unreadable.
 */
async function streamed(client: OpenAI, params: Params, opts: { signal?: AbortSignal }, meter: Meter): Promise<OpenAI.Responses.Response> {
  const { data, request_id: requestId } = await client.responses.create({ ...params, stream: true }, opts).withResponse();
  let snapshot: OpenAI.Responses.Response | undefined;
  /** What the accumulator could not place since the last lifecycle event: the snapshot lacks it. */
  let unplaced: Error | undefined;
  /** The output streamed so far, for a terminal event whose response leaves it out. */
  let streamedOutput: OpenAI.Responses.ResponseOutputItem[] = [];
  let ended = false;
  for await (const event of data) {
    if (event.type === 'error') throw streamError('openai-responses', event.code, event.message, requestId);
    // The terminal event holds the whole response: nothing after it changes it.
    if (ended) continue;
    if (isLifecycle(event)) {
      ended = /\.(completed|incomplete|failed)$/.test(event.type);
      if (snapshot && Array.isArray(snapshot.output) && snapshot.output.length > 0) streamedOutput = snapshot.output;
      // The SDK's accumulator wants response.created first; any lifecycle event (response.queued, a
      // lone response.completed) carries the whole response as well, so the stream may start from it.
      snapshot = structuredClone(event.response);
      if (!Array.isArray(snapshot.output) || (snapshot.output.length === 0 && /\.(completed|incomplete)$/.test(event.type))) snapshot.output = streamedOutput;
      unplaced = undefined;
      // Lifecycle events carry the usage so far (response.failed its final count): an attempt that fails is billed for it.
      if (snapshot.usage) meter.usage = usageOf(snapshot.usage);
      continue;
    }
    if (!snapshot) continue;
    try {
      snapshot = accumulateResponse(event, snapshot);
    } catch (error) {
      if (/^Unhandled response stream event/.test(String((error as Error).message))) continue;
      unplaced ??= error as Error;
    }
  }
  // A 200 stream that ends before its first event was cut as surely as one that ends after it.
  if (!snapshot) throw new ModelError('infra', 'openai-responses: the stream ended before its first event', { transient: true, ...(requestId ? { requestId } : {}) });
  if (snapshot.status !== 'completed' && snapshot.status !== 'incomplete' && snapshot.status !== 'failed') {
    throw new ModelError('infra', `openai-responses: the stream ended before the response finished (status ${snapshot.status ?? 'none'})`, { transient: true, ...(requestId ? { requestId } : {}) });
  }
  if (unplaced) throw unplaced;
  return requestId ? Object.assign(snapshot, { _request_id: requestId }) : snapshot;
}

/** An event that carries the whole response (its state at that point). */
function isLifecycle(event: { type: string; response?: unknown }): event is { type: string; response: OpenAI.Responses.Response } {
  return /^response\.(created|queued|in_progress|completed|incomplete|failed)$/.test(event.type) && !!event.response && typeof event.response === 'object';
}

/**
 * A failed response is an error, inside the retry loop: its code says whether another attempt may help.
 * One neither completed nor incomplete (queued, in progress, cancelled: `status` is all a whole
 * response says of that) has not finished: it would pass for an answer with nothing to say.
 */
function unlessFailed(res: OpenAI.Responses.Response, meter: Meter): OpenAI.Responses.Response {
  if (res && typeof res === 'object' && res.usage) meter.usage = usageOf(res.usage);
  const requestId = (res as { _request_id?: string | null } | undefined)?._request_id;
  if (!res || typeof res !== 'object' || !Array.isArray(res.output)) throw errorInBody('openai-responses', res, requestId) ?? new ModelError('harness', 'openai-responses: unreadable response: the body is not a response');
  if (res.status === 'failed') throw streamError('openai-responses', res.error?.code, `response failed: ${res.error?.message ?? 'no message'}`, requestId);
  if (res.status !== 'completed' && res.status !== 'incomplete') {
    throw new ModelError('infra', `openai-responses: the response has not finished (status ${String(res.status ?? 'none')})`, { transient: true, ...(requestId ? { requestId } : {}) });
  }
  return res;
}

/** The five counters of a Responses usage (`input_tokens` counts the cache in). */
function usageOf(u: OpenAI.Responses.ResponseUsage | null | undefined): Usage {
  const cacheRead = u?.input_tokens_details?.cached_tokens ?? 0;
  const cacheWrite = (u?.input_tokens_details as { cache_write_tokens?: number } | undefined)?.cache_write_tokens ?? 0;
  return usage({ input: (u?.input_tokens ?? 0) - cacheRead - cacheWrite, cache_read: cacheRead, cache_write: cacheWrite, output: u?.output_tokens, reasoning: u?.output_tokens_details?.reasoning_tokens });
}

function toResult(res: OpenAI.Responses.Response, attempts: number, durationMs: number, newId: () => string): TurnResult {
  const blocks: Block[] = [];
  let refusal: string | undefined;
  // A null where an item or a part should be carries nothing, and would be refused if sent back.
  const output = objects<OpenAI.Responses.ResponseOutputItem>(res.output);
  for (const item of output) {
    if (item.type === 'message') {
      for (const part of objects<OpenAI.Responses.ResponseOutputMessage['content'][number]>(item.content)) {
        if (part.type === 'output_text') {
          if (typeof part.text === 'string') blocks.push({ type: 'text', text: part.text });
        } else if (part.type === 'refusal') refusal = typeof part.refusal === 'string' ? part.refusal : '';
      }
    } else if (item.type === 'function_call') {
      // The output is replayed as it is: a call_id made up goes in it too, so the call and its output pair.
      const { id, name } = callIdentity(item.call_id, item.name, newId);
      Object.assign(item, { call_id: id, name });
      blocks.push(toolCall(id, name, item.arguments));
    }
  }
  const reason = res.incomplete_details?.reason;
  // Incomplete for a reason the API does not name (or one newer than the SDK): cut, not finished.
  const stop: Stop =
    refusal !== undefined || reason === 'content_filter'
      ? 'refusal'
      : reason === 'max_output_tokens'
        ? 'max_tokens'
        : blocks.some((b) => b.type === 'tool_call')
          ? 'tool_use'
          : res.status === 'incomplete'
            ? 'other'
            : 'end_turn';
  const result: TurnResult = {
    blocks,
    stop,
    usage: usageOf(res.usage),
    attempts,
    durationMs,
    native: output,
  };
  const requestId = (res as { _request_id?: string | null })._request_id;
  if (requestId) result.requestId = requestId;
  if (stop === 'refusal') result.refusal = refusal !== undefined ? { explanation: refusal } : { category: 'content_filter' };
  const served = (res as { model?: unknown }).model;
  if (typeof served === 'string' && served !== '') result.model = served;
  return result;
}

export class OpenAIResponsesAdapter implements ModelAdapter {
  readonly name = 'openai-responses';
  readonly #client: OpenAI;
  readonly #retry: RetryPolicy;
  readonly #scrub: (text: string) => string;
  /** Ids made up for calls the API sent without one, unique in the adapter's life (one run). */
  #madeUp = 0;

  constructor(options: OpenAIResponsesAdapterOptions) {
    const sdk = sdkClient('openai-responses', options);
    this.#client = new OpenAI({ ...sdk.client, ...(sdk.base ? { baseURL: sdk.base } : {}) });
    this.#retry = options.retry ?? {};
    this.#scrub = sdk.scrub;
  }

  async turn(request: TurnRequest): Promise<TurnResult> {
    const started = performance.now();
    const params = toParams(request);
    const opts = request.signal ? { signal: request.signal } : {};
    const { value, attempts, failedUsage } = await retryingTurn(this.name, this.#retry, request, (meter): Promise<OpenAI.Responses.Response> =>
      (request.stream ? streamed(this.#client, params, opts, meter) : this.#client.responses.create(params, opts)).then((res) => unlessFailed(res, meter)),
      this.#scrub,
    );
    const result = readable(this.name, () => toResult(value, attempts, Math.round(performance.now() - started), () => `responses_call_${++this.#madeUp}`));
    return failedUsage ? { ...result, failedUsage } : result;
  }
}
