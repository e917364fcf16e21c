// The adapters, each over its real SDK, against the testkit's mock answering with bytes written as the
// vendors' published formats allow them (`raw` turns): finish and stop reasons, SSE framing, event
// orders, usage of attempts that failed. What a turn cannot be read as must never pass for an answer.
import { startMockServer, type MockServer, type MockStep } from '@quickloop/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelError } from '../errors.js';
import { failure as expectFailure } from '../testing/failure.js';
import type { Message, ModelAdapter, ToolSpec, TurnResult } from '../types.js';
import { AnthropicAdapter } from './anthropic.js';
import { GeminiAdapter } from './gemini.js';
import { OpenAIChatAdapter } from './openai-chat.js';
import { OpenAIResponsesAdapter } from './openai-responses.js';

const KEY = 'sk-vendor-apis-KEY-5d4c3b2a19';
const tools: ToolSpec[] = [{ name: 'bash', description: 'Run a shell command', schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } }];

type Api = 'anthropic' | 'responses' | 'chat' | 'gemini';

let mock: MockServer;
beforeEach(async () => {
  mock = await startMockServer({ whenEmpty: 'error' });
});
afterEach(async () => {
  await mock.close();
});

/** An adapter of `api` at the mock, its retries waiting for nothing (the waits are recorded). */
function adapter(api: Api, retries = 2) {
  const waits: number[] = [];
  const o = { apiKey: KEY, retry: { retries, random: () => 0, sleep: async (ms: number) => void waits.push(ms) }, log: () => undefined };
  const a: ModelAdapter =
    api === 'anthropic'
      ? new AnthropicAdapter({ ...o, baseURL: mock.url })
      : api === 'responses'
        ? new OpenAIResponsesAdapter({ ...o, baseURL: mock.openaiUrl })
        : api === 'chat'
          ? new OpenAIChatAdapter({ ...o, baseURL: mock.openaiUrl })
          : new GeminiAdapter({ ...o, baseURL: mock.url });
  const turn = (stream: boolean, messages: Message[] = [{ role: 'user', blocks: [{ type: 'text', text: 'go' }] }]) => a.turn({ model: 'm-1', system: 'sys', messages, tools, maxTokens: 256, stream });
  return { waits, turn };
}

/** What the mock answers, in order: each a raw body (a JSON value, or SSE frames written one by one). */
const json = (body: unknown, status = 200, headers: Record<string, string> = {}): MockStep => ({ raw: { status, headers, body: JSON.stringify(body) } });
const sse = (frames: string[], headers: Record<string, string> = {}): MockStep => ({ raw: { headers, body: frames } });

const failure = (p: Promise<TurnResult>): Promise<ModelError> => expectFailure(p, KEY);

