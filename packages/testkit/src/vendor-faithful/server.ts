// A second vendor mock, written from the vendors' published wire formats rather than from our
// adapters, that takes the liberties those formats allow: streams cut into many small deltas,
// keep-alive events, optional ids left out, usage sent on its own, unknown fields everywhere, and
// errors delivered inside a 200 stream. A client that only works against the first mock fails here.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MOCK_ENCRYPTED_REASONING, MOCK_SIGNATURE, TurnQueue, usageOf, type MockApi, type MockReply, type MockTurn, type RecordedRequest } from '../script.js';

/** An error the vendor sends after it has answered 200 and started the stream (or, unstreamed, in a 200 body where the format allows). */
export interface StreamError {
  streamError: {
    /** Anthropic `error.type` (`overloaded_error`), Responses `code` (`server_error`), Chat `error.type`, Gemini `error.status`. */
    type: string;
    message?: string;
    /** Gemini's numeric code (default 503). */
    code?: number;
  };
  /** Text streamed before the error. */
  text?: string;
}

/** A Responses `response.failed`, or a Gemini finish reason the first mock never sends. */
export type FaithfulTurn =
  | MockTurn
  | StreamError
  | { failed: { code: string; message: string } }
  | { geminiFinish: string; text?: string }
  | { geminiBlocked: string }
  | { anthropicStop: string; text?: string }
  | { usageRaw: Partial<Record<MockApi, unknown>>; text: string }
  /** The stream starts a text and stops, the connection closed cleanly, with no terminal event. */
  | { cut: string };

export type FaithfulStep = FaithfulTurn | ((request: RecordedRequest) => FaithfulTurn);

export interface FaithfulServer {
  readonly url: string;
  readonly openaiUrl: string;
  readonly requests: RecordedRequest[];
  push(...steps: FaithfulStep[]): void;
  readonly pending: number;
  close(): Promise<void>;
}

/** Fields no published schema has (yet): a faithful client ignores them. */
const EXTRA = { x_vendor_future_field: { nested: [1, 'two', null] } };

/** Cuts `s` into pieces of at most `n` characters (at least one piece, possibly empty). */
function pieces(s: string, n: number): string[] {
  if (s === '') return [''];
  const out: string[] = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out;
}

let counter = 0;
const uid = (prefix: string) => `${prefix}${(++counter).toString(36).padStart(6, '0')}vf`;

function sse(res: ServerResponse, data: unknown, event?: string): void {
  res.write(`${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\r\n\r\n`);
}

function startSse(res: ServerResponse, headers: Record<string, string>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers });
  // A comment line: SSE parsers must skip it.
  res.write(': keep-alive\n\n');
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

const isReply = (t: FaithfulTurn): t is MockReply => 'text' in t || 'toolCalls' in t || 'refusal' in t;
const textOf = (t: FaithfulTurn): string => ('text' in t && typeof t.text === 'string' ? t.text : '');

// ---------------------------------------------------------------- Anthropic Messages

function anthropicUsage(turn: FaithfulTurn) {
  if ('usageRaw' in turn) return turn.usageRaw.anthropic;
  const u = usageOf(isReply(turn) ? turn : {});
  return { input_tokens: u.input, cache_creation_input_tokens: u.cacheWrite, cache_read_input_tokens: u.cacheRead, output_tokens: u.output, service_tier: 'standard', ...EXTRA };
}

function anthropicContent(turn: FaithfulTurn): any[] {
  if (!isReply(turn) || 'refusal' in turn) return textOf(turn) ? [{ type: 'text', text: textOf(turn), citations: null }] : [];
  const content: any[] = [];
  if (turn.reasoning) content.push({ type: 'thinking', thinking: turn.reasoning, signature: MOCK_SIGNATURE });
  if (turn.text) content.push({ type: 'text', text: turn.text, citations: null, ...EXTRA });
  for (const c of turn.toolCalls ?? []) content.push({ type: 'tool_use', id: c.id ?? uid('toolu_'), name: c.name, input: c.input, ...EXTRA });
  return content;
}

