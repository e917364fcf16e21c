// The OpenAI Responses adapter over the openai SDK: stateless turns (store: false) that replay the provider's items.
import OpenAI from 'openai';
import { ModelError } from '../errors.js';
import type { RetryPolicy } from '../retry.js';
import { toolCall, usage, type Block, type Message, type ModelAdapter, type TurnRequest, type TurnResult } from '../types.js';
import { retryingTurn } from './run-turn.js';

export interface OpenAIResponsesAdapterOptions {
  apiKey: string;
  /** Includes `/v1`; the SDK appends `/responses`. */
  baseURL?: string;
  timeoutMs?: number;
  retry?: RetryPolicy;
}

type Params = OpenAI.Responses.ResponseCreateParamsNonStreaming;

function inputItems(messages: Message[]): OpenAI.Responses.ResponseInputItem[] {
  const items: OpenAI.Responses.ResponseInputItem[] = [];
  for (const m of messages) {
    // Reasoning items (with their encrypted content) only survive a stateless turn if replayed verbatim.
    if (m.role === 'assistant' && Array.isArray(m.native)) {
      items.push(...(structuredClone(m.native) as OpenAI.Responses.ResponseInputItem[]));
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

function toResult(res: OpenAI.Responses.Response, attempts: number, durationMs: number): TurnResult {
  if (res.status === 'failed') throw new ModelError('infra', `openai-responses: response failed: ${res.error?.message ?? 'no message'}`, { transient: false });
  const blocks: Block[] = [];
  let refusal: string | undefined;
  for (const item of res.output) {
    if (item.type === 'message') {
      for (const part of item.content) {
        if (part.type === 'output_text') blocks.push({ type: 'text', text: part.text });
        else if (part.type === 'refusal') refusal = part.refusal;
      }
    } else if (item.type === 'function_call') {
      blocks.push(toolCall(item.call_id, item.name, item.arguments));
    }
  }
  const reason = res.incomplete_details?.reason;
  const stop =
    refusal !== undefined || reason === 'content_filter' ? 'refusal' : reason === 'max_output_tokens' ? 'max_tokens' : blocks.some((b) => b.type === 'tool_call') ? 'tool_use' : 'end_turn';
  const u = res.usage;
  const cacheRead = u?.input_tokens_details?.cached_tokens ?? 0;
  const cacheWrite = (u?.input_tokens_details as { cache_write_tokens?: number } | undefined)?.cache_write_tokens ?? 0;
  const result: TurnResult = {
    blocks,
    stop,
    usage: usage({ input: (u?.input_tokens ?? 0) - cacheRead - cacheWrite, cache_read: cacheRead, cache_write: cacheWrite, output: u?.output_tokens, reasoning: u?.output_tokens_details?.reasoning_tokens }),
    attempts,
    durationMs,
    native: res.output,
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

  constructor(options: OpenAIResponsesAdapterOptions) {
    this.#client = new OpenAI({ apiKey: options.apiKey, ...(options.baseURL ? { baseURL: options.baseURL } : {}), maxRetries: 0, timeout: options.timeoutMs ?? 600_000 });
    this.#retry = options.retry ?? {};
  }

  async turn(request: TurnRequest): Promise<TurnResult> {
    const started = performance.now();
    const params = toParams(request);
    const opts = request.signal ? { signal: request.signal } : {};
    const { value, attempts } = await retryingTurn(this.name, this.#retry, request, (): Promise<OpenAI.Responses.Response> =>
      request.stream ? this.#client.responses.stream({ ...params, stream: true } as OpenAI.Responses.ResponseCreateParamsStreaming, opts).finalResponse() : this.#client.responses.create(params, opts),
    );
    return toResult(value, attempts, Math.round(performance.now() - started));
  }
}
