// The Gemini adapter over @google/genai: contents with user/model roles, function calls and responses, usage metadata.
import { GoogleGenAI, type Content, type GenerateContentConfig, type GenerateContentResponse, type Part } from '@google/genai';
import { ModelError } from '../errors.js';
import type { RetryPolicy } from '../retry.js';
import { toolCall, usage, type Block, type Message, type ModelAdapter, type Stop, type TurnRequest, type TurnResult, type Usage } from '../types.js';
import { endpoint } from './endpoint.js';
import { geminiFetch } from './sse-fetch.js';
import { asText, callIdentity, objects, readable, retryingTurn } from './run-turn.js';

export interface GeminiAdapterOptions {
  apiKey: string;
  /** The host root; the SDK appends `/v1beta/models/…`. */
  baseURL?: string;
  timeoutMs?: number;
  retry?: RetryPolicy;
}

function contents(messages: Message[], madeUp: ReadonlySet<string>): Content[] {
  const out: Content[] = [];
  for (const m of messages) {
    if (m.role === 'assistant' && m.native && typeof m.native === 'object') {
      out.push(structuredClone(m.native) as Content);
      continue;
    }
    const parts: Part[] = m.blocks.map((b) => {
      if (b.type === 'text') return { text: b.text };
      // An id we made up for a call the API sent without one is ours: the API never saw it, so it is not sent.
      const id = madeUp.has(b.id) ? {} : { id: b.id };
      if (b.type === 'tool_call') return { functionCall: { ...id, name: b.name, args: b.input } };
      // Gemini pairs a response with its call by name (ids are optional), hence `name` on every tool_result.
      return { functionResponse: { ...id, name: b.name, response: b.is_error ? { error: b.output } : { output: b.output } } };
    });
    out.push({ role: m.role === 'assistant' ? 'model' : 'user', parts });
  }
  // A candidate cut at MAX_TOKENS while thinking has no parts; the API refuses a content without any.
  return out.filter((c) => (c.parts?.length ?? 0) > 0);
}

const REFUSALS = new Set(['SAFETY', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'RECITATION', 'IMAGE_SAFETY']);

/** A stream arrives as chunks: join their parts and keep the last finish reason and usage. */
function merge(chunks: GenerateContentResponse[]): GenerateContentResponse {
  const last = chunks.at(-1);
  // A 200 stream that ends before its first chunk was cut as surely as one that ends without a finish reason.
  if (!last) throw new ModelError('infra', 'gemini: the stream ended before its first chunk', { transient: true });
  const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
  const finishReason = [...chunks].reverse().find((c) => c.candidates?.[0]?.finishReason)?.candidates?.[0]?.finishReason;
  // The last chunk of a whole stream carries the finish reason (a blocked prompt has none, and no candidates).
  if (!finishReason && !chunks.some((c) => c.promptFeedback?.blockReason)) throw new ModelError('infra', 'gemini: the stream ended before a finish reason', { transient: true });
  const usageMetadata = [...chunks].reverse().find((c) => c.usageMetadata)?.usageMetadata;
  return Object.assign(Object.create(Object.getPrototypeOf(last)), last, {
    candidates: [{ ...(last.candidates?.[0] ?? {}), content: { role: 'model', parts }, finishReason }],
    usageMetadata,
  });
}

/** The five counters of Gemini's usage metadata (`promptTokenCount` counts the cache in; thoughts are billed as output). */
function usageOf(u: GenerateContentResponse['usageMetadata']): Usage {
  const cached = u?.cachedContentTokenCount ?? 0;
  return usage({
    input: (u?.promptTokenCount ?? 0) - cached + (u?.toolUsePromptTokenCount ?? 0),
    cache_read: cached,
    output: (u?.candidatesTokenCount ?? 0) + (u?.thoughtsTokenCount ?? 0),
    reasoning: u?.thoughtsTokenCount,
  });
}

