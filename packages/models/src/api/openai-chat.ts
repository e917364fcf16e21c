// The OpenAI Chat Completions adapter: the lowest common denominator that "OpenAI-compatible" servers speak.
import OpenAI from 'openai';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { ModelError } from '../errors.js';
import type { RetryPolicy } from '../retry.js';
import { toolCall, usage, type Block, type Message, type ModelAdapter, type Stop, type TurnRequest, type TurnResult, type Usage } from '../types.js';
import { errorInBody } from './classify.js';
import { sdkClient } from './endpoint.js';
import { asText, callIdentity, objects, readable, retryingTurn, type Meter } from './run-turn.js';
import type { LogLine } from './sdk-log.js';

export interface OpenAIChatAdapterOptions {
  apiKey: string;
  /** Includes `/v1`; the SDK appends `/chat/completions`. */
  baseURL?: string;
  timeoutMs?: number;
  retry?: RetryPolicy;
  /** Where the SDK's own log lines go (default stderr; never stdout, the event stream). */
  log?: LogLine;
}

type Params = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;

function chatMessages(system: string, messages: Message[]): ChatMessage[] {
  const out: ChatMessage[] = [{ role: 'system', content: system }];
  for (const m of messages) {
    if (m.role === 'assistant') {
      if (m.native && typeof m.native === 'object') {
        out.push(structuredClone(m.native) as ChatMessage);
        continue;
      }
      const text = m.blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      const calls = m.blocks.flatMap((b) => (b.type === 'tool_call' ? [{ id: b.id, type: 'function' as const, function: { name: b.name, arguments: JSON.stringify(b.input) } }] : []));
      out.push({ role: 'assistant', content: text || null, ...(calls.length ? { tool_calls: calls } : {}) });
      continue;
    }
    for (const b of m.blocks) {
      if (b.type === 'text') out.push({ role: 'user', content: b.text });
      else if (b.type === 'tool_result') out.push({ role: 'tool', tool_call_id: b.id, content: b.output });
    }
  }
  // An answer cut at `length` before its first word has neither content nor calls, which the API refuses.
  return out.filter((m) => m.role !== 'assistant' || (typeof m.content === 'string' ? m.content !== '' : m.content != null) || (m.tool_calls?.length ?? 0) > 0);
}

const STOPS: Record<string, Stop> = { stop: 'end_turn', tool_calls: 'tool_use', function_call: 'tool_use', length: 'max_tokens', content_filter: 'refusal' };

/** The five counters of a Chat Completions usage (`prompt_tokens` counts the cache in). */
function usageOf(u: OpenAI.CompletionUsage | null | undefined): Usage {
  const cacheRead = u?.prompt_tokens_details?.cached_tokens ?? 0;
  const cacheWrite = (u?.prompt_tokens_details as { cache_write_tokens?: number } | undefined)?.cache_write_tokens ?? 0;
  return usage({ input: (u?.prompt_tokens ?? 0) - cacheRead - cacheWrite, cache_read: cacheRead, cache_write: cacheWrite, output: u?.completion_tokens, reasoning: u?.completion_tokens_details?.reasoning_tokens });
}

function toResult(res: OpenAI.Chat.ChatCompletion, attempts: number, durationMs: number, newId: () => string): TurnResult {
  // A 200 that is not a Chat Completions body (a proxy's page) reaches here as the SDK's text.
  if (!res || typeof res !== 'object' || !Array.isArray(res.choices)) throw new ModelError('harness', 'openai-chat: unreadable response: the body is not a chat completion');
  const choice = res.choices[0];
  if (!choice) throw new ModelError('harness', 'openai-chat: response has no choices');
  const message = choice.message;
  if (!message || typeof message !== 'object') throw new ModelError('harness', 'openai-chat: unreadable response: the choice has no message');
  const blocks: Block[] = [];
  // Some compatible servers send the content as parts, as a request may: its text parts are the text.
  const text = typeof message.content === 'string' ? message.content : objects<{ type?: unknown; text?: unknown }>(message.content).flatMap((p) => (p.type === 'text' && typeof p.text === 'string' ? [p.text] : [])).join('');
  if (text) blocks.push({ type: 'text', text });
  // Some compatible servers send calls without ids; the results are paired by id, so each gets one, unique
  // in the run. A call that is not a function call (or has none) carries nothing to run, nor to send back.
  const calls = objects<OpenAI.Chat.ChatCompletionMessageFunctionToolCall>(message.tool_calls)
    .filter((call) => call.type === 'function' && call.function !== null && typeof call.function === 'object')
    .map((call) => {
      const { id, name } = callIdentity(call.id, call.function.name, newId);
      return { ...call, id, function: { ...call.function, name } };
    });
  for (const call of calls) blocks.push(toolCall(call.id, call.function.name, call.function.arguments));
  const stop: Stop = message.refusal ? 'refusal' : (STOPS[choice.finish_reason] ?? 'other');
  const native: Record<string, unknown> = { role: 'assistant', content: text || null };
  if (calls.length) native.tool_calls = calls;
  const result: TurnResult = {
    blocks,
    stop,
    usage: usageOf(res.usage),
    attempts,
    durationMs,
    native,
  };
  const requestId = (res as { _request_id?: string | null })._request_id;
  if (requestId) result.requestId = requestId;
  const said = asText(message.refusal);
  if (stop === 'refusal') result.refusal = said !== undefined ? { explanation: said } : { category: 'content_filter' };
  const served = (res as { model?: unknown }).model;
  if (typeof served === 'string' && served !== '') result.model = served;
  return result;
}