// ---- OpenAI Responses ----
const rUsage = { input_tokens: 100, input_tokens_details: { cached_tokens: 60 }, output_tokens: 40, output_tokens_details: { reasoning_tokens: 30 }, total_tokens: 140 };
const rResponse = (output: unknown[], extra: object = {}) => ({ id: 'resp_1', object: 'response', created_at: 1, status: 'completed', error: null, incomplete_details: null, model: 'gpt-5', output, usage: rUsage, ...extra });
const rText = (text: string) => ({ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
const rEvent = (type: string, data: object, seq: number) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq, ...data })}\n\n`;

describe('openai responses', () => {
  it('a whole response still queued, in progress or cancelled is no finished answer (it would pass for one with nothing to say): transient, asked again', async () => {
    for (const status of ['queued', 'in_progress', 'cancelled']) {
      mock.push(json(rResponse([], { status, usage: null })), json(rResponse([rText('done')])));
      const r = await adapter('responses').turn(false);
      expect(r.blocks, status).toEqual([{ type: 'text', text: 'done' }]);
      expect(r.attempts, status).toBe(2);
    }
    mock.push(json(rResponse([], { status: 'in_progress', usage: null })));
    const e = await failure(adapter('responses', 0).turn(false));
    expect(e).toMatchObject({ errorKind: 'infra', transient: true, message: expect.stringContaining('in_progress') });
  });

  it('incomplete for a reason it does not name (or one newer than the SDK) is not a finish', async () => {
    for (const details of [null, { reason: 'server_side_interrupt' }]) {
      mock.push(json(rResponse([rText('half of it')], { status: 'incomplete', incomplete_details: details })));
      expect((await adapter('responses').turn(false)).stop, JSON.stringify(details)).toBe('other');
    }
  });

  it('a stream whose first event is not response.created (response.queued first, or only the final event) is read, not a harness error', async () => {
    mock.push(
      sse([rEvent('response.queued', { response: rResponse([], { status: 'queued', usage: null }) }, 0), rEvent('response.in_progress', { response: rResponse([], { status: 'in_progress', usage: null }) }, 1), rEvent('response.completed', { response: rResponse([rText('queued first')]) }, 2)]),
      sse([rEvent('response.completed', { response: rResponse([rText('only the end')]) }, 0)]),
    );
    const { turn } = adapter('responses');
    expect((await turn(true)).blocks).toEqual([{ type: 'text', text: 'queued first' }]);
    expect((await turn(true)).blocks).toEqual([{ type: 'text', text: 'only the end' }]);
  });
});

// ---- Every vendor: a 200 that is not an answer ----
const OK: Record<Api, MockStep> = {
  anthropic: json({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } }),
  responses: json(rResponse([rText('ok')])),
  chat: json({ id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-5', choices: [{ index: 0, message: { role: 'assistant', content: 'ok', refusal: null }, finish_reason: 'stop', logprobs: null }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
  gemini: json({ candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 } }),
};
/** The vendor's own error body, as a gateway may answer it with a 200. */
const ERROR_BODY: Record<Api, (type: string, message: string, code: number) => unknown> = {
  anthropic: (type, message) => ({ type: 'error', error: { type, message } }),
  responses: (type, message) => ({ error: { message, type, param: null, code: type } }),
  chat: (type, message) => ({ error: { message, type, param: null, code: null } }),
  gemini: (type, message, code) => ({ error: { code, message, status: type } }),
};
const OVERLOADED: Record<Api, string> = { anthropic: 'overloaded_error', responses: 'server_error', chat: 'server_error', gemini: 'UNAVAILABLE' };
const INVALID: Record<Api, string> = { anthropic: 'invalid_request_error', responses: 'invalid_request_error', chat: 'invalid_request_error', gemini: 'INVALID_ARGUMENT' };

describe.each(['anthropic', 'responses', 'chat', 'gemini'] as const)('%s, a 200 that is not an answer', (api) => {
  it("is the vendor's error when the body is its error object: an overload is retried, then the answer is read", async () => {
    mock.push(json(ERROR_BODY[api](OVERLOADED[api], 'The server is overloaded, try again later', 503)), OK[api]);
    const r = await adapter(api).turn(false);
    expect(r.blocks).toEqual([{ type: 'text', text: 'ok' }]);
    expect(r.attempts).toBe(2);
    mock.push(json(ERROR_BODY[api](INVALID[api], 'messages: field required', 400)));
    expect(await failure(adapter(api).turn(false))).toMatchObject({ transient: false });
  });

  it('is a ModelError the harness owns when the body is an object of nobody\'s format', async () => {
    mock.push(json({ hello: 'world' }));
    const e = await failure(adapter(api, 0).turn(false));
    expect(e.errorKind, e.message).toBe(api === 'gemini' ? 'infra' : 'harness');
  });
});

// ---- Every vendor: SSE framing as the SSE standard allows it ----
/** One SSE event: its name (Anthropic and Responses name theirs) and its data. */
interface SseEvent {
  event?: string;
  data: unknown;
}
const aEvent = (type: string, data: object): SseEvent => ({ event: type, data: { type, ...data } });
const aMessage = (usage: object) => ({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content: [], stop_reason: null, stop_sequence: null, usage });
const HELLO: Record<Api, SseEvent[]> = {
  anthropic: [
    aEvent('message_start', { message: aMessage({ input_tokens: 10, output_tokens: 1 }) }),
    aEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    aEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'hel' } }),
    aEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'lo' } }),
    aEvent('content_block_stop', { index: 0 }),
    aEvent('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } }),
    aEvent('message_stop', {}),
  ],
  responses: [
    { event: 'response.created', data: { type: 'response.created', sequence_number: 0, response: rResponse([], { status: 'in_progress', usage: null }) } },
    { event: 'response.output_item.added', data: { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { ...rText(''), status: 'in_progress', content: [] } } },
    { event: 'response.content_part.added', data: { type: 'response.content_part.added', sequence_number: 2, output_index: 0, content_index: 0, item_id: 'msg_1', part: { type: 'output_text', text: '', annotations: [] } } },
    { event: 'response.output_text.delta', data: { type: 'response.output_text.delta', sequence_number: 3, output_index: 0, content_index: 0, item_id: 'msg_1', delta: 'hello' } },
    { event: 'response.output_item.done', data: { type: 'response.output_item.done', sequence_number: 4, output_index: 0, item: rText('hello') } },
    { event: 'response.completed', data: { type: 'response.completed', sequence_number: 5, response: rResponse([rText('hello')]) } },
  ],
  chat: [
    { data: { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5', choices: [{ index: 0, delta: { role: 'assistant', content: 'hel' }, finish_reason: null }] } },
    { data: { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5', choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: null }] } },
    { data: { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] } },
    { data: { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } } },
    { data: '[DONE]' },
  ],
  gemini: [
    { data: { candidates: [{ content: { role: 'model', parts: [{ text: 'hel' }] }, index: 0 }], usageMetadata: { promptTokenCount: 10 }, modelVersion: 'gemini-2.5-flash' } },
    { data: { candidates: [{ content: { role: 'model', parts: [{ text: 'lo' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }, modelVersion: 'gemini-2.5-flash' } },
  ],
};

/** Writes events in one of the framings the SSE standard allows (each event one write). */
function framed(events: SseEvent[], how: 'lf' | 'crlf' | 'cr' | 'comments' | 'multiline' | 'fields'): string[] {
  const eol = how === 'crlf' ? '\r\n' : how === 'cr' ? '\r' : '\n';
  return events.map((e, i) => {
    const text = typeof e.data === 'string' ? e.data : JSON.stringify(e.data, null, how === 'multiline' ? 1 : undefined);
    const lines: string[] = [];
    if (how === 'comments') lines.push(': keep-alive');
    if (how === 'fields') lines.push(`id: ${i + 1}`, 'retry: 3000');
    if (e.event !== undefined) lines.push(how === 'fields' ? `event:${e.event}` : `event: ${e.event}`);
    // Several data lines are one data, joined by newlines; a field's first space is optional.
    for (const line of text.split('\n')) lines.push(how === 'fields' ? `data:${line}` : `data: ${line}`);
    return `${how === 'comments' ? `:${eol}` : ''}${lines.join(eol)}${eol}${eol}`;
  });
}

describe.each(['anthropic', 'responses', 'chat', 'gemini'] as const)('%s, an SSE stream framed as the standard allows', (api) => {
  it.each(['lf', 'crlf', 'cr', 'comments', 'multiline', 'fields'] as const)('%s: the answer is read, in one attempt', async (how) => {
    mock.push(sse(framed(HELLO[api], how)));
    const r = await adapter(api).turn(true);
    expect(r.blocks).toEqual([{ type: 'text', text: 'hello' }]);
    expect(r.stop).toBe('end_turn');
    expect(r.attempts).toBe(1);
  });

  it('a last event with no blank line after it is not dispatched (the standard drops it): a stream cut before its end, asked again, never an unreadable answer', async () => {
    const frames = framed(HELLO[api], 'lf');
    frames[frames.length - 1] = frames.at(-1)!.replace(/\n\n$/, '\n');
    mock.push(sse(frames), sse(framed(HELLO[api], 'lf')));
    const r = await adapter(api).turn(true);
    expect(r.blocks).toEqual([{ type: 'text', text: 'hello' }]);
    // Chat's last event is [DONE], after the finish reason: nothing of the answer was lost.
    expect(r.attempts).toBe(api === 'chat' ? 1 : 2);
  });

  it('a stream cut inside an event (half a line of JSON, then the end) is a cut connection: transient', async () => {
    const frames = framed(HELLO[api], 'lf');
    const last = frames.pop()!;
    mock.push(sse([...frames, last.slice(0, Math.floor(last.length / 2))]));
    if (api === 'chat') {
      // The half event is [DONE]'s: the answer was whole before it.
      expect((await adapter(api, 0).turn(true)).blocks).toEqual([{ type: 'text', text: 'hello' }]);
      return;
    }
    expect(await failure(adapter(api, 0).turn(true))).toMatchObject({ errorKind: 'infra', transient: true });
  });
});

// ---- Anthropic Messages: stream events in odd but legal orders ----
const aFrame = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const aStart = (usage: object = { input_tokens: 10, output_tokens: 1 }) => aFrame('message_start', { message: aMessage(usage) });
const aEnd = (stop: string, usage: object = { output_tokens: 20 }) => [aFrame('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage }), aFrame('message_stop', {})];
const aToolStart = (index: number, id: string) => aFrame('content_block_start', { index, content_block: { type: 'tool_use', id, name: 'bash', input: {} } });
const aJson = (index: number, partial_json: string) => aFrame('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });

describe('anthropic, stream events in odd but legal orders', () => {
  it('content blocks whose indexes leave gaps (0, 2, 5): each delta goes to the block its index names', async () => {
    mock.push(
      sse([
        aStart(),
        aFrame('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
        aFrame('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Two calls.' } }),
        aFrame('content_block_stop', { index: 0 }),
        aToolStart(2, 'toolu_a'),
        aJson(2, '{"command": "ls"}'),
        aFrame('content_block_stop', { index: 2 }),
        aToolStart(5, 'toolu_b'),
        aJson(5, '{"command": "pwd"}'),
        aFrame('content_block_stop', { index: 5 }),
        ...aEnd('tool_use'),
      ]),
    );
    const r = await adapter('anthropic').turn(true);
    expect(r.blocks).toEqual([
      { type: 'text', text: 'Two calls.' },
      { type: 'tool_call', id: 'toolu_a', name: 'bash', input: { command: 'ls' } },
      { type: 'tool_call', id: 'toolu_b', name: 'bash', input: { command: 'pwd' } },
    ]);
  });

  it('two tool calls streamed at once (their deltas interleaved, pings and empty deltas between): both read whole, in index order', async () => {
    mock.push(
      sse([
        aFrame('ping', {}),
        aStart(),
        aToolStart(1, 'toolu_b'),
        aToolStart(0, 'toolu_a'),
        aJson(0, ''),
        aJson(1, '{"comm'),
        aFrame('ping', {}),
        aJson(0, '{"command": "echo a"}'),
        aJson(1, 'and": "echo b"}'),
        aFrame('content_block_stop', { index: 1 }),
        aFrame('content_block_stop', { index: 0 }),
        aFrame('vendor_future_event', { anything: true }),
        ...aEnd('tool_use'),
      ]),
    );
    const r = await adapter('anthropic').turn(true);
    expect(r.blocks).toEqual([
      { type: 'tool_call', id: 'toolu_a', name: 'bash', input: { command: 'echo a' } },
      { type: 'tool_call', id: 'toolu_b', name: 'bash', input: { command: 'echo b' } },
    ]);
    // What is replayed next turn is the content as the API numbered it.
    expect((r.native as { id: string }[]).map((b) => b.id)).toEqual(['toolu_a', 'toolu_b']);
  });

  it('a tool input that is not JSON once whole is not run as whatever part of it parsed', async () => {
    mock.push(sse([aStart(), aToolStart(0, 'toolu_a'), aJson(0, '{"command": "rm -rf /tmp/x" "y"}'), aFrame('content_block_stop', { index: 0 }), ...aEnd('tool_use')]));
    const r = await adapter('anthropic').turn(true);
    expect(r.blocks).toEqual([{ type: 'tool_call', id: 'toolu_a', name: 'bash', input: {}, invalid: expect.stringMatching(/not JSON/) }]);
  });
});

// ---- Every vendor: what an attempt that failed after its stream reported usage was billed ----
/** A stream that reports usage (input 1000 uncached, 200 cache reads, 50 output), then fails with the vendor's overload. */
const BILLED_THEN_FAILED: Record<Api, string[]> = {
  anthropic: [aStart({ input_tokens: 1000, cache_read_input_tokens: 200, cache_creation_input_tokens: 0, output_tokens: 1 }), aFrame('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }), aFrame('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Let me' } }), aFrame('message_delta', { delta: { stop_reason: null, stop_sequence: null }, usage: { output_tokens: 50 } }), aFrame('error', { error: { type: 'overloaded_error', message: 'Overloaded' } })],
  responses: [
    rEvent('response.created', { response: rResponse([], { status: 'in_progress', usage: null }) }, 0),
    rEvent('response.failed', { response: rResponse([], { status: 'failed', error: { code: 'server_error', message: 'The server had an error.' }, usage: { input_tokens: 1200, input_tokens_details: { cached_tokens: 200 }, output_tokens: 50, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 1250 } }) }, 1),
  ],
  chat: [
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5', choices: [{ index: 0, delta: { role: 'assistant', content: 'Let me' }, finish_reason: null }] })}\n\n`,
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5', choices: [], usage: { prompt_tokens: 1200, completion_tokens: 50, total_tokens: 1250, prompt_tokens_details: { cached_tokens: 200 } } })}\n\n`,
    `data: ${JSON.stringify({ error: { message: 'The server is overloaded', type: 'server_error', param: null, code: null } })}\n\n`,
  ],
  gemini: [
    `data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'Let me' }] }, index: 0 }], usageMetadata: { promptTokenCount: 1200, cachedContentTokenCount: 200, candidatesTokenCount: 50, totalTokenCount: 1250 } })}\n\n`,
    `data: ${JSON.stringify({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } })}\n\n`,
  ],
};
const BILLED = { input: 1000, cache_read: 200, cache_write: 0, output: 50, reasoning: 0 };
const twice = (u: typeof BILLED) => ({ input: u.input * 2, cache_read: u.cache_read * 2, cache_write: u.cache_write * 2, output: u.output * 2, reasoning: u.reasoning * 2 });