function anthropicStop(turn: FaithfulTurn): string {
  if ('anthropicStop' in turn) return turn.anthropicStop;
  if (!isReply(turn)) return 'end_turn';
  if ('refusal' in turn) return 'refusal';
  if (turn.toolCalls?.length) return 'tool_use';
  return 'stop' in turn && turn.stop === 'max_tokens' ? 'max_tokens' : 'end_turn';
}

function refusalDetails(turn: FaithfulTurn) {
  return isReply(turn) && 'refusal' in turn ? { stop_details: { type: 'refusal', category: turn.category ?? null, explanation: turn.refusal } } : {};
}

function sendAnthropic(res: ServerResponse, turn: FaithfulTurn, body: any, requestId: string): void {
  const head = { id: uid('msg_'), type: 'message', role: 'assistant', model: String(body.model), stop_sequence: null, ...EXTRA };
  const content = anthropicContent(turn);
  const stop = anthropicStop(turn);
  const headers = { 'request-id': requestId, 'anthropic-organization-id': 'org-vf' };
  if (!body.stream) {
    if ('streamError' in turn) return json(res, 529, { type: 'error', error: { type: turn.streamError.type, message: turn.streamError.message ?? 'Overloaded' }, request_id: requestId }, headers);
    return json(res, 200, { ...head, content, stop_reason: stop, ...refusalDetails(turn), usage: anthropicUsage(turn) }, headers);
  }
  startSse(res, headers);
  const usage = anthropicUsage(turn) as Record<string, unknown> | undefined;
  // message_start carries the input side; output_tokens there is a placeholder the final message_delta replaces.
  sse(res, { type: 'message_start', message: { ...head, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }, 'message_start');
  sse(res, { type: 'ping' }, 'ping');
  if ('cut' in turn) {
    sse(res, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start');
    sse(res, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: turn.cut } }, 'content_block_delta');
    return void res.end();
  }
  if ('streamError' in turn) {
    if (turn.text) {
      sse(res, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start');
      sse(res, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: turn.text } }, 'content_block_delta');
    }
    sse(res, { type: 'error', error: { type: turn.streamError.type, message: turn.streamError.message ?? 'Overloaded' } }, 'error');
    return void res.end();
  }
  content.forEach((block, index) => {
    if (block.type === 'text') {
      sse(res, { type: 'content_block_start', index, content_block: { type: 'text', text: '', citations: null } }, 'content_block_start');
      for (const p of pieces(block.text, 3)) sse(res, { type: 'content_block_delta', index, delta: { type: 'text_delta', text: p } }, 'content_block_delta');
    } else if (block.type === 'thinking') {
      sse(res, { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }, 'content_block_start');
      for (const p of pieces(block.thinking, 4)) sse(res, { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: p } }, 'content_block_delta');
      sse(res, { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } }, 'content_block_delta');
    } else {
      sse(res, { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }, 'content_block_start');
      // The first delta of a tool input is often empty; the rest cut the JSON anywhere, mid-key and mid-string.
      sse(res, { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } }, 'content_block_delta');
      for (const p of pieces(JSON.stringify(block.input), 2)) sse(res, { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: p } }, 'content_block_delta');
    }
    sse(res, { type: 'content_block_stop', index }, 'content_block_stop');
    sse(res, { type: 'ping' }, 'ping');
  });
  sse(res, { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null, ...refusalDetails(turn) }, usage }, 'message_delta');
  sse(res, { type: 'message_stop', ...EXTRA }, 'message_stop');
  res.end();
}

// ---------------------------------------------------------------- OpenAI Responses

function responsesUsage(turn: FaithfulTurn) {
  if ('usageRaw' in turn) return turn.usageRaw.responses;
  const u = usageOf(isReply(turn) ? turn : {});
  const input = u.input + u.cacheRead + u.cacheWrite;
  return { input_tokens: input, input_tokens_details: { cached_tokens: u.cacheRead }, output_tokens: u.output, output_tokens_details: { reasoning_tokens: u.reasoning }, total_tokens: input + u.output };
}

