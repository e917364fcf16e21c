// The mock against the real openai SDK: Responses (tool loop, streaming, refusal, usage) and Chat Completions.
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startMockServer, type MockServer } from './index.js';

let mock: MockServer;
beforeEach(async () => {
  mock = await startMockServer({ whenEmpty: 'error' });
});
afterEach(async () => {
  await mock.close();
});

const client = (maxRetries = 0) => new OpenAI({ baseURL: mock.openaiUrl, apiKey: 'test-key-not-secret', maxRetries });
const bash = { type: 'function' as const, name: 'bash', description: 'Run shell', strict: false, parameters: { type: 'object', properties: { command: { type: 'string' } } } };

describe('OpenAI Responses mock with the real SDK', () => {
  it('runs a stateless two-turn tool loop keyed by call_id', async () => {
    mock.push({ toolCalls: [{ name: 'bash', input: { command: 'echo hi' }, id: 'call_7' }] }, (req) => ({ text: `tool said ${req.lastUserText.trim()}`, usage: { cacheRead: 8, reasoning: 3, output: 10 } }));
    const c = client();
    const first = await c.responses.create({ model: 'gpt-x', instructions: 'test agent', store: false, input: [{ role: 'user', content: 'USE_TOOL' }], tools: [bash] });
    const call = first.output.find((i) => i.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', call_id: 'call_7', name: 'bash', arguments: '{"command":"echo hi"}' });
    expect(first.output_text).toBe('');
    const second = await c.responses.create({
      model: 'gpt-x',
      store: false,
      input: [{ role: 'user', content: 'USE_TOOL' }, ...(first.output as any[]), { type: 'function_call_output', call_id: 'call_7', output: 'hi\n' }],
      tools: [bash],
    });
    expect(second.output_text).toBe('tool said hi');
    expect(second.usage).toMatchObject({ input_tokens: 20, input_tokens_details: { cached_tokens: 8 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 3 } });
    expect(mock.requestsFor('responses')[1]!.body.input.at(-1)).toEqual({ type: 'function_call_output', call_id: 'call_7', output: 'hi\n' });
  });

  it('streams a response the SDK accumulates, and a refusal item', async () => {
    mock.push({ text: 'streamed words', toolCalls: [{ name: 'bash', input: { command: 'pwd' } }] }, { refusal: 'no can do' });
    const c = client();
    const stream = c.responses.stream({ model: 'gpt-x', input: 'go', tools: [bash] });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(deltas.join('')).toBe('streamed words');
    expect(final.output_text).toBe('streamed words');
    expect(final.output[1]).toMatchObject({ type: 'function_call', name: 'bash', arguments: '{"command":"pwd"}' });
    expect(final.usage?.output_tokens).toBe(7);
    const refused = await c.responses.stream({ model: 'gpt-x', input: 'bad' }).finalResponse();
    expect((refused.output[0] as any).content[0]).toMatchObject({ type: 'refusal', refusal: 'no can do' });
  });

  it('retries 429 then 500 and reports a context overflow as BadRequestError with its code', async () => {
    mock.push({ error: { status: 429, retryAfterMs: 1 } }, { error: { status: 500, retryAfterMs: 1 } }, { text: 'fine' });
    const ok = await client(2).responses.create({ model: 'gpt-x', input: 'x' });
    expect(ok.output_text).toBe('fine');
    expect(mock.requests).toHaveLength(3);
    mock.push({ error: { status: 400, type: 'context_length_exceeded', message: 'Your input exceeds the context window' } });
    const err = await client().responses.create({ model: 'gpt-x', input: 'y' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as any).code).toBe('context_length_exceeded');
  });

  it('marks a max-tokens stop as incomplete', async () => {
    mock.push({ text: 'cut', stop: 'max_tokens' });
    const r = await client().responses.create({ model: 'gpt-x', input: 'x' });
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('refuses, as the API does, a replayed reasoning item that nothing of its turn follows (a turn cut after its reasoning)', async () => {
    mock.push({ text: '', reasoning: 'Thinking it over', stop: 'max_tokens' }, { text: 'fine' });
    const c = client();
    const cut = await c.responses.create({ model: 'gpt-x', store: false, input: 'x' });
    expect(cut.output.map((i) => i.type)).toEqual(['reasoning']);
    const err = await c.responses.create({ model: 'gpt-x', store: false, input: [{ role: 'user', content: 'x' }, ...(cut.output as any[]), { role: 'user', content: 'go on' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'input', code: null, message: `400 Item '${cut.output[0]!.id}' of type 'reasoning' was provided without its required following item.` });
    // No turn was taken: the same script answers the request without it.
    const ok = await c.responses.create({ model: 'gpt-x', store: false, input: [{ role: 'user', content: 'x' }, { role: 'user', content: 'go on' }] });
    expect(ok.output_text).toBe('fine');
  });
});

describe('OpenAI Chat Completions mock with the real SDK', () => {
  it('runs a tool loop, non-streaming and streaming with usage', async () => {
    mock.push({ toolCalls: [{ name: 'bash', input: { command: 'echo a' }, id: 'call_1' }] }, { text: 'done', usage: { cacheRead: 4 } });
    const c = client();
    const tool = { type: 'function' as const, function: { name: 'bash', parameters: { type: 'object', properties: {} } } };
    const first = await c.chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'go' }], tools: [tool] });
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(first.choices[0]!.message.tool_calls![0]).toMatchObject({ id: 'call_1', function: { name: 'bash', arguments: '{"command":"echo a"}' } });
    const stream = c.chat.completions.stream({
      model: 'gpt-x',
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'go' }, first.choices[0]!.message as any, { role: 'tool', tool_call_id: 'call_1', content: 'a' }],
    });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe('done');
    expect(final.usage).toMatchObject({ prompt_tokens: 16, prompt_tokens_details: { cached_tokens: 4 } });
    expect(mock.requestsFor('chat')[1]!.lastUserText).toBe('a');
  });
});
