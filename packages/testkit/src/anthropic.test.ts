// The mock against the real @anthropic-ai/sdk: tool loop, streaming, refusals, errors and retries, usage.
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startMockServer, type MockServer } from './index.js';

let mock: MockServer;
beforeEach(async () => {
  mock = await startMockServer({ whenEmpty: 'error' });
});
afterEach(async () => {
  await mock.close();
});

const client = (maxRetries = 0) => new Anthropic({ baseURL: mock.url, apiKey: 'test-key-not-secret', maxRetries });
const tools = [{ name: 'bash', description: 'Run a shell command', input_schema: { type: 'object' as const, properties: { command: { type: 'string' } }, required: ['command'] } }];

describe('Anthropic Messages mock with the real SDK', () => {
  it('runs a two-turn tool loop and records what the model was sent', async () => {
    mock.push(
      { text: 'Let me run that.', toolCalls: [{ name: 'bash', input: { command: 'echo hello' }, id: 'toolu_1' }], usage: { cacheWrite: 100 } },
      (req) => ({ text: `The command printed: ${req.lastUserText.trim()}`, usage: { cacheRead: 100 } }),
    );
    const c = client();
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Say hello via bash.' }];
    const first = await c.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 1024, system: 'You are a test agent.', tools, messages });
    expect(first.stop_reason).toBe('tool_use');
    const call = first.content.find((b) => b.type === 'tool_use');
    expect(call).toMatchObject({ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'echo hello' } });
    expect(first.usage).toMatchObject({ input_tokens: 12, output_tokens: 7, cache_creation_input_tokens: 100, cache_read_input_tokens: 0 });
    messages.push({ role: 'assistant', content: first.content });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'hello\n' }] });
    const second = await c.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 1024, tools, messages });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content).toEqual([{ type: 'text', text: 'The command printed: hello' }]);
    expect(second.usage.cache_read_input_tokens).toBe(100);
    expect(second._request_id).toMatch(/^req_mock_/);

    const sent = mock.requestsFor('anthropic');
    expect(sent).toHaveLength(2);
    expect(sent[0]!.body.system).toBe('You are a test agent.');
    expect(sent[1]!.body.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_1', content: 'hello\n' });
    expect(mock.pending).toBe(0);
  });

  it('streams text and tool_use blocks that the SDK reassembles', async () => {
    mock.push({ text: 'streamed answer', toolCalls: [{ name: 'bash', input: { command: 'ls -la' } }], usage: { output: 30, cacheRead: 5 } });
    const stream = client().messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 100, tools, messages: [{ role: 'user', content: 'go' }] });
    const deltas: string[] = [];
    stream.on('text', (t) => deltas.push(t));
    const msg = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('streamed answer');
    expect(msg.content[1]).toMatchObject({ type: 'tool_use', name: 'bash', input: { command: 'ls -la' } });
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.usage).toMatchObject({ output_tokens: 30, cache_read_input_tokens: 5, input_tokens: 12 });
    expect(mock.requests[0]!.stream).toBe(true);
  });

  it('returns a refusal with its category and explanation', async () => {
    mock.push({ refusal: 'I will not help with that.', category: 'cyber' });
    const msg = await client().messages.create({ model: 'claude-sonnet-4-6', max_tokens: 100, messages: [{ role: 'user', content: 'bad' }] });
    expect(msg.stop_reason).toBe('refusal');
    expect(msg.content).toEqual([]);
    expect((msg as any).stop_details).toEqual({ type: 'refusal', category: 'cyber', explanation: 'I will not help with that.' });
  });

  it('lets the SDK retry 429 and 529 with retry-after-ms, then succeed', async () => {
    mock.push({ error: { status: 429, retryAfterMs: 1 } }, { error: { status: 529, retryAfterMs: 1 } }, { text: 'ok' });
    const msg = await client(2).messages.create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(msg.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(mock.requests.map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '1', '2']);
  });

  it('maps statuses to the SDK error classes with the vendor error body', async () => {
    mock.push({ error: { status: 529 } }, { error: { status: 400, message: 'prompt is too long: 250000 tokens > 200000 maximum' } });
    const c = client();
    const overloaded = await c.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'a' }] }).catch((e: unknown) => e);
    expect(overloaded).toBeInstanceOf(Anthropic.InternalServerError);
    expect((overloaded as any).status).toBe(529);
    expect((overloaded as any).error.error.type).toBe('overloaded_error');
    const tooLong = await c.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'b' }] }).catch((e: unknown) => e);
    expect(tooLong).toBeInstanceOf(Anthropic.BadRequestError);
    expect((tooLong as any).error.error.message).toContain('prompt is too long');
  });

  it('answers 401 when no key is sent, and a malformed body fails the SDK loudly', async () => {
    const res = await fetch(`${mock.url}/v1/messages`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(401);
    expect(mock.pending).toBe(0);
    mock.push({ malformed: '{"id":"msg_1","type":"mess' });
    const err = await client().messages.create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
  });

  it('answers late with delayMs, and never with hang (the SDK times out)', async () => {
    mock.push({ text: 'late', delayMs: 50 }, { hang: true });
    const late = await client().messages.create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    expect(late.content).toEqual([{ type: 'text', text: 'late' }]);
    const c = new Anthropic({ baseURL: mock.url, apiKey: 'k', maxRetries: 0, timeout: 200 });
    const err = await c.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'y' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIConnectionTimeoutError);
    expect(mock.requests).toHaveLength(2);
  });

  it('echoes the prompt when its script is empty and the fallback is echo', async () => {
    const echo = await startMockServer();
    try {
      const c = new Anthropic({ baseURL: echo.url, apiKey: 'k', maxRetries: 0 });
      const msg = await c.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'ping' }] });
      expect(msg.content).toEqual([{ type: 'text', text: 'MOCK_REPLY(anthropic): ping' }]);
    } finally {
      await echo.close();
    }
  });

  it('says so when the script runs out, with fallback "error"', async () => {
    const err = await client().messages.create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(String((err as any).error?.error?.message)).toContain('no scripted turn left');
  });
});