function responsesItems(turn: FaithfulTurn): any[] {
  if (!isReply(turn)) return textOf(turn) ? [{ type: 'message', id: uid('msg_'), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: textOf(turn), annotations: [] }] }] : [];
  if ('refusal' in turn) return [{ type: 'message', id: uid('msg_'), status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: turn.refusal }] }];
  const items: any[] = [];
  if (turn.reasoning) items.push({ type: 'reasoning', id: uid('rs_'), summary: [{ type: 'summary_text', text: turn.reasoning }], encrypted_content: MOCK_ENCRYPTED_REASONING });
  if (turn.text) items.push({ type: 'message', id: uid('msg_'), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: turn.text, annotations: [], logprobs: [], ...EXTRA }] });
  for (const c of turn.toolCalls ?? []) items.push({ type: 'function_call', id: uid('fc_'), call_id: c.id ?? uid('call_'), name: c.name, arguments: JSON.stringify(c.input), status: 'completed' });
  return items;
}

/**
 * The API's rule for replayed items: each reasoning item comes with what it was produced for, the
 * assistant message or function call after it. One the input ends on, or one a user message or a
 * tool output follows, is a 400 before any generation.
 */
function responsesInputRefused(body: any): { error: Record<string, unknown> } | undefined {
  const input: any[] = Array.isArray(body.input) ? body.input : [];
  const orphan = input.find((item, i) => {
    if (item?.type !== 'reasoning') return false;
    const follower = input.slice(i + 1).find((x) => x?.type !== 'reasoning');
    return !(follower?.type === 'function_call' || (follower?.role === 'assistant' && (follower.type ?? 'message') === 'message'));
  });
  if (orphan === undefined) return undefined;
  return { error: { message: `Item '${String(orphan.id ?? '')}' of type 'reasoning' was provided without its required following item.`, type: 'invalid_request_error', param: 'input', code: null } };
}

function sendResponses(res: ServerResponse, turn: FaithfulTurn, body: any, requestId: string): void {
  const output = responsesItems(turn);
  const incomplete = isReply(turn) && 'stop' in turn && turn.stop === 'max_tokens';
  const base = { id: uid('resp_'), object: 'response', created_at: 1_750_000_000, model: String(body.model), instructions: body.instructions ?? null, tools: [], parallel_tool_calls: true, store: false, error: null, incomplete_details: null, ...EXTRA };
  const final = {
    ...base,
    status: 'failed' in turn ? 'failed' : incomplete ? 'incomplete' : 'completed',
    output: 'failed' in turn ? [] : output,
    ...('failed' in turn ? { error: turn.failed } : {}),
    ...(incomplete ? { incomplete_details: { reason: 'max_output_tokens' } } : {}),
    usage: 'failed' in turn ? null : responsesUsage(turn),
  };
  const headers = { 'x-request-id': requestId, 'openai-processing-ms': '7' };
  if (!body.stream) {
    if ('streamError' in turn) return json(res, 500, { error: { message: turn.streamError.message ?? 'The server had an error', type: turn.streamError.type, param: null, code: turn.streamError.type } }, headers);
    return json(res, 200, final, headers);
  }
  startSse(res, headers);
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>) => sse(res, { type, sequence_number: seq++, ...data }, type);
  ev('response.created', { response: { ...base, status: 'in_progress', output: [], usage: null } });
  ev('response.in_progress', { response: { ...base, status: 'in_progress', output: [], usage: null } });
  if ('streamError' in turn) {
    ev('error', { code: turn.streamError.type, message: turn.streamError.message ?? 'The server had an error while processing your request.', param: null });
    return void res.end();
  }
  if ('failed' in turn) {
    ev('response.failed', { response: final });
    return void res.end();
  }
  // An event type newer than any client: a faithful client skips it.
  ev('response.vendor_future_event', { detail: { anything: true } });
  if ('cut' in turn) {
    const id = uid('msg_');
    ev('response.output_item.added', { output_index: 0, item: { type: 'message', id, status: 'in_progress', role: 'assistant', content: [] } });
    ev('response.content_part.added', { output_index: 0, content_index: 0, item_id: id, part: { type: 'output_text', text: '', annotations: [] } });
    ev('response.output_text.delta', { output_index: 0, content_index: 0, item_id: id, delta: turn.cut, logprobs: [] });
    return void res.end();
  }
  output.forEach((item, output_index) => {
    if (item.type === 'message') {
      ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      item.content.forEach((part: any, content_index: number) => {
        if (part.type === 'output_text') {
          ev('response.content_part.added', { output_index, content_index, item_id: item.id, part: { type: 'output_text', text: '', annotations: [] } });
          for (const p of pieces(part.text, 3)) ev('response.output_text.delta', { output_index, content_index, item_id: item.id, delta: p, logprobs: [] });
          ev('response.output_text.done', { output_index, content_index, item_id: item.id, text: part.text, logprobs: [] });
        } else {
          ev('response.content_part.added', { output_index, content_index, item_id: item.id, part: { type: 'refusal', refusal: '' } });
          for (const p of pieces(part.refusal, 5)) ev('response.refusal.delta', { output_index, content_index, item_id: item.id, delta: p });
          ev('response.refusal.done', { output_index, content_index, item_id: item.id, refusal: part.refusal });
        }
        ev('response.content_part.done', { output_index, content_index, item_id: item.id, part });
      });
    } else if (item.type === 'function_call') {
      ev('response.output_item.added', { output_index, item: { ...item, arguments: '', status: 'in_progress' } });
      for (const p of pieces(item.arguments, 2)) ev('response.function_call_arguments.delta', { output_index, item_id: item.id, delta: p });
      ev('response.function_call_arguments.done', { output_index, item_id: item.id, arguments: item.arguments });
    } else {
      ev('response.output_item.added', { output_index, item: { ...item, summary: [], encrypted_content: null } });
    }
    ev('response.output_item.done', { output_index, item });
  });
  ev(incomplete ? 'response.incomplete' : 'response.completed', { response: final });
  res.end();
}