/**
 * The chunks as the SDK's stream helper can read them. It keeps each choice's tool calls in a list at
 * the index a delta names, and reads a role from the first delta of each choice: a compatible server
 * whose call indexes leave a gap (0, 2) or start at 1 made it fail on the hole, one that never says
 * the role made it fail outright. Indexes are renumbered in the order the calls first come, and a
 * missing first role is the assistant's (the only one an answer has).
 */
async function* readableChunks(chunks: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>): AsyncGenerator<OpenAI.Chat.ChatCompletionChunk> {
  const calls = new Map<number, Map<number, number>>();
  for await (const chunk of chunks) {
    for (const choice of Array.isArray(chunk?.choices) ? chunk.choices : []) {
      const delta = choice?.delta as (OpenAI.Chat.ChatCompletionChunk.Choice.Delta & Record<string, unknown>) | undefined;
      if (!delta || typeof delta !== 'object') continue;
      let seen = calls.get(choice.index);
      if (!seen) {
        calls.set(choice.index, (seen = new Map()));
        if (!delta.role) delta.role = 'assistant';
      }
      for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        if (!call || typeof call !== 'object') continue;
        // A call without an index is a new one when it names an id, else the last one's continuation.
        const index = typeof call.index === 'number' ? call.index : call.id ? -1 - seen.size : ([...seen.keys()].at(-1) ?? 0);
        if (!seen.has(index)) seen.set(index, seen.size);
        call.index = seen.get(index)!;
      }
    }
    yield chunk;
  }
}

/** Chunks as newline-delimited JSON, the stream the SDK's helper reads (what its own toReadableStream writes). */
function jsonLines(chunks: AsyncIterable<unknown>): ReadableStream<Uint8Array> {
  const it = chunks[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  return new ReadableStream({
    async pull(out) {
      try {
        const { value, done } = await it.next();
        if (done) out.close();
        else out.enqueue(encoder.encode(`${JSON.stringify(value)}\n`));
      } catch (error) {
        out.error(error);
      }
    },
    async cancel() {
      await it.return?.();
    },
  });
}

/** The SDK's own stream helper drops the response headers, and with them the request id: read the stream and hand it to the helper. */
async function streamed(client: OpenAI, params: Params, opts: { signal?: AbortSignal }, meter: Meter): Promise<OpenAI.Chat.ChatCompletion> {
  const { data, request_id: requestId } = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }, opts).withResponse();
  const stream = ChatCompletionStream.fromReadableStream(jsonLines(readableChunks(data)));
  // The usage chunk may come before a failure (an error line after it): that attempt is billed for it.
  stream.on('chunk', (chunk) => {
    if (chunk.usage) meter.usage = usageOf(chunk.usage);
  });
  const completion = await stream
    .finalChatCompletion()
    .catch((error: unknown) => {
      // Chunks that stop before a finish reason: the connection was cut, worth another try.
      // So are no chunks at all ("request ended without sending any chunks").
      if (/missing finish_reason|ended without sending any chunks/i.test(String((error as Error)?.message))) throw new ModelError('infra', 'openai-chat: the stream ended before a finish reason', { transient: true, ...(requestId ? { requestId } : {}) });
      throw error;
    });
  return requestId ? Object.assign(completion, { _request_id: requestId }) : completion;
}

/** A 200 whose body is the API's error object is that error (inside the retry loop: its type says whether to try again). */
function unlessError(res: OpenAI.Chat.ChatCompletion): OpenAI.Chat.ChatCompletion {
  const e = Array.isArray(res?.choices) ? undefined : errorInBody('openai-chat', res, (res as { _request_id?: string | null } | undefined)?._request_id);
  if (e) throw e;
  return res;
}

export class OpenAIChatAdapter implements ModelAdapter {
  readonly name = 'openai-chat';
  readonly #client: OpenAI;
  readonly #retry: RetryPolicy;
  #madeUp = 0;
  /** The server refused `max_tokens` once: every later turn of the run sends `max_completion_tokens`. */
  #completionTokens = false;

  readonly #scrub: (text: string) => string;

  constructor(options: OpenAIChatAdapterOptions) {
    const sdk = sdkClient('openai-chat', options);
    this.#client = new OpenAI({ ...sdk.client, ...(sdk.base ? { baseURL: sdk.base } : {}) });
    this.#retry = options.retry ?? {};
    this.#scrub = sdk.scrub;
  }

  async turn(request: TurnRequest): Promise<TurnResult> {
    const started = performance.now();
    const params: Params = { model: request.model, messages: chatMessages(request.system, request.messages) };
    if (request.tools?.length) params.tools = request.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.schema } }));
    const opts = request.signal ? { signal: request.signal } : {};
    const call = (meter: Meter): Promise<OpenAI.Chat.ChatCompletion> => {
      // `max_tokens` first: the compatible servers this adapter exists for know the older name. OpenAI's
      // reasoning models refuse it (400, naming `max_completion_tokens`), and then the newer name is used.
      const p: Params = this.#completionTokens ? { ...params, max_completion_tokens: request.maxTokens } : { ...params, max_tokens: request.maxTokens };
      return request.stream ? streamed(this.#client, p, opts, meter) : this.#client.chat.completions.create(p, opts).then(unlessError);
    };
    const { value, attempts, failedUsage } = await retryingTurn(this.name, this.#retry, request, async (meter) => {
      try {
        return await call(meter);
      } catch (error) {
        const e = error as { status?: unknown; message?: unknown; error?: { param?: unknown } };
        if (this.#completionTokens || e?.status !== 400 || !(e.error?.param === 'max_tokens' || /max_completion_tokens/.test(String(e.message)))) throw error;
        this.#completionTokens = true;
        return call(meter);
      }
    }, this.#scrub);
    const result = readable(this.name, () => toResult(value, attempts, Math.round(performance.now() - started), () => `chat_call_${++this.#madeUp}`));
    return failedUsage ? { ...result, failedUsage } : result;
  }
}