describe.each(['anthropic', 'responses', 'chat', 'gemini'] as const)('%s, an attempt billed before it failed', (api) => {
  it('counts what its stream reported: apart from the answer\'s usage on the turn that retried it, and on the error of a turn that failed', async () => {
    mock.push(sse(BILLED_THEN_FAILED[api]), sse(framed(HELLO[api], 'lf')));
    const { turn } = adapter(api);
    const r = await turn(true);
    expect(r.blocks).toEqual([{ type: 'text', text: 'hello' }]);
    expect(r.attempts).toBe(2);
    expect(r.failedUsage).toEqual(BILLED);
    expect(r.usage).toEqual(api === 'responses' ? { input: 40, cache_read: 60, cache_write: 0, output: 40, reasoning: 30 } : { input: 10, cache_read: 0, cache_write: 0, output: 5, reasoning: 0 });
    // Every attempt failed: the error carries the sum, and each retry notice its own attempt's.
    mock.push(sse(BILLED_THEN_FAILED[api]), sse(BILLED_THEN_FAILED[api]));
    const noticed: unknown[] = [];
    const a = api === 'anthropic' ? new AnthropicAdapter({ apiKey: KEY, baseURL: mock.url, retry: { retries: 1, sleep: async () => undefined } }) : api === 'responses' ? new OpenAIResponsesAdapter({ apiKey: KEY, baseURL: mock.openaiUrl, retry: { retries: 1, sleep: async () => undefined } }) : api === 'chat' ? new OpenAIChatAdapter({ apiKey: KEY, baseURL: mock.openaiUrl, retry: { retries: 1, sleep: async () => undefined } }) : new GeminiAdapter({ apiKey: KEY, baseURL: mock.url, retry: { retries: 1, sleep: async () => undefined } });
    const e = await failure(a.turn({ model: 'm-1', system: 'sys', messages: [{ role: 'user', blocks: [{ type: 'text', text: 'go' }] }], maxTokens: 256, stream: true, onRetry: ({ error }) => void noticed.push(error.usage) }));
    expect(e).toMatchObject({ errorKind: 'infra', transient: true, usage: twice(BILLED) });
    expect(noticed).toEqual([BILLED]);
  });

  it('counts nothing for an attempt refused with an HTTP error (no answer was made)', async () => {
    mock.push({ error: { status: 529, type: 'overloaded_error' } }, sse(framed(HELLO[api], 'lf')));
    const r = await adapter(api).turn(true);
    expect(r.attempts).toBe(2);
    expect(r.failedUsage).toBeUndefined();
  });
});