// ---------------------------------------------------------------- OpenAI Chat Completions

function chatUsage(turn: FaithfulTurn) {
  if ('usageRaw' in turn) return turn.usageRaw.chat;
  const u = usageOf(isReply(turn) ? turn : {});
  const prompt = u.input + u.cacheRead + u.cacheWrite;
  return { prompt_tokens: prompt, completion_tokens: u.output, total_tokens: prompt + u.output, prompt_tokens_details: { cached_tokens: u.cacheRead, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: u.reasoning, accepted_prediction_tokens: 0 } };
}

function sendChat(res: ServerResponse, turn: FaithfulTurn, body: any, requestId: string): void {
  const reply = isReply(turn) ? turn : undefined;
  const refusal = reply && 'refusal' in reply ? reply.refusal : null;
  const text = textOf(turn) || null;
  const calls = reply && 'toolCalls' in reply ? (reply.toolCalls ?? []).map((c) => ({ id: c.id ?? uid('call_'), type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.input) } })) : [];
  const finish = refusal ? 'stop' : calls.length ? 'tool_calls' : reply && 'stop' in reply && reply.stop === 'max_tokens' ? 'length' : 'stop';
  const head = { id: uid('chatcmpl-'), created: 1_750_000_000, model: String(body.model), system_fingerprint: 'fp_vf', service_tier: 'default', ...EXTRA };
  const headers = { 'x-request-id': requestId };
  if (!body.stream) {
    if ('streamError' in turn) return json(res, 503, { error: { message: turn.streamError.message ?? 'overloaded', type: turn.streamError.type, param: null, code: null } }, headers);
    const message = { role: 'assistant', content: text, refusal, annotations: [], ...(calls.length ? { tool_calls: calls } : {}) };
    return json(res, 200, { ...head, object: 'chat.completion', choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage: chatUsage(turn) }, headers);
  }
  startSse(res, headers);
  const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => sse(res, { ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason }], usage: null });
  chunk({ role: 'assistant', content: '', refusal: null });
  if ('cut' in turn) {
    chunk({ content: turn.cut });
    return void res.end();
  }
  if ('streamError' in turn) {
    if (text) chunk({ content: text });
    // How OpenAI-compatible servers report a failure after the 200: a data line with an error and no choices.
    sse(res, { error: { message: turn.streamError.message ?? 'overloaded', type: turn.streamError.type, param: null, code: null } });
    return void res.end();
  }
  if (text) for (const p of pieces(text, 3)) chunk({ content: p });
  if (refusal) for (const p of pieces(refusal, 4)) chunk({ refusal: p });
  calls.forEach((c, index) => {
    // The first delta of a call names it; the arguments follow in fragments that carry only the index.
    chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] });
    for (const p of pieces(c.function.arguments, 2)) chunk({ tool_calls: [{ index, function: { arguments: p } }] });
  });
  chunk({}, finish);
  if (body.stream_options?.include_usage) sse(res, { ...head, object: 'chat.completion.chunk', choices: [], usage: chatUsage(turn) });
  sse(res, '[DONE]');
  res.end();
}

