// The API adapters against a third mock, written from the vendors' published request and response
// formats by someone who had not read the other two: each reply is the raw bytes a vendor documents
// (JSON bodies, SSE frames as the vendor frames them), so nothing of our own mocks' shape leaks in.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelError } from '../errors.js';
import { failure as expectFailure } from '../testing/failure.js';
import type { Message, ModelAdapter, ToolSpec, TurnResult } from '../types.js';
import { AnthropicAdapter } from './anthropic.js';
import { GeminiAdapter } from './gemini.js';
import { OpenAIChatAdapter } from './openai-chat.js';
import { OpenAIResponsesAdapter } from './openai-responses.js';

const KEY = 'sk-docs-mock-KEY-7a6b5c4d3e';
const tools: ToolSpec[] = [{ name: 'bash', description: 'Run a shell command', schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } }];

/** One scripted answer: a status, headers, and a JSON body or raw SSE frames (each written as it is). */
interface Reply {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  /** SSE frames, each a whole `event: …\ndata: …\n\n` block or just a data object (then framed as `data: JSON`). */
  sse?: Array<string | object>;
  /** Frame separator (Google frames with CRLF). */
  eol?: string;
}

interface Seen {
  url: string;
  headers: IncomingMessage['headers'];
  body: any;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function mock(replies: Reply[]) {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      seen.push({ url: req.url ?? '', headers: req.headers, body: raw ? JSON.parse(raw) : undefined });
      const r = replies.shift();
      if (!r) {
        res.writeHead(599, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"the mock has no more replies"}}');
        return;
      }
      if (r.sse) {
        const eol = r.eol ?? '\n';
        res.writeHead(r.status ?? 200, { 'content-type': 'text/event-stream', ...r.headers });
        for (const f of r.sse) res.write(typeof f === 'string' ? f : `data: ${JSON.stringify(f)}${eol}${eol}`);
        res.end();
        return;
      }
      res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers });
      res.end(typeof r.json === 'string' ? r.json : JSON.stringify(r.json ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen };
}

type Api = 'anthropic' | 'responses' | 'chat' | 'gemini';

async function adapter(api: Api, replies: Reply[], retries = 2) {
  const m = await mock(replies);
  const waits: number[] = [];
  const retry = { retries, random: () => 0, sleep: async (ms: number) => void waits.push(ms) };
  const o = { apiKey: KEY, retry, log: () => undefined };
  const a: ModelAdapter =
    api === 'anthropic' ? new AnthropicAdapter({ ...o, baseURL: m.url }) : api === 'responses' ? new OpenAIResponsesAdapter({ ...o, baseURL: `${m.url}/v1` }) : api === 'chat' ? new OpenAIChatAdapter({ ...o, baseURL: `${m.url}/v1` }) : new GeminiAdapter({ ...o, baseURL: m.url });
  const turn = (stream: boolean, messages: Message[] = [{ role: 'user', blocks: [{ type: 'text', text: 'go' }] }]) => a.turn({ model: 'm-1', system: 'sys', messages, tools, maxTokens: 256, stream });
  return { ...m, waits, turn };
}

const failure = (p: Promise<TurnResult>): Promise<ModelError> => expectFailure(p, KEY);

// ---- Anthropic Messages: bodies and named SSE events as the Messages API documents them ----
const aEvent = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const aMessage = (content: unknown[], stop_reason: string | null, usage: object = { input_tokens: 10, output_tokens: 5 }) => ({
  id: 'msg_01',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-6',
  content,
  stop_reason,
  stop_sequence: null,
  usage,
});
const aStart = (usage: object = { input_tokens: 10, output_tokens: 1 }) => aEvent('message_start', { message: { ...aMessage([], null, usage) } });
const aStop = (stop_reason: string, usage: object = { output_tokens: 20 }) => [aEvent('message_delta', { delta: { stop_reason, stop_sequence: null }, usage }), aEvent('message_stop', {})];
const aErr = (status: number, type: string, message: string, headers: Record<string, string> = {}): Reply => ({ status, headers, json: { type: 'error', error: { type, message }, request_id: 'req_err' } });