function toResult(res: GenerateContentResponse, attempts: number, durationMs: number, newId: () => string): TurnResult {
  const candidate = res.candidates?.[0];
  const blockReason = res.promptFeedback?.blockReason;
  // A null where a part should be carries nothing, and would be refused if sent back.
  const parts = objects<Part>(candidate?.content?.parts);
  const blocks: Block[] = [];
  for (const p of parts) {
    const prev = blocks.at(-1);
    // Thought parts are the model's reasoning summary, not its answer.
    if (typeof p.text === 'string' && !p.thought) {
      // A stream cuts one text into parts across chunks (so may the API in one answer): it is one text.
      if (prev?.type === 'text') prev.text += p.text;
      else blocks.push({ type: 'text', text: p.text });
    } else if (p.functionCall && typeof p.functionCall === 'object') {
      // Ids are optional in the API (and usually absent); the agent needs one per call, unique in the run.
      const { id, name } = callIdentity(p.functionCall.id, p.functionCall.name, newId);
      blocks.push(toolCall(id, name, p.functionCall.args ?? {}));
    }
  }
  const reason = candidate?.finishReason ?? '';
  let stop: Stop;
  if (blockReason || REFUSALS.has(reason)) stop = 'refusal';
  else if (reason === 'MAX_TOKENS') stop = 'max_tokens';
  else if (blocks.some((b) => b.type === 'tool_call')) stop = 'tool_use';
  else if (reason === 'STOP' || reason === '') stop = 'end_turn';
  else stop = 'other';
  const result: TurnResult = {
    blocks,
    stop,
    usage: usageOf(res.usageMetadata),
    attempts,
    durationMs,
    native: candidate?.content && typeof candidate.content === 'object' ? { ...candidate.content, parts } : { role: 'model', parts: [] },
  };
  const responseId = asText(res.responseId);
  if (responseId !== undefined) result.requestId = responseId;
  if (stop === 'refusal') result.refusal = { category: String(blockReason ?? reason) };
  const served = (res as { modelVersion?: unknown }).modelVersion;
  if (typeof served === 'string' && served !== '') result.model = served;
  return result;
}

export class GeminiAdapter implements ModelAdapter {
  readonly name = 'gemini';
  readonly #client: GoogleGenAI;
  readonly #retry: RetryPolicy;
  /** The call ids this adapter made up; one adapter serves one run, so they are unique in it. */
  readonly #madeUp = new Set<string>();
  readonly #scrub: (text: string) => string;

  constructor(options: GeminiAdapterOptions) {
    const ep = endpoint(options.baseURL, options.apiKey);
    // No retryOptions: the SDK then makes one attempt, and the adapter retries like every other adapter.
    this.#client = new GoogleGenAI({
      apiKey: options.apiKey,
      httpOptions: { ...(ep.base ? { baseUrl: ep.base } : {}), fetch: geminiFetch(ep.query), timeout: options.timeoutMs ?? 600_000 },
    });
    this.#retry = options.retry ?? {};
    this.#scrub = ep.scrub;
  }

  async turn(request: TurnRequest): Promise<TurnResult> {
    const started = performance.now();
    const config: GenerateContentConfig = { systemInstruction: request.system, maxOutputTokens: request.maxTokens };
    if (request.tools?.length) config.tools = [{ functionDeclarations: request.tools.map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: t.schema })) }];
    if (request.signal) config.abortSignal = request.signal;
    const params = { model: request.model, contents: contents(request.messages, this.#madeUp), config };
    const { value, attempts, failedUsage } = await retryingTurn(this.name, this.#retry, request, async (meter): Promise<GenerateContentResponse> => {
      let res: GenerateContentResponse;
      if (!request.stream) res = await this.#client.models.generateContent(params);
      else {
        const chunks: GenerateContentResponse[] = [];
        // Each chunk's usage metadata counts the whole answer so far: an attempt that fails after it is billed for it.
        for await (const chunk of await this.#client.models.generateContentStream(params)) {
          chunks.push(chunk);
          if (chunk.usageMetadata) meter.usage = usageOf(chunk.usageMetadata);
        }
        res = merge(chunks);
      }
      // An answer thrown away below (no finish reason, a malformed call) was billed all the same.
      if (res.usageMetadata) meter.usage = usageOf(res.usageMetadata);
      // The model wrote a call the API could not parse and sent none of it: a bad sample, not an answer, and
      // not the docs' fault. The same request again usually gets a good one.
      const reason = res.candidates?.[0]?.finishReason;
      // No finish reason means, in the API's words, that the model has not stopped: the answer was cut
      // (a blocked prompt alone has none, and no candidate). Streamed, merge says the same.
      if (!reason && !res.promptFeedback?.blockReason) throw new ModelError('infra', 'gemini: the answer has no finish reason: the model had not stopped', { transient: true, ...(asText(res.responseId) !== undefined ? { requestId: asText(res.responseId) as string } : {}) });
      // UNEXPECTED_TOOL_CALL is its twin ("the tool call generated by the model is invalid"): the tools were declared.
      if (reason === 'MALFORMED_FUNCTION_CALL' || reason === 'UNEXPECTED_TOOL_CALL') throw new ModelError('infra', `gemini: the model's function call was malformed (finishReason ${reason})`, { transient: true });
      return res;
    }, this.#scrub);
    const result = readable(this.name, () =>
      toResult(value, attempts, Math.round(performance.now() - started), () => {
        const id = `gemini_call_${this.#madeUp.size + 1}`;
        this.#madeUp.add(id);
        return id;
      }),
    );
    return failedUsage ? { ...result, failedUsage } : result;
  }
}