// ---------------------------------------------------------------- Gemini

function geminiUsage(turn: FaithfulTurn) {
  if ('usageRaw' in turn) return turn.usageRaw.gemini;
  const u = usageOf(isReply(turn) ? turn : {});
  return {
    promptTokenCount: u.input + u.cacheRead,
    ...(u.cacheRead ? { cachedContentTokenCount: u.cacheRead } : {}),
    candidatesTokenCount: u.output - u.reasoning,
    ...(u.reasoning ? { thoughtsTokenCount: u.reasoning } : {}),
    totalTokenCount: u.input + u.cacheRead + u.output,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: u.input + u.cacheRead }],
  };
}

function geminiParts(turn: FaithfulTurn): any[] {
  const parts: any[] = [];
  if (isReply(turn) && 'reasoning' in turn && turn.reasoning) parts.push({ text: turn.reasoning, thought: true });
  if (textOf(turn)) parts.push({ text: textOf(turn) });
  // The Gemini API leaves functionCall.id out; only a scripted id is sent.
  // A thinking model's signature rides on its first function call part, and must come back with it.
  if (isReply(turn) && 'toolCalls' in turn)
    (turn.toolCalls ?? []).forEach((c, i) => parts.push({ functionCall: { name: c.name, args: c.input, ...(c.id?.startsWith('gem-') ? { id: c.id } : {}) }, ...(i === 0 && turn.reasoning ? { thoughtSignature: MOCK_SIGNATURE } : {}) }));
  return parts;
}

function geminiFinish(turn: FaithfulTurn): string {
  if ('geminiFinish' in turn) return turn.geminiFinish;
  if (isReply(turn) && 'refusal' in turn) return 'SAFETY';
  return isReply(turn) && 'stop' in turn && turn.stop === 'max_tokens' ? 'MAX_TOKENS' : 'STOP';
}