// ---- Gemini finish reasons ----
describe('gemini finish reasons', () => {
  const g = (parts: unknown[], finishReason: string) => json({ candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 2, totalTokenCount: 12 } });
  it('UNEXPECTED_TOOL_CALL (a tool call the API could not take, the twin of MALFORMED_FUNCTION_CALL) is a bad sample asked again, not a stop', async () => {
    mock.push(g([], 'UNEXPECTED_TOOL_CALL'), g([{ text: 'ok' }], 'STOP'));
    const r = await adapter('gemini').turn(false);
    expect(r.blocks).toEqual([{ type: 'text', text: 'ok' }]);
    expect(r.attempts).toBe(2);
    // What the thrown-away answer was billed counts.
    expect(r.failedUsage).toEqual({ input: 10, cache_read: 0, cache_write: 0, output: 2, reasoning: 0 });
  });
});

// ---- Rate limits: the wait the API asks for ----
describe.each(['anthropic', 'responses', 'chat'] as const)('%s, a 429 that says when to come back', (api) => {
  const limited = (headers: Record<string, string>): MockStep => json(api === 'anthropic' ? { type: 'error', error: { type: 'rate_limit_error', message: 'Rate limit reached' } } : { error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } }, 429, headers);

  it('retry-after as an HTTP date is a floor of the wait, as retry-after in seconds is', async () => {
    const at = new Date(Date.now() + 40_000).toUTCString();
    mock.push(limited({ 'retry-after': at }), OK[api]);
    const { waits, turn } = adapter(api);
    await turn(false);
    expect(waits).toHaveLength(1);
    // The date has whole seconds: the wait is what is left of the 40 s, less than a second of it gone.
    expect(waits[0]).toBeGreaterThan(30_000);
    expect(waits[0]).toBeLessThanOrEqual(40_000);
  });

  if (api !== 'anthropic') it('with no retry-after, the reset of the limit it ran out of (x-ratelimit-reset-*, as OpenAI sends them) is the floor', async () => {
    mock.push(limited({ 'x-ratelimit-remaining-requests': '59', 'x-ratelimit-reset-requests': '1s', 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '6m0.5s' }), OK[api]);
    const { waits, turn } = adapter(api);
    await turn(false);
    expect(waits).toEqual([360_500]);
  });
});