describe('anthropic, as the Messages API documents it', () => {
  it('does not run a tool call cut off at max_tokens while its input was being streamed: the partial JSON is no command', async () => {
    const { turn } = await adapter('anthropic', [
      {
        sse: [
          aStart(),
          aEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
          aEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Cleaning up.' } }),
          aEvent('content_block_stop', { index: 0 }),
          aEvent('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'bash', input: {} } }),
          aEvent('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"command": "rm -rf build/cache' } }),
          aEvent('content_block_stop', { index: 1 }),
          ...aStop('max_tokens'),
        ],
      },
    ]);
    const r = await turn(true);
    expect(r.stop).toBe('max_tokens');
    const call = r.blocks.find((b) => b.type === 'tool_call');
    expect(call, JSON.stringify(r.blocks)).toBeDefined();
    expect(call).toMatchObject({ type: 'tool_call', id: 'toolu_1', name: 'bash', input: {} });
    expect((call as { invalid?: string }).invalid).toMatch(/cut off/);
  });

  it('does not run the last tool call of a non-streamed answer cut at max_tokens either, but runs the complete ones before it', async () => {
    const { turn } = await adapter('anthropic', [
      {
        json: aMessage(
          [
            { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } },
            { type: 'tool_use', id: 'toolu_2', name: 'bash', input: { command: 'rm -rf bu' } },
          ],
          'max_tokens',
        ),
      },
    ]);
    const r = await turn(false);
    expect(r.blocks[0]).toEqual({ type: 'tool_call', id: 'toolu_1', name: 'bash', input: { command: 'ls' } });
    expect(r.blocks[1]).toMatchObject({ type: 'tool_call', id: 'toolu_2', input: {} });
    expect((r.blocks[1] as { invalid?: string }).invalid).toMatch(/cut off/);
  });

  it('a 400 saying input length and max_tokens exceed the context limit is a context overflow, not a config error', async () => {
    const { turn, seen } = await adapter('anthropic', [aErr(400, 'invalid_request_error', 'input length and `max_tokens` exceed context limit: 195000 + 16384 > 200000, decrease input length or `max_tokens` and try again')]);
    const e = await failure(turn(false));
    expect(e.errorKind).toBe('context_overflow');
    expect(e.transient).toBe(false);
    expect(seen).toHaveLength(1);
  });

  it('skips unknown and server-side content blocks (and their deltas) in a stream, keeps them for replay, and reads the tool call', async () => {
    const { turn } = await adapter('anthropic', [
      {
        sse: [
          aStart(),
          'event: ping\ndata: {"type": "ping"}\n\n',
          aEvent('content_block_start', { index: 0, content_block: { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' } }),
          aEvent('content_block_stop', { index: 0 }),
          aEvent('content_block_start', { index: 1, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } }),
          aEvent('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"query": "x"}' } }),
          aEvent('content_block_stop', { index: 1 }),
          aEvent('content_block_start', { index: 2, content_block: { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] } }),
          aEvent('content_block_stop', { index: 2 }),
          aEvent('content_block_start', { index: 3, content_block: { type: 'tool_use', id: 'toolu_9', name: 'bash', input: {} } }),
          aEvent('content_block_delta', { index: 3, delta: { type: 'input_json_delta', partial_json: '{"comm' } }),
          'event: ping\ndata: {"type": "ping"}\n\n',
          aEvent('content_block_delta', { index: 3, delta: { type: 'input_json_delta', partial_json: 'and": "ls -la"}' } }),
          aEvent('content_block_stop', { index: 3 }),
          ...aStop('tool_use'),
        ],
      },
    ]);
    const r = await turn(true);
    expect(r.blocks).toEqual([{ type: 'tool_call', id: 'toolu_9', name: 'bash', input: { command: 'ls -la' } }]);
    expect(r.stop).toBe('tool_use');
    expect((r.native as unknown[]).map((b: any) => b.type)).toEqual(['redacted_thinking', 'server_tool_use', 'web_search_tool_result', 'tool_use']);
  });

  it('an overloaded error event after part of a tool call was streamed is retried, never run half-made', async () => {
    const { turn, seen, waits } = await adapter('anthropic', [
      {
        sse: [
          aStart(),
          aEvent('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'bash', input: {} } }),
          aEvent('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"command": "rm -rf /tmp/x' } }),
          `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`,
        ],
      },
      { sse: [aStart(), aEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }), aEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'done' } }), aEvent('content_block_stop', { index: 0 }), ...aStop('end_turn')] },
    ]);
    const r = await turn(true);
    expect(r.blocks).toEqual([{ type: 'text', text: 'done' }]);
    expect(r.attempts).toBe(2);
    expect(seen).toHaveLength(2);
    expect(waits).toHaveLength(1);
  });

  it('reads the usage message_delta completes (input and cache counters cumulative), not only output_tokens', async () => {
    const { turn } = await adapter('anthropic', [
      {
        sse: [
          aStart({ input_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 }),
          aEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
          aEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'hi' } }),
          aEvent('content_block_stop', { index: 0 }),
          ...aStop('end_turn', { input_tokens: 50, cache_creation_input_tokens: 1000, cache_read_input_tokens: 2000, output_tokens: 30 }),
        ],
      },
    ]);
    const r = await turn(true);
    expect(r.usage).toEqual({ input: 50, cache_read: 2000, cache_write: 1000, output: 30, reasoning: 0 });
  });

  it('a 529 and a 429 with retry-after are retried with the hint as the floor; a 400, 401 or 404 is not retried', async () => {
    const { turn, waits, seen } = await adapter('anthropic', [aErr(529, 'overloaded_error', 'Overloaded'), aErr(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', { 'retry-after': '7' }), { json: aMessage([{ type: 'text', text: 'ok' }], 'end_turn') }]);
    const r = await turn(false);
    expect(r.attempts).toBe(3);
    expect(seen).toHaveLength(3);
    expect(waits[1]).toBe(7000);
    for (const [status, type] of [
      [400, 'invalid_request_error'],
      [401, 'authentication_error'],
      [404, 'not_found_error'],
    ] as const) {
      const t = await adapter('anthropic', [aErr(status, type, `${type}: model: m-1`), { json: aMessage([{ type: 'text', text: 'ok' }], 'end_turn') }]);
      const e = await failure(t.turn(false));
      expect(e.errorKind, `${status}`).toBe('config');
      expect(e.status).toBe(status);
      expect(t.seen, `${status}`).toHaveLength(1);
    }
  });
});

// ---- OpenAI Responses ----
const rResponse = (output: unknown[], extra: object = {}) => ({
  id: 'resp_1',
  object: 'response',
  created_at: 1,
  status: 'completed',
  error: null,
  incomplete_details: null,
  model: 'gpt-5-2025-08-07',
  output,
  usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 60 }, output_tokens: 40, output_tokens_details: { reasoning_tokens: 30 }, total_tokens: 140 },
  ...extra,
});
const rEvent = (type: string, data: object, seq: number) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq, ...data })}\n\n`;
const fnCall = (call_id: string, args: string) => ({ type: 'function_call', id: `fc_${call_id}`, call_id, name: 'bash', arguments: args, status: 'completed' });

describe('openai responses, as the Responses API documents it', () => {
  it('two function calls, one with arguments that are not JSON: the good one is read, the bad one marked, usage counted once', async () => {
    const { turn } = await adapter('responses', [{ json: rResponse([{ type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'enc' }, fnCall('call_a', '{"command":"ls"}'), fnCall('call_b', '{"command": "echo hi"')]) }]);
    const r = await turn(false);
    expect(r.stop).toBe('tool_use');
    expect(r.blocks[0]).toEqual({ type: 'tool_call', id: 'call_a', name: 'bash', input: { command: 'ls' } });
    expect(r.blocks[1]).toMatchObject({ type: 'tool_call', id: 'call_b', input: {} });
    expect((r.blocks[1] as { invalid?: string }).invalid).toMatch(/not JSON/);
    expect(r.usage).toEqual({ input: 40, cache_read: 60, cache_write: 0, output: 40, reasoning: 30 });
  });

  it('a streamed response.incomplete (max_output_tokens) cut inside a function call gives no runnable call', async () => {
    const partial = { ...fnCall('call_a', ''), status: 'in_progress' };
    const { turn } = await adapter('responses', [
      {
        sse: [
          rEvent('response.created', { response: rResponse([], { status: 'in_progress', usage: null }) }, 0),
          rEvent('response.output_item.added', { output_index: 0, item: partial }, 1),
          rEvent('response.function_call_arguments.delta', { output_index: 0, item_id: 'fc_call_a', delta: '{"command": "rm -rf bu' }, 2),
          rEvent('response.incomplete', { response: rResponse([{ ...partial, arguments: '{"command": "rm -rf bu', status: 'incomplete' }], { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }) }, 3),
        ],
      },
    ]);
    const r = await turn(true);
    expect(r.stop).toBe('max_tokens');
    expect(r.blocks).toHaveLength(1);
    expect((r.blocks[0] as { invalid?: string }).invalid).toBeDefined();
  });

  it('a streamed response.failed with a server error is retried; an error event for a rate limit too', async () => {
    const { turn, seen } = await adapter('responses', [
      { sse: [rEvent('response.created', { response: rResponse([], { status: 'in_progress' }) }, 0), rEvent('response.failed', { response: rResponse([], { status: 'failed', error: { code: 'server_error', message: 'The server had an error processing your request.' } }) }, 1)] },
      { sse: [rEvent('error', { code: 'rate_limit_exceeded', message: 'Rate limit reached', param: null }, 0)] },
      { sse: [rEvent('response.created', { response: rResponse([], { status: 'in_progress' }) }, 0), rEvent('response.completed', { response: rResponse([{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }]) }, 1)] },
    ]);
    const r = await turn(true);
    expect(r.blocks).toEqual([{ type: 'text', text: 'ok' }]);
    expect(seen).toHaveLength(3);
  });

  it('a refusal part streamed with its deltas is a refusal stop with the words', async () => {
    const msg = { type: 'message', id: 'msg_1', role: 'assistant', status: 'in_progress', content: [] };
    const { turn } = await adapter('responses', [
      {
        sse: [
          rEvent('response.created', { response: rResponse([], { status: 'in_progress' }) }, 0),
          rEvent('response.output_item.added', { output_index: 0, item: msg }, 1),
          rEvent('response.content_part.added', { output_index: 0, item_id: 'msg_1', content_index: 0, part: { type: 'refusal', refusal: '' } }, 2),
          rEvent('response.refusal.delta', { output_index: 0, item_id: 'msg_1', content_index: 0, delta: "I can't help" }, 3),
          rEvent('response.refusal.done', { output_index: 0, item_id: 'msg_1', content_index: 0, refusal: "I can't help with that." }, 4),
          rEvent('response.completed', { response: rResponse([{ ...msg, status: 'completed', content: [{ type: 'refusal', refusal: "I can't help with that." }] }]) }, 5),
        ],
      },
    ]);
    const r = await turn(true);
    expect(r.stop).toBe('refusal');
    expect(r.refusal).toEqual({ explanation: "I can't help with that." });
  });

  it('a 429 insufficient_quota is not retried; a 500 and a 503 are, honouring retry-after-ms', async () => {
    const quota = await adapter('responses', [{ status: 429, json: { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } } }]);
    const broke = await failure(quota.turn(false));
    expect(broke.errorKind).toBe('config');
    expect(broke.noCredit).toBe(true);
    expect(quota.seen).toHaveLength(1);
    // One request larger than the account's tokens-per-minute limit: no wait makes it fit, so it is the run's room that ran out.
    const tpm = await adapter('responses', [{ status: 429, json: { error: { message: 'Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 45120. The input or output tokens must be reduced in order to run successfully.', type: 'tokens', param: null, code: 'rate_limit_exceeded' } } }]);
    expect(await failure(tpm.turn(false))).toMatchObject({ errorKind: 'context_overflow', transient: false });
    expect(tpm.seen).toHaveLength(1);
    const { turn, waits } = await adapter('responses', [
      { status: 500, json: { error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null } } },
      { status: 503, headers: { 'retry-after-ms': '2500' }, json: { error: { message: 'The engine is currently overloaded', type: 'server_error', param: null, code: null } } },
      { json: rResponse([]) },
    ]);
    await turn(false);
    expect(waits[1]).toBe(2500);
  });
});

// ---- OpenAI Chat Completions ----
const cChunk = (delta: object, finish_reason: string | null = null, extra: object = {}) => ({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5-2025-08-07', choices: [{ index: 0, delta, logprobs: null, finish_reason }], ...extra });
const cUsage = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5-2025-08-07', choices: [], usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, prompt_tokens_details: { cached_tokens: 80 }, completion_tokens_details: { reasoning_tokens: 20 } } };
const cCompletion = (message: object, finish_reason: string) => ({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-5', choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null, ...message }, logprobs: null, finish_reason }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });

describe('openai chat, as Chat Completions documents it', () => {
  it('two parallel tool calls whose argument deltas are split and interleaved across chunks', async () => {
    const { turn } = await adapter('chat', [
      {
        sse: [
          cChunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_A', type: 'function', function: { name: 'bash', arguments: '' } }] }),
          cChunk({ tool_calls: [{ index: 0, function: { arguments: '{"comm' } }] }),
          cChunk({ tool_calls: [{ index: 1, id: 'call_B', type: 'function', function: { name: 'bash', arguments: '{"command"' } }] }),
          cChunk({ tool_calls: [{ index: 0, function: { arguments: 'and": "ls"}' } }] }),
          cChunk({ tool_calls: [{ index: 1, function: { arguments: ': "pwd"}' } }] }),
          cChunk({}, 'tool_calls'),
          cUsage,
          'data: [DONE]\n\n',
        ],
      },
    ]);
    const r = await turn(true);
    expect(r.blocks).toEqual([
      { type: 'tool_call', id: 'call_A', name: 'bash', input: { command: 'ls' } },
      { type: 'tool_call', id: 'call_B', name: 'bash', input: { command: 'pwd' } },
    ]);
    expect(r.stop).toBe('tool_use');
    expect(r.usage).toEqual({ input: 20, cache_read: 80, cache_write: 0, output: 50, reasoning: 20 });
  });

  it('a streamed refusal (delta.refusal) is a refusal stop with its words', async () => {
    const { turn } = await adapter('chat', [{ sse: [cChunk({ role: 'assistant', content: null, refusal: '' }), cChunk({ refusal: "I'm sorry, " }), cChunk({ refusal: 'I cannot help.' }), cChunk({}, 'stop'), 'data: [DONE]\n\n'] }]);
    const r = await turn(true);
    expect(r.stop).toBe('refusal');
    expect(r.refusal).toEqual({ explanation: "I'm sorry, I cannot help." });
  });

  it('finish_reason length with a tool call cut inside its arguments gives a marked call, not a command', async () => {
    for (const stream of [true, false]) {
      const replies: Reply[] = stream
        ? [{ sse: [cChunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_A', type: 'function', function: { name: 'bash', arguments: '{"command": "rm -rf bu' } }] }), cChunk({}, 'length'), 'data: [DONE]\n\n'] }]
        : [{ json: cCompletion({ tool_calls: [{ id: 'call_A', type: 'function', function: { name: 'bash', arguments: '{"command": "rm -rf bu' } }] }, 'length') }];
      const { turn } = await adapter('chat', replies);
      const r = await turn(stream);
      expect(r.stop).toBe('max_tokens');
      expect((r.blocks[0] as { invalid?: string }).invalid, `stream=${stream}`).toBeDefined();
    }
  });

  it('arguments that are not the documented JSON string (an object, a number) never throw: an object is read, anything else marked', async () => {
    const { turn } = await adapter('chat', [
      {
        json: cCompletion(
          {
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'bash', arguments: { command: 'ls' } } },
              { id: 'c2', type: 'function', function: { name: 'bash', arguments: 42 } },
            ],
          },
          'tool_calls',
        ),
      },
    ]);
    const r = await turn(false);
    expect(r.blocks[0]).toEqual({ type: 'tool_call', id: 'c1', name: 'bash', input: { command: 'ls' } });
    expect(r.blocks[1]).toMatchObject({ type: 'tool_call', id: 'c2', input: {} });
    expect((r.blocks[1] as { invalid?: string }).invalid).toMatch(/not a JSON object/);
  });

  it('content_filter is a refusal; a tool call with an empty arguments string is {}', async () => {
    const { turn } = await adapter('chat', [{ json: cCompletion({ content: 'Partial' }, 'content_filter') }, { json: cCompletion({ tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '' } }] }, 'tool_calls') }]);
    expect((await turn(false)).stop).toBe('refusal');
    const r = await turn(false);
    expect(r.blocks).toEqual([{ type: 'tool_call', id: 'c1', name: 'bash', input: {} }]);
  });
});

// ---- Gemini generateContent ----
const gResponse = (parts: unknown[], finishReason: string, extra: object = {}) => ({
  candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }],
  usageMetadata: { promptTokenCount: 1000, cachedContentTokenCount: 600, candidatesTokenCount: 50, thoughtsTokenCount: 200, totalTokenCount: 1250 },
  modelVersion: 'gemini-2.5-flash',
  responseId: 'resp-g1',
  ...extra,
});

describe('gemini, as generateContent documents it', () => {
  it('several functionCall parts, usage with thoughts and cached tokens, streamed with CRLF framing', async () => {
    const { turn } = await adapter('gemini', [
      {
        eol: '\r\n',
        sse: [
          { candidates: [{ content: { role: 'model', parts: [{ text: 'Let me ' }] }, index: 0 }], usageMetadata: { promptTokenCount: 1000 }, modelVersion: 'gemini-2.5-flash', responseId: 'resp-g1' },
          gResponse([{ functionCall: { name: 'bash', args: { command: 'ls' } } }, { functionCall: { name: 'bash', args: { command: 'pwd' } } }], 'STOP'),
        ],
      },
    ]);
    const r = await turn(true);
    expect(r.blocks.map((b) => b.type)).toEqual(['text', 'tool_call', 'tool_call']);
    expect(r.stop).toBe('tool_use');
    expect(r.usage).toEqual({ input: 400, cache_read: 600, cache_write: 0, output: 250, reasoning: 200 });
  });

  it('SAFETY, RECITATION and a prompt blocked for OTHER are refusals; MAX_TOKENS a max-tokens stop; OTHER no finish', async () => {
    const cases: Array<[Reply, string]> = [
      [{ json: gResponse([], 'SAFETY') }, 'refusal'],
      [{ json: gResponse([{ text: 'quoted' }], 'RECITATION') }, 'refusal'],
      [{ json: { promptFeedback: { blockReason: 'OTHER' }, usageMetadata: { promptTokenCount: 5 } } }, 'refusal'],
      [{ json: gResponse([{ text: 'long' }], 'MAX_TOKENS') }, 'max_tokens'],
      [{ json: gResponse([{ text: 'x' }], 'OTHER') }, 'other'],
    ];
    for (const [reply, stop] of cases) {
      const { turn } = await adapter('gemini', [reply]);
      expect((await turn(false)).stop, JSON.stringify(reply.json)).toBe(stop);
    }
  });

  it('a candidate without a finishReason (the API: the model has not stopped) is no finished answer, streamed or not', async () => {
    const unfinished = { candidates: [{ content: { role: 'model', parts: [{ text: 'Half of an ans' }] }, index: 0 }], usageMetadata: { promptTokenCount: 10 }, modelVersion: 'gemini-2.5-flash' };
    for (const stream of [false, true]) {
      const { turn, seen } = await adapter('gemini', [stream ? { sse: [unfinished] } : { json: unfinished }, stream ? { sse: [gResponse([{ text: 'Whole.' }], 'STOP')] } : { json: gResponse([{ text: 'Whole.' }], 'STOP') }]);
      const r = await turn(stream);
      expect(r.blocks, `stream=${stream}`).toEqual([{ type: 'text', text: 'Whole.' }]);
      expect(r.attempts).toBe(2);
      expect(seen).toHaveLength(2);
    }
  });

  it('a 429 RESOURCE_EXHAUSTED with RetryInfo, then a 503, are retried; a 400 INVALID_ARGUMENT is not', async () => {
    const { turn, waits } = await adapter('gemini', [
      { status: 429, json: { error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '13s' }] } } },
      { status: 503, json: { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } } },
      { json: gResponse([{ text: 'ok' }], 'STOP') },
    ]);
    const r = await turn(false);
    expect(r.attempts).toBe(3);
    expect(waits[0]).toBe(13000);
    const bad = await adapter('gemini', [{ status: 400, json: { error: { code: 400, message: 'Invalid JSON payload received.', status: 'INVALID_ARGUMENT' } } }]);
    const e = await failure(bad.turn(false));
    expect(e.transient).toBe(false);
    expect(bad.seen).toHaveLength(1);
  });
});


// ---- What every vendor's transport may do to a 200 ----
const APIS: Api[] = ['anthropic', 'responses', 'chat', 'gemini'];
const done: Record<Api, Reply> = {
  anthropic: { json: aMessage([{ type: 'text', text: 'ok' }], 'end_turn') },
  responses: { json: rResponse([{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }]) },
  chat: { json: cCompletion({ content: 'ok' }, 'stop') },
  gemini: { json: gResponse([{ text: 'ok' }], 'STOP') },
};

describe.each(APIS)('%s, when the transport misbehaves', (api) => {
  it('a 200 stream that ends before its first event is a cut connection: transient, retried', async () => {
    const { turn, seen } = await adapter(api, [{ sse: [] }, { sse: [] }], 1);
    const e = await failure(turn(true));
    expect(e.errorKind).toBe('infra');
    expect(e.transient).toBe(true);
    expect(seen).toHaveLength(2);
  });

  it('a 200 whose body is not the API\'s JSON (a proxy\'s page) is a ModelError the harness owns, not a TypeError', async () => {
    const { turn, seen } = await adapter(api, [{ headers: { 'content-type': 'text/html' }, json: '<html><body>Welcome to nginx!</body></html>' }, done[api]]);
    const e = await failure(turn(false));
    expect(e.errorKind).toBe('harness');
    expect(e.message).toMatch(/unreadable response/);
    expect(seen).toHaveLength(1);
  });
});