function sendGemini(res: ServerResponse, turn: FaithfulTurn, url: string, requestId: string): void {
  const model = /models\/([^:]+):/.exec(url)?.[1] ?? 'gemini';
  const meta = { modelVersion: `${model}-001`, responseId: uid('gr') };
  const headers = { 'x-request-id': requestId };
  const stream = url.includes(':streamGenerateContent');
  const errorBody = (e: StreamError['streamError']) => ({ error: { code: e.code ?? 503, message: e.message ?? 'The model is overloaded. Please try again later.', status: e.type, details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.01s' }] } });
  if ('geminiBlocked' in turn) {
    const body = { promptFeedback: { blockReason: turn.geminiBlocked, safetyRatings: [] }, usageMetadata: geminiUsage({ text: '' }), ...meta };
    if (!stream) return json(res, 200, body, headers);
    startSse(res, headers);
    sse(res, body);
    return void res.end();
  }
  const parts = geminiParts(turn);
  const finishReason = geminiFinish(turn);
  if (!stream) {
    if ('streamError' in turn) return json(res, turn.streamError.code ?? 503, errorBody(turn.streamError), headers);
    return json(res, 200, { candidates: [{ content: { role: 'model', parts }, finishReason, index: 0, safetyRatings: [], ...EXTRA }], usageMetadata: geminiUsage(turn), ...meta, ...EXTRA }, headers);
  }
  startSse(res, headers);
  const chunk = (ps: any[], last: boolean) =>
    sse(res, { candidates: [{ content: { role: 'model', parts: ps }, ...(last ? { finishReason } : {}), index: 0 }], ...(last ? { usageMetadata: geminiUsage(turn) } : {}), ...meta });
  if ('cut' in turn) {
    chunk([{ text: turn.cut }], false);
    return void res.end();
  }
  if ('streamError' in turn) {
    if (turn.text) chunk([{ text: turn.text }], false);
    sse(res, errorBody(turn.streamError));
    return void res.end();
  }
  // Text arrives in pieces over several chunks; a function call comes whole, in a later chunk; usage only at the end.
  const out: any[][] = [];
  for (const p of parts) {
    if (typeof p.text === 'string') for (const t of pieces(p.text, 4)) out.push([{ ...p, text: t }]);
    else out.push([p]);
  }
  if (out.length === 0) out.push([]);
  out.forEach((ps, i) => chunk(ps, i === out.length - 1));
  res.end();
}

// ---------------------------------------------------------------- the server

function routeOf(method: string, path: string): MockApi | undefined {
  if (method !== 'POST') return undefined;
  if (path === '/v1/messages') return 'anthropic';
  if (path === '/v1/responses') return 'responses';
  if (path === '/v1/chat/completions') return 'chat';
  if (/^\/v1beta\/models\/[^/]+:(streamGenerateContent|generateContent)$/.test(path)) return 'gemini';
  return undefined;
}

/** Starts the second mock on a free loopback port. An unscripted request gets the vendor's 500. */
export async function startVendorFaithfulServer(script: FaithfulStep[] = []): Promise<FaithfulServer> {
  const queue = new TurnQueue(undefined);
  queue.push(...(script as never[]));
  const requests: RecordedRequest[] = [];
  let n = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    for await (const c of req) raw += c;
    const url = req.url ?? '/';
    const path = url.split('?')[0] ?? '/';
    const api = routeOf(req.method ?? '', path);
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const record: RecordedRequest = { api: api ?? 'other', method: req.method ?? '', url, headers: req.headers, body, raw, stream: Boolean(body?.stream) || url.includes(':stream'), lastUserText: '' };
    requests.push(record);
    if (!api || body === undefined) return json(res, 404, { error: { message: `no route ${req.method} ${url}` } });
    const requestId = `req_vf_${++n}`;
    const refused = api === 'responses' ? responsesInputRefused(body) : undefined;
    if (refused) return json(res, 400, refused, { 'x-request-id': requestId });
    const turn = queue.next(record) as FaithfulTurn;
    if ('error' in turn) {
      const headers: Record<string, string> = { 'request-id': requestId, 'x-request-id': requestId };
      if (turn.error.retryAfterSec !== undefined) headers['retry-after'] = String(turn.error.retryAfterSec);
      if (turn.error.retryAfterMs !== undefined) headers['retry-after-ms'] = String(turn.error.retryAfterMs);
      const message = turn.error.message ?? `vf ${turn.error.status}`;
      const type = turn.error.type ?? (turn.error.status === 529 ? 'overloaded_error' : 'api_error');
      const errBody = api === 'anthropic' ? { type: 'error', error: { type, message } } : api === 'gemini' ? { error: { code: turn.error.status, message, status: 'UNAVAILABLE' } } : { error: { message, type, param: null, code: null } };
      return json(res, turn.error.status, errBody, headers);
    }
    if ('malformed' in turn || 'hang' in turn) return json(res, 500, { error: { message: 'the faithful mock scripts neither malformed nor hang turns' } });
    if (api === 'anthropic') return sendAnthropic(res, turn, body, requestId);
    if (api === 'responses') return sendResponses(res, turn, body, requestId);
    if (api === 'chat') return sendChat(res, turn, body, requestId);
    return sendGemini(res, turn, url, requestId);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { error: { message: `vendor-faithful mock crashed: ${String(error)}` } });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    openaiUrl: `${url}/v1`,
    requests,
    push: (...steps) => queue.push(...(steps as never[])),
    get pending() {
      return queue.pending;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
