// The Anthropic and OpenAI Responses adapters, over the real SDKs, against the testkit's mock server.
import { execFileSync } from 'node:child_process';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { InterruptedError } from '@quickloop/cli-kit';
import { MOCK_ENCRYPTED_REASONING, MOCK_SIGNATURE, startMockServer, type MockServer } from '@quickloop/testkit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ModelError } from '../errors.js';
import type { RetryPolicy } from '../retry.js';
import { addUsage, ZERO_USAGE, type Message, type ModelAdapter, type ToolSpec, type TurnResult } from '../types.js';
import { AnthropicAdapter } from './anthropic.js';
import { GeminiAdapter } from './gemini.js';
import { OpenAIChatAdapter } from './openai-chat.js';
import { OpenAIResponsesAdapter } from './openai-responses.js';

const tools: ToolSpec[] = [{ name: 'bash', description: 'Run a shell command', schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } }];

const ADAPTERS = [
  { name: 'anthropic', api: 'anthropic' as const, make: (mock: MockServer, retry: RetryPolicy = { retries: 0 }, url = mock.url, timeoutMs?: number) => new AnthropicAdapter({ apiKey: 'test-key', baseURL: url, retry, ...(timeoutMs ? { timeoutMs } : {}) }) },
  { name: 'openai-responses', api: 'responses' as const, make: (mock: MockServer, retry: RetryPolicy = { retries: 0 }, url = mock.openaiUrl, timeoutMs?: number) => new OpenAIResponsesAdapter({ apiKey: 'test-key', baseURL: url, retry, ...(timeoutMs ? { timeoutMs } : {}) }) },
  { name: 'gemini', api: 'gemini' as const, make: (mock: MockServer, retry: RetryPolicy = { retries: 0 }, url = mock.url, timeoutMs?: number) => new GeminiAdapter({ apiKey: 'test-key', baseURL: url, retry, ...(timeoutMs ? { timeoutMs } : {}) }) },
  { name: 'openai-chat', api: 'chat' as const, make: (mock: MockServer, retry: RetryPolicy = { retries: 0 }, url = mock.openaiUrl, timeoutMs?: number) => new OpenAIChatAdapter({ apiKey: 'test-key', baseURL: url, retry, ...(timeoutMs ? { timeoutMs } : {}) }) },
];

/** A gateway's key with characters every encoding writes differently (`/`, `+`, `~`, space, non-ASCII). */
const GATEWAY_KEY = 'gw/Ke+y~ 9\u00e4Z';
const PASSWORD = 'pa:ss/w rd';

/** Every way a log line, an error or a URL may write `secret`: raw, percent-encoded (either case, twice), form-encoded. */
function writtenForms(secret: string): string[] {
  const pct = encodeURIComponent(secret);
  const form = new URLSearchParams({ k: secret }).toString().slice(2);
  return [...new Set([secret, pct, pct.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()), encodeURI(secret), form, encodeURIComponent(pct), pct.replace(/%20/g, '+')])];
}

/** A minimal agent loop: the adapter never runs tools; this loop runs bash for real. */
async function toolLoop(adapter: ModelAdapter, prompt: string, stream: boolean) {
  const messages: Message[] = [{ role: 'user', blocks: [{ type: 'text', text: prompt }] }];
  const results: TurnResult[] = [];
  for (let turn = 0; turn < 5; turn++) {
    const result = await adapter.turn({ model: 'mock-model', system: 'You are a test agent.', messages, tools, maxTokens: 1024, stream });
    results.push(result);
    messages.push({ role: 'assistant', blocks: result.blocks, native: result.native });
    if (result.stop !== 'tool_use') break;
    const outputs = result.blocks.flatMap((b) => (b.type === 'tool_call' ? [{ type: 'tool_result' as const, id: b.id, name: b.name, output: execFileSync('sh', ['-c', String(b.input.command)], { encoding: 'utf8' }) }] : []));
    messages.push({ role: 'user', blocks: outputs });
  }
  return results;
}

let mock: MockServer;
beforeEach(async () => {
  mock = await startMockServer({ whenEmpty: 'error' });
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await mock.close();
});