// ---- Every vendor: tool calls and bodies with fields missing or of the wrong type ----
/** One tool call without an id (null) whose name is not a string and whose input is a list, then a normal one. */
const ODD_CALLS: Record<Api, MockStep> = {
  anthropic: json({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content: [{ type: 'tool_use', id: null, name: 7, input: [1, 2] }, { type: 'tool_use', id: '', name: 'bash', input: { command: 'ls' } }], stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } }),
  responses: json(rResponse([{ type: 'function_call', id: 'fc_1', call_id: null, name: 7, arguments: '[1,2]', status: 'completed' }, { type: 'function_call', id: 'fc_2', call_id: '', name: 'bash', arguments: '{"command":"ls"}', status: 'completed' }])),
  chat: json({ id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-5', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: null, type: 'function', function: { name: 7, arguments: '[1,2]' } }, { id: '', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } }] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
  gemini: json({ candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: null, name: 7, args: [1, 2] } }, { functionCall: { id: '', name: 'bash', args: { command: 'ls' } } }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 } }),
};
/** A body whose lists hold a null where an item should be. */
const NULL_ITEMS: Record<Api, MockStep> = {
  anthropic: json({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content: [null, { type: 'text' }, { type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } }),
  responses: json(rResponse([null, { type: 'message', id: 'm', role: 'assistant', status: 'completed', content: [null, { type: 'output_text' }, { type: 'output_text', text: 'ok', annotations: [] }] }])),
  chat: json({ id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-5', choices: [{ index: 0, message: { role: 'assistant', content: 'ok', tool_calls: [null, { id: 'x', type: 'function', function: null }] }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
  gemini: json({ candidates: [{ content: { role: 'model', parts: [null, { text: 5 }, { text: 'ok' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 } }),
};

describe.each(['anthropic', 'responses', 'chat', 'gemini'] as const)('%s, fields missing or of the wrong type', (api) => {
  it('a tool call with no id, a name that is no string or an input that is no object is still a call the loop can answer: an id made up, the input {} and why', async () => {
    mock.push(ODD_CALLS[api]);
    const r = await adapter(api).turn(false);
    const calls = r.blocks.filter((b) => b.type === 'tool_call');
    expect(calls).toHaveLength(2);
    for (const c of calls) {
      expect(typeof c.id === 'string' && c.id !== '', JSON.stringify(c)).toBe(true);
      expect(typeof c.name).toBe('string');
    }
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
    expect(calls[0]).toMatchObject({ input: {}, invalid: expect.stringMatching(/not a JSON object/) });
    expect(calls[1]).toMatchObject({ name: 'bash', input: { command: 'ls' } });
  });

  it('a null where a content item should be is skipped, never a TypeError; a text with no text is no text', async () => {
    mock.push(NULL_ITEMS[api]);
    // The openai SDK itself cannot read such a response (it gathers the output's text before handing it on).
    if (api === 'responses') expect(await failure(adapter(api, 0).turn(false))).toMatchObject({ errorKind: 'harness' });
    else expect((await adapter(api).turn(false)).blocks).toEqual([{ type: 'text', text: 'ok' }]);
  });
});

describe('what a turn says beside its blocks, of the wrong type', () => {
  it('a refusal category or explanation, or a response id, that is not text is text or nothing (agent.turn carries them as strings)', async () => {
    mock.push(
      json({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content: [], stop_reason: 'refusal', stop_sequence: null, stop_details: { type: 'refusal', category: 5, explanation: { why: 1 } }, usage: { input_tokens: 1, output_tokens: 1 } }),
      json({ id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-5', choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: true }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
      json({ candidates: [{ content: { role: 'model', parts: [{ text: 'x' }] }, finishReason: 'STOP', index: 0 }], responseId: 123, modelVersion: 7 }),
    );
    const a = await adapter('anthropic').turn(false);
    expect(a).toMatchObject({ stop: 'refusal', refusal: { category: '5' } });
    expect(a.refusal?.explanation).toBeUndefined();
    const c = await adapter('chat').turn(false);
    expect(c.stop).toBe('refusal');
    expect(c.refusal).toEqual({ explanation: 'true' });
    const g = await adapter('gemini').turn(false);
    expect(g.requestId).toBe('123');
    expect(g.model).toBeUndefined();
  });
});

describe('openai responses, stream events in odd orders', () => {
  const fc = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'bash', arguments: '{"command":"ls"}', status: 'completed' };
  const created = rEvent('response.created', { response: rResponse([], { status: 'in_progress', usage: null }) }, 0);
  it('events the SDK cannot place (an output_index gap, a delta before its part, arguments before their item) do not fail the turn: the final event holds the whole response', async () => {
    mock.push(
      sse([
        created,
        rEvent('response.output_item.added', { output_index: 1, item: { ...rText(''), status: 'in_progress', content: [] } }, 1),
        rEvent('response.output_text.delta', { output_index: 1, content_index: 0, item_id: 'msg_1', delta: 'hi' }, 2),
        rEvent('response.completed', { response: rResponse([{ type: 'reasoning', id: 'rs_1', summary: [] }, rText('hi')]) }, 3),
      ]),
      sse([created, rEvent('response.function_call_arguments.delta', { output_index: 0, item_id: 'fc_1', delta: '{"command":"ls"}' }, 1), rEvent('response.output_item.added', { output_index: 0, item: { ...fc, arguments: '' } }, 2), rEvent('response.completed', { response: rResponse([fc]) }, 3)]),
    );
    const { turn } = adapter('responses');
    expect((await turn(true)).blocks).toEqual([{ type: 'text', text: 'hi' }]);
    expect((await turn(true)).blocks).toEqual([{ type: 'tool_call', id: 'call_1', name: 'bash', input: { command: 'ls' } }]);
  });

  it('a final event whose response leaves out the output streamed before it does not lose the answer', async () => {
    mock.push(
      sse([
        created,
        rEvent('response.output_item.added', { output_index: 0, item: { ...rText(''), status: 'in_progress', content: [] } }, 1),
        rEvent('response.content_part.added', { output_index: 0, content_index: 0, item_id: 'msg_1', part: { type: 'output_text', text: '', annotations: [] } }, 2),
        rEvent('response.output_text.delta', { output_index: 0, content_index: 0, item_id: 'msg_1', delta: 'the answer' }, 3),
        rEvent('response.output_item.done', { output_index: 0, item: rText('the answer') }, 4),
        rEvent('response.completed', { response: rResponse([]) }, 5),
      ]),
    );
    expect((await adapter('responses').turn(true)).blocks).toEqual([{ type: 'text', text: 'the answer' }]);
  });
});

describe('openai chat, chunks in odd shapes', () => {
  const data = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  const chunk = (delta: object, finish_reason: string | null = null) => data({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5', choices: [{ index: 0, delta, finish_reason }] });
  const call = (index: number, id: string, command: string) => ({ index, id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } });
  it('tool call indexes that leave a gap (0, 2) or start at 1, and a first delta with no role, are read as the calls they are', async () => {
    mock.push(
      sse([chunk({ role: 'assistant', tool_calls: [call(0, 'a', 'ls')] }), chunk({ tool_calls: [call(2, 'b', 'pwd')] }), chunk({}, 'tool_calls'), 'data: [DONE]\n\n']),
      sse([chunk({ role: 'assistant', tool_calls: [{ ...call(1, 'b', ''), function: { name: 'bash', arguments: '{"comm' } }] }), chunk({ tool_calls: [{ index: 1, function: { arguments: 'and":"pwd"}' } }] }), chunk({}, 'tool_calls'), 'data: [DONE]\n\n']),
      sse([chunk({ content: 'hel' }), chunk({ content: 'lo' }), chunk({}, 'stop'), 'data: [DONE]\n\n']),
    );
    const { turn } = adapter('chat');
    expect((await turn(true)).blocks).toEqual([
      { type: 'tool_call', id: 'a', name: 'bash', input: { command: 'ls' } },
      { type: 'tool_call', id: 'b', name: 'bash', input: { command: 'pwd' } },
    ]);
    expect((await turn(true)).blocks).toEqual([{ type: 'tool_call', id: 'b', name: 'bash', input: { command: 'pwd' } }]);
    expect((await turn(true)).blocks).toEqual([{ type: 'text', text: 'hello' }]);
  });
});

describe('anthropic, SSE events without an event line', () => {
  it('an event that names its type only in its data (no `event:` field, which SSE allows) is read, not dropped', async () => {
    const frames = framed(HELLO.anthropic, 'lf').map((f) => f.replace(/^event: .*\n/, ''));
    mock.push(sse(frames));
    const r = await adapter('anthropic').turn(true);
    expect(r.blocks).toEqual([{ type: 'text', text: 'hello' }]);
    expect(r.attempts).toBe(1);
  });
});