describe.each(ADAPTERS)('$name adapter', ({ name, api, make }) => {
  for (const stream of [false, true]) {
    it(`runs a two-turn tool loop (${stream ? 'streaming' : 'plain JSON'}) with normalised blocks and five counters`, async () => {
      mock.push(
        { text: 'Let me run that.', toolCalls: [{ name: 'bash', input: { command: 'echo hello' }, id: 'call_a' }], usage: { input: 20, cacheWrite: 100, output: 9 } },
        (req) => ({ text: `The command printed: ${req.lastUserText.trim()}`, usage: { input: 5, cacheRead: 100, output: 12, reasoning: 4 } }),
      );
      const results = await toolLoop(make(mock), 'Say hello via bash.', stream);
      expect(results.map((r) => r.stop)).toEqual(['tool_use', 'end_turn']);
      expect(results[0]!.blocks).toEqual([
        { type: 'text', text: 'Let me run that.' },
        { type: 'tool_call', id: 'call_a', name: 'bash', input: { command: 'echo hello' } },
      ]);
      expect(results[1]!.blocks).toEqual([{ type: 'text', text: 'The command printed: hello' }]);
      const total = results.reduce((sum, r) => addUsage(sum, r.usage), { ...ZERO_USAGE });
      // Gemini has no cache writes on a request (its caches are made out of band); Anthropic reports no reasoning split.
      expect(total).toEqual({ input: 25, cache_read: 100, cache_write: api === 'gemini' ? 0 : 100, output: 21, reasoning: api === 'anthropic' ? 0 : 4 });
      expect(results.every((r) => r.attempts === 1)).toBe(true);
      // The SDKs surface the request id on plain responses only.
      // Gemini has no request id header; its responseId stands in.
      if (!stream) expect(results.every((r) => r.requestId?.startsWith(api === 'gemini' ? 'gresp_' : 'req_mock_'))).toBe(true);

      const [, second] = mock.requestsFor(api);
      expect(second!.stream).toBe(stream);
      if (api === 'anthropic') {
        expect(second!.body.system).toEqual([{ type: 'text', text: 'You are a test agent.', cache_control: { type: 'ephemeral' } }]);
        expect(second!.body.messages[1].content[1]).toMatchObject({ type: 'tool_use', id: 'call_a', name: 'bash' });
        expect(second!.body.messages[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'call_a', content: 'hello\n', is_error: false, cache_control: { type: 'ephemeral' } }]);
        expect(second!.body.tools[0]).toMatchObject({ name: 'bash', input_schema: { type: 'object' } });
      } else if (api === 'gemini') {
        expect(second!.body.systemInstruction).toMatchObject({ parts: [{ text: 'You are a test agent.' }] });
        expect(second!.body.contents.map((c: any) => c.role)).toEqual(['user', 'model', 'user']);
        expect(second!.body.contents[2].parts[0]).toEqual({ functionResponse: { id: 'call_a', name: 'bash', response: { output: 'hello\n' } } });
        expect(second!.body.tools[0].functionDeclarations[0]).toMatchObject({ name: 'bash', parametersJsonSchema: { type: 'object' } });
      } else if (api === 'chat') {
        expect(second!.body.messages.map((m: any) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
        expect(second!.body.messages[2]).toMatchObject({ content: 'Let me run that.', tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'bash', arguments: '{"command":"echo hello"}' } }] });
        expect(second!.body.messages[3]).toEqual({ role: 'tool', tool_call_id: 'call_a', content: 'hello\n' });
        if (stream) expect(second!.body.stream_options).toEqual({ include_usage: true });
      } else {
        expect(second!.body).toMatchObject({ store: false, instructions: 'You are a test agent.', include: ['reasoning.encrypted_content'], max_output_tokens: 1024 });
        // The first turn's output items are replayed verbatim, then the tool output keyed by call_id.
        expect(second!.body.input.slice(1).map((i: any) => i.type)).toEqual(['message', 'function_call', 'function_call_output']);
        expect(second!.body.input.at(-1)).toEqual({ type: 'function_call_output', call_id: 'call_a', output: 'hello\n' });
        expect(second!.body.tools[0]).toMatchObject({ type: 'function', name: 'bash', strict: false });
      }
    });
  }

  // Chat Completions has no reasoning items to replay.
  for (const stream of api === 'chat' ? [] : [false, true]) {
    it(`keeps reasoning out of the answer and replays it verbatim next turn (${stream ? 'streaming' : 'plain JSON'})`, async () => {
      mock.push({ reasoning: 'The user wants hello.', toolCalls: [{ name: 'bash', input: { command: 'echo hello' }, id: 'call_r' }] }, { text: 'done' });
      const results = await toolLoop(make(mock), 'Say hello via bash.', stream);
      expect(results[0]!.blocks).toEqual([{ type: 'tool_call', id: 'call_r', name: 'bash', input: { command: 'echo hello' } }]);
      const replayed = JSON.stringify(mock.requestsFor(api)[1]!.body);
      if (api === 'anthropic') expect(mock.requestsFor(api)[1]!.body.messages[1].content[0]).toEqual({ type: 'thinking', thinking: 'The user wants hello.', signature: MOCK_SIGNATURE });
      else if (api === 'responses') expect(mock.requestsFor(api)[1]!.body.input[1]).toMatchObject({ type: 'reasoning', encrypted_content: MOCK_ENCRYPTED_REASONING });
      else expect(mock.requestsFor(api)[1]!.body.contents[1].parts[0]).toEqual({ text: 'The user wants hello.', thought: true, thoughtSignature: MOCK_SIGNATURE });
      expect(replayed).toContain('The user wants hello.');
    });
  }

  // A Responses turn cut after its reasoning has nothing of its own for the API to pair the reasoning with.
  for (const stream of api === 'responses' ? [false, true] : []) {
    it(`goes on after a turn cut after its reasoning: the next request leaves out the reasoning nothing follows (${stream ? 'streaming' : 'plain JSON'})`, async () => {
      mock.push({ text: '', reasoning: 'Long thoughts.', stop: 'max_tokens' }, { reasoning: 'Now briefly.', toolCalls: [{ name: 'bash', input: { command: 'true' }, id: 'call_b' }] }, { text: 'done' });
      const adapter = make(mock);
      const messages: Message[] = [{ role: 'user', blocks: [{ type: 'text', text: 'Go.' }] }];
      const req = () => ({ model: 'mock-model', system: 's', messages, tools, maxTokens: 64, stream });
      const cut = await adapter.turn(req());
      expect(cut).toMatchObject({ stop: 'max_tokens', blocks: [] });
      messages.push({ role: 'assistant', blocks: cut.blocks, native: cut.native }, { role: 'user', blocks: [{ type: 'text', text: 'Go on, in shorter steps.' }] });
      const call = await adapter.turn(req());
      expect(call.stop).toBe('tool_use');
      messages.push({ role: 'assistant', blocks: call.blocks, native: call.native }, { role: 'user', blocks: [{ type: 'tool_result', id: 'call_b', name: 'bash', output: '' }] });
      expect(await adapter.turn(req())).toMatchObject({ stop: 'end_turn', blocks: [{ type: 'text', text: 'done' }] });
      const inputs = mock.requestsFor(api).map((r) => r.body.input.map((i: any) => i.type ?? i.role));
      expect(inputs[1]).toEqual(['user', 'user']);
      // A reasoning item its function call follows is replayed, as every stateless turn needs.
      expect(inputs[2]).toEqual(['user', 'user', 'reasoning', 'function_call', 'function_call_output']);
    });
  }

  it('reports a refusal as a stop, not an error', async () => {
    mock.push({ refusal: 'I will not do that.', category: 'cyber' });
    const r = await make(mock).turn({ model: 'm', system: 's', messages: [{ role: 'user', blocks: [{ type: 'text', text: 'bad' }] }], maxTokens: 10 });
    expect(r.stop).toBe('refusal');
    expect(r.blocks).toEqual([]);
    // Gemini says only that safety stopped it; the others carry the model's explanation.
    const expected = { anthropic: { category: 'cyber', explanation: 'I will not do that.' }, gemini: { category: 'SAFETY' } }[name as string] ?? { explanation: 'I will not do that.' };
    expect(r.refusal).toEqual(expected);
  });

  it('reports a max-tokens stop', async () => {
    mock.push({ text: 'cut sh', stop: 'max_tokens' });
    const r = await make(mock).turn({ model: 'm', system: 's', messages: [{ role: 'user', blocks: [{ type: 'text', text: 'x' }] }], maxTokens: 3 });
    expect(r).toMatchObject({ stop: 'max_tokens', blocks: [{ type: 'text', text: 'cut sh' }] });
  });

  it('retries 429 and 5xx itself, honouring retry-after as a floor of the jittered backoff', async () => {
    mock.push({ error: { status: 429, retryAfterMs: 250 } }, { error: { status: api === 'anthropic' ? 529 : 503 } }, { text: 'finally' });
    const waits: number[] = [];
    const adapter = make(mock, { retries: 2, baseMs: 10, random: () => 0.5, sleep: async (ms) => void waits.push(ms) });
    const r = await adapter.turn({ model: 'm', system: 's', messages: [{ role: 'user', blocks: [{ type: 'text', text: 'x' }] }], maxTokens: 10 });
    expect(r).toMatchObject({ attempts: 3, blocks: [{ type: 'text', text: 'finally' }] });
    expect(waits).toEqual([250, 15]);
    // The SDK's own retries are off, so every attempt is ours and starts from a zero retry count.
    if (api !== 'gemini') expect(mock.requests.map((q) => q.headers['x-stainless-retry-count'])).toEqual(['0', '0', '0']);
    else expect(mock.requests).toHaveLength(3);
  });

  // Anthropic's and OpenAI's APIs send x-should-retry; Gemini's does not.
  if (api !== 'gemini') it("takes the API's x-should-retry over the status: a 500 it says not to retry is tried once, a 400 it says to retry is retried", async () => {
    mock.push({ error: { status: 500, shouldRetry: false } }, { error: { status: 400, shouldRetry: true } }, { text: 'after the conflict' });
    const adapter = make(mock, { retries: 2, baseMs: 1, sleep: async () => {} });
    const req = { model: 'm', system: 's', messages: [{ role: 'user' as const, blocks: [{ type: 'text' as const, text: 'x' }] }], maxTokens: 10 };
    await expect(adapter.turn(req)).rejects.toMatchObject({ transient: false, status: 500 });
    expect(mock.requests).toHaveLength(1);
    expect(await adapter.turn(req)).toMatchObject({ attempts: 2, blocks: [{ type: 'text', text: 'after the conflict' }] });
  });

  it('gives up after its retries with a transient infra ModelError', async () => {
    mock.push({ error: { status: 500 } }, { error: { status: 500 } });
    const err = await make(mock, { retries: 1, sleep: async () => {} })
      .turn({ model: 'm', system: 's', messages: [{ role: 'user', blocks: [{ type: 'text', text: 'x' }] }], maxTokens: 10 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err).toMatchObject({ errorKind: 'infra', transient: true, status: 500 });
    expect(mock.requests).toHaveLength(2);
  });

  it('classifies context overflow and auth failures without retrying them', async () => {
    const overflow = name === 'anthropic' ? { status: 400, message: 'prompt is too long: 250000 tokens > 200000 maximum' } : { status: 400, type: 'context_length_exceeded', message: 'Your input exceeds the context window of this model.' };
    mock.push({ error: overflow }, { error: { status: 401, message: 'invalid x-api-key' } });
    const adapter = make(mock, { retries: 3, sleep: async () => {} });
    const req = { model: 'm', system: 's', messages: [{ role: 'user' as const, blocks: [{ type: 'text' as const, text: 'x' }] }], maxTokens: 10 };
    await expect(adapter.turn(req)).rejects.toMatchObject({ errorKind: 'context_overflow', transient: false, status: 400 });
    await expect(adapter.turn(req)).rejects.toMatchObject({ errorKind: 'config', transient: false, status: 401 });
    expect(mock.requests).toHaveLength(2);
  });

  it('a 403 is a config error in the vendor\'s words, not retried, and a refused key only when the body says the key is at fault', async () => {
    const forbidden = { status: 403, message: 'Country, region, or territory\nnot supported', ...(api === 'responses' || api === 'chat' ? { type: 'unsupported_country_region_territory' } : {}) };
    mock.push({ error: forbidden }, { error: { status: 403, message: 'Your API key was reported as leaked. Please use another API key.' } });
    const adapter = make(mock, { retries: 2, sleep: async () => {} });
    const req = { model: 'm', system: 's', messages: [{ role: 'user' as const, blocks: [{ type: 'text' as const, text: 'x' }] }], maxTokens: 10 };
    const region = await adapter.turn(req).catch((e: unknown) => e);
    expect(region).toMatchObject({ errorKind: 'config', transient: false, status: 403, keyRefused: false });
    // The type (or code, or Google status) the vendor named, then its message, on one line.
    const said = { anthropic: 'permission_error', gemini: 'PERMISSION_DENIED' }[name as string] ?? 'unsupported_country_region_territory';
    expect((region as Error).message).toBe(`${name}: HTTP 403: ${said}: Country, region, or territory not supported`);
    await expect(adapter.turn(req)).rejects.toMatchObject({ errorKind: 'config', transient: false, status: 403, keyRefused: true });
    expect(mock.requests).toHaveLength(2);
  });

  it('sends the query of its base URL (a gateway\'s key) on every request, and never shows a value of it in its log lines or errors', async () => {
    vi.stubEnv('OPENAI_LOG', 'debug');
    vi.stubEnv('ANTHROPIC_LOG', 'debug');
    const lines: string[] = [];
    const root = api === 'anthropic' || api === 'gemini' ? mock.url : mock.openaiUrl;
    const base = `${root}?key=${encodeURIComponent(GATEWAY_KEY)}&v=1`;
    const echo = writtenForms(GATEWAY_KEY).join(' | ');
    mock.push({ text: 'through the gateway' }, { error: { status: 503, message: `upstream refused ${base} (key ${echo})` } }, { error: { status: 403, message: `gateway: key ${echo} not allowed here` } });
    const o = { apiKey: 'test-key', baseURL: base, retry: { retries: 1, sleep: async () => {} }, log: (line: string) => lines.push(line) };
    const adapter = api === 'anthropic' ? new AnthropicAdapter(o) : api === 'responses' ? new OpenAIResponsesAdapter(o) : api === 'chat' ? new OpenAIChatAdapter(o) : new GeminiAdapter(o);
    const retried: string[] = [];
    for (const stream of [false, true]) {
      const req = { model: 'm', system: 's', messages: [{ role: 'user' as const, blocks: [{ type: 'text' as const, text: 'x' }] }], maxTokens: 10, stream, onRetry: ({ error }: { error: ModelError }) => void retried.push(error.message) };
      if (!stream) expect(await adapter.turn(req)).toMatchObject({ blocks: [{ type: 'text', text: 'through the gateway' }] });
      else await expect(adapter.turn(req)).rejects.toMatchObject({ errorKind: 'config', status: 403, message: expect.stringContaining('[redacted]') });
    }
    // The SDK's path went after the base's path, and the query on every request, the key decoded as sent.
    for (const r of mock.requests) {
      const u = new URL(r.url, 'http://x');
      expect(u.pathname, r.url).toMatch(/^\/v1(beta)?\/(messages|responses|chat\/completions|models\/m:(stream)?[gG]enerateContent)$/);
      expect([u.searchParams.get('key'), u.searchParams.get('v')]).toEqual([GATEWAY_KEY, '1']);
    }
    expect(mock.requests).toHaveLength(3);
    if (api !== 'gemini') expect(lines.join('\n')).toMatch(/sending request/);
    // The mock's own answer to an unscripted request quotes the request URL, as some gateways' errors do.
    const unscripted = await adapter.turn({ model: 'm', system: 's', messages: [{ role: 'user', blocks: [{ type: 'text', text: 'y' }] }], maxTokens: 1 }).catch((e: Error) => e.message);
    expect(unscripted).toMatch(/no scripted turn left .*\?key=\[redacted\]/);
    const shown = [...lines, ...retried, unscripted].join('\n');
    expect(retried).toHaveLength(1);
    for (const form of writtenForms(GATEWAY_KEY)) expect(shown, form).not.toContain(form);
    expect(shown).not.toMatch(/[?&]key=(?!\[redacted\])/);
  });

  it('sends every value of a name its base URL\'s query repeats, in order and as written (a gateway taking several), streaming and not', async () => {
    const root = api === 'anthropic' || api === 'gemini' ? mock.url : mock.openaiUrl;
    const adapter = make(mock, { retries: 0 }, `${root}?scope=read&key=k%2B1&scope=write&scope=`);
    for (const stream of [false, true]) {
      mock.push({ text: 'ok' });
      await adapter.turn({ model: 'm', system: 's', messages: [{ role: 'user', blocks: [{ type: 'text', text: 'x' }] }], maxTokens: 10, stream });
    }
    expect(mock.requests).toHaveLength(2);
    for (const r of mock.requests) {
      const u = new URL(r.url, 'http://x');
      expect(u.searchParams.getAll('scope'), r.url).toEqual(['read', 'write', '']);
      expect(u.searchParams.getAll('key'), r.url).toEqual(['k+1']);
    }
  });

  it('refuses a base URL with a user or password in it as a config error that does not show them (fetch never sends them)', async () => {
    vi.stubEnv('OPENAI_LOG', 'debug');
    vi.stubEnv('ANTHROPIC_LOG', 'debug');
    const lines: string[] = [];
    const root = api === 'anthropic' || api === 'gemini' ? mock.url : mock.openaiUrl;
    const base = root.replace('http://', `http://bob:${encodeURIComponent(PASSWORD)}@`);
    const o = { apiKey: 'test-key', baseURL: base, retry: { retries: 2, sleep: async () => {} }, log: (line: string) => lines.push(line) };
    const adapter = api === 'anthropic' ? new AnthropicAdapter(o) : api === 'responses' ? new OpenAIResponsesAdapter(o) : api === 'chat' ? new OpenAIChatAdapter(o) : new GeminiAdapter(o);
    const err = await adapter.turn({ model: 'm', system: 's', messages: [{ role: 'user', blocks: [{ type: 'text', text: 'x' }] }], maxTokens: 10 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ errorKind: 'config', transient: false, message: `${name}: the base URL has a user or password in it, which fetch will not send` });
    expect(mock.requests).toHaveLength(0);
    for (const form of writtenForms(PASSWORD)) expect(lines.join('\n'), form).not.toContain(form);
  });

  it('calls a malformed body a harness error', async () => {
    mock.push({ malformed: '{"id":"x","output":[' });
    await expect(make(mock).turn({ model: 'm', system: 's', messages: [{ role: 'user', blocks: [{ type: 'text', text: 'x' }] }], maxTokens: 10 })).rejects.toMatchObject({ errorKind: 'harness' });
  });

  it('calls a refused connection transient infra', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const url = api === 'anthropic' ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}/v1`;
    await expect(make(mock, { retries: 0 }, url).turn({ model: 'm', system: 's', messages: [{ role: 'user', blocks: [{ type: 'text', text: 'x' }] }], maxTokens: 10 })).rejects.toMatchObject({
      errorKind: 'infra',
      transient: true,
    });
  });

  it('calls a request that outlives its timeout transient infra', async () => {
    mock.push({ hang: true });
    await expect(make(mock, { retries: 0 }, undefined, 300).turn({ model: 'm', system: 's', messages: [{ role: 'user', blocks: [{ type: 'text', text: 'x' }] }], maxTokens: 10 })).rejects.toMatchObject({
      errorKind: 'infra',
      transient: true,
    });
  });

  it('turns an abort into InterruptedError, also while waiting to retry', async () => {
    mock.push({ error: { status: 429, retryAfterMs: 60_000 } });
    const controller = new AbortController();
    const pending = make(mock, { retries: 2 }).turn({ model: 'm', system: 's', messages: [{ role: 'user', blocks: [{ type: 'text', text: 'x' }] }], maxTokens: 10, signal: controller.signal });
    while (mock.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(InterruptedError);
  });
});

/** Where Node's fetch (its own undici) keeps the dispatcher a request without one goes through; @google/genai reaches it the same way. */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
type Agent = { close(): Promise<void>; constructor: new (options: { headersTimeout: number; bodyTimeout: number }) => Agent };

/** Runs `f` with undici's own header and body timeouts (300 s by default) at `ms`: an Agent of Node's undici in the default's place. */
async function withUndiciTimeouts(ms: number, f: () => Promise<void>): Promise<void> {
  // Node sets its undici up on first use.
  new Headers();
  const global = globalThis as unknown as Record<symbol, Agent>;
  const original = global[GLOBAL_DISPATCHER] as Agent;
  const short = new original.constructor({ headersTimeout: ms, bodyTimeout: ms });
  global[GLOBAL_DISPATCHER] = short;
  try {
    await f();
  } finally {
    global[GLOBAL_DISPATCHER] = original;
    await short.close();
  }
}

describe('the gemini adapter through a gateway that takes its key in the query', () => {
  /**
   * A Gemini endpoint that answers nothing until told to, as a thinking model keeps a call waiting: no
   * headers for a whole answer, and for a stream its headers at once but no event.
   */
  async function heldGemini() {
    const urls: string[] = [];
    const held: (() => void)[] = [];
    const answer = JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'late' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1 } });
    const server = createHttpServer((req, res) => {
      req.resume();
      urls.push(req.url ?? '');
      const sse = (req.url ?? '').includes('alt=sse');
      if (sse) res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders();
      held.push(() => {
        if (res.destroyed) return;
        if (!sse) res.writeHead(200, { 'content-type': 'application/json' });
        res.end(sse ? `data: ${answer}\n\n` : answer);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return {
      url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
      urls,
      release: () => held.splice(0).forEach((send) => send()),
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  const request = (stream: boolean) => ({ model: 'm', system: 's', messages: [{ role: 'user' as const, blocks: [{ type: 'text' as const, text: 'x' }] }], maxTokens: 10, stream });

  it('waits for a late answer as the SDK does without a query: undici\'s own header and body timeouts are off, the adapter\'s own bounds the call', async () => {
    const gw = await heldGemini();
    await withUndiciTimeouts(50, async () => {
      const turns: Promise<unknown>[] = [];
      for (const baseURL of [gw.url, `${gw.url}?key=gateway-key-1`]) {
        for (const stream of [false, true]) turns.push(new GeminiAdapter({ apiKey: 'test-key', baseURL, retry: { retries: 0 } }).turn(request(stream)).catch((e: Error) => `${baseURL} stream ${stream}: ${e.message}`));
      }
      while (gw.urls.length < turns.length) await new Promise((r) => setTimeout(r, 10));
      // Asked after them, plain fetches are cut by the shortened defaults; theirs would have been cut first...
      const plain = (path: string) => fetch(`${gw.url}/v1beta/models/${path}`, { method: 'POST', body: '{}' });
      await Promise.all([
        expect(plain('m:generateContent')).rejects.toMatchObject({ cause: { code: 'UND_ERR_HEADERS_TIMEOUT' } }),
        expect(plain('m:streamGenerateContent?alt=sse').then((r) => r.text())).rejects.toMatchObject({ cause: { code: 'UND_ERR_BODY_TIMEOUT' } }),
      ]);
      // ...but they are still waiting, the SDK's own fetch and the one that adds the gateway's query alike.
      gw.release();
      expect(await Promise.all(turns)).toEqual(turns.map(() => expect.objectContaining({ blocks: [{ type: 'text', text: 'late' }] })));
    });
    await gw.close();
    // The four turns reached it in no set order, before the plain fetch.
    expect(gw.urls.slice(0, 4).map((u) => String(new URL(u, 'http://x').searchParams.get('key'))).sort()).toEqual(['gateway-key-1', 'gateway-key-1', 'null', 'null']);
  });

  it('is cut at its own timeout through such a gateway, not before', async () => {
    await withUndiciTimeouts(50, async () => {
      mock.push({ hang: true });
      await expect(new GeminiAdapter({ apiKey: 'test-key', baseURL: `${mock.url}?key=gateway-key-1`, retry: { retries: 0 }, timeoutMs: 2000 }).turn(request(false))).rejects.toMatchObject({ errorKind: 'infra', transient: true, message: 'gemini: request timed out' });
    });
  });
});

/**
 * A gateway in front of the mock that passes on nothing until told to, as a thinking model keeps a call
 * waiting: no headers for a whole answer, and for a stream its headers at once but no event. Told to,
 * it passes each call it holds to the mock (over node:http, which undici's timeouts do not touch) and
 * the mock's answer back.
 */
async function heldGateway(mock: MockServer) {
  let received = 0;
  const held: (() => void)[] = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
      received++;
      const body = Buffer.concat(chunks);
      const sse = (JSON.parse(body.toString() || '{}') as { stream?: unknown }).stream === true;
      if (sse) res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders();
      held.push(() => {
        if (res.destroyed) return;
        const upstream = httpRequest(`${mock.url}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
          if (!sse) res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        upstream.end(body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    get received() {
      return received;
    },
    release: () => held.splice(0).forEach((pass) => pass()),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe.each(ADAPTERS.filter((a) => a.api !== 'gemini'))("the $name adapter under undici's own timeouts", ({ name, api, make }) => {
  const request = (stream: boolean) => ({ model: 'm', system: 's', messages: [{ role: 'user' as const, blocks: [{ type: 'text' as const, text: 'x' }] }], maxTokens: 10, stream });
  const baseOf = (gw: { url: string }) => (api === 'anthropic' ? gw.url : `${gw.url}/v1`);

  /** Plain fetches asked after the turns, whose own header and body timeouts (the shortened defaults) cut them. */
  async function plainFetchesCut(gw: { url: string }): Promise<void> {
    const plain = (stream: boolean) => fetch(`${gw.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ stream }) });
    await Promise.all([
      expect(plain(false)).rejects.toMatchObject({ cause: { code: 'UND_ERR_HEADERS_TIMEOUT' } }),
      expect(plain(true).then((r) => r.text())).rejects.toMatchObject({ cause: { code: 'UND_ERR_BODY_TIMEOUT' } }),
    ]);
  }

  it("waits for a late answer, plain or streamed, through a base URL with a query or not: undici's own header and body timeouts (300 s) do not cut it before the adapter's", async () => {
    mock.push({ text: 'late' }, { text: 'late' }, { text: 'late' }, { text: 'late' });
    const gw = await heldGateway(mock);
    await withUndiciTimeouts(50, async () => {
      // With a query the SDK calls the adapter's fetch, which must keep the dispatcher the SDK hands it.
      const turns = ['', '?gw=1'].flatMap((query) => [false, true].map((stream) => make(mock, { retries: 0 }, `${baseOf(gw)}${query}`).turn(request(stream)).catch((e: Error) => `stream ${stream}${query}: ${e.message}`)));
      while (gw.received < turns.length) await new Promise((r) => setTimeout(r, 10));
      // The turns were asked first: had the shortened defaults applied to them, they would have been cut first...
      await plainFetchesCut(gw);
      // ...but they are still waiting, and get their answers.
      gw.release();
      expect(await Promise.all(turns)).toEqual(turns.map(() => expect.objectContaining({ blocks: [{ type: 'text', text: 'late' }] })));
    });
    await gw.close();
    expect(mock.requestsFor(api).map((r) => [r.stream, new URL(r.url, 'http://x').search])).toEqual([
      [false, ''],
      [true, ''],
      [false, '?gw=1'],
      [true, '?gw=1'],
    ]);
  });

  it('is cut at its own timeout, not before: a late first byte, and a stream silent after its headers', async () => {
    const gw = await heldGateway(mock);
    const events: string[] = [];
    await withUndiciTimeouts(50, async () => {
      // undici's header and body timers tick every half second, so its 50 ms cut comes within about one.
      const turns = [false, true].map((stream) =>
        make(mock, { retries: 0 }, baseOf(gw), 3000)
          .turn(request(stream))
          .then(
            () => void events.push(`stream ${stream}: answered`),
            (e: unknown) => (events.push(`stream ${stream}: cut`), e),
          ),
      );
      while (gw.received < turns.length) await new Promise((r) => setTimeout(r, 10));
      await plainFetchesCut(gw);
      events.push('plain fetches cut');
      const errors = await Promise.all(turns);
      expect(events).toEqual(['plain fetches cut', expect.stringMatching(/: cut$/), expect.stringMatching(/: cut$/)]);
      // The SDK's timer, armed until the headers, cuts the first; undici's body timeout, at the adapter's, the silent stream.
      expect(errors).toEqual([
        expect.objectContaining({ errorKind: 'infra', transient: true, message: `${name}: connection failed: Request timed out.` }),
        expect.objectContaining({ errorKind: 'infra', transient: true, message: `${name}: connection failed: terminated` }),
      ]);
    });
    await gw.close();
  });
});
