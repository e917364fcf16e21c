// The API adapters against the testkit's second mock, written from the vendors' published formats:
// what the first mock never sends (errors inside a 200 stream, response.failed, ids left out, usage
// with fields missing, finish reasons beyond STOP) and what a faithful client must make of it.
import { MOCK_ENCRYPTED_REASONING, MOCK_SIGNATURE, startVendorFaithfulServer, type FaithfulServer, type FaithfulStep } from '@quickloop/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelError } from '../errors.js';
import type { RetryPolicy } from '../retry.js';
import type { Message, ModelAdapter, ToolSpec, TurnResult } from '../types.js';
import { AnthropicAdapter } from './anthropic.js';
import { GeminiAdapter } from './gemini.js';
import { OpenAIChatAdapter } from './openai-chat.js';
import { OpenAIResponsesAdapter } from './openai-responses.js';

const tools: ToolSpec[] = [{ name: 'bash', description: 'Run a shell command', schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } }];

type Api = 'anthropic' | 'responses' | 'chat' | 'gemini';
const APIS: Api[] = ['anthropic', 'responses', 'chat', 'gemini'];

function make(api: Api, server: FaithfulServer, retry: RetryPolicy): ModelAdapter {
  const o = { apiKey: 'test-key', retry };
  if (api === 'anthropic') return new AnthropicAdapter({ ...o, baseURL: server.url });
  if (api === 'responses') return new OpenAIResponsesAdapter({ ...o, baseURL: server.openaiUrl });
  if (api === 'chat') return new OpenAIChatAdapter({ ...o, baseURL: server.openaiUrl });
  return new GeminiAdapter({ ...o, baseURL: server.url });
}

const servers: FaithfulServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/** A server, an adapter whose retry waits are only recorded, and a turn function. */
async function setup(api: Api, script: FaithfulStep[], retries = 2) {
  const server = await startVendorFaithfulServer(script);
  servers.push(server);
  const waits: number[] = [];
  const adapter = make(api, server, { retries, random: () => 0, sleep: async (ms) => void waits.push(ms) });
  const turn = (stream: boolean, messages: Message[] = [{ role: 'user', blocks: [{ type: 'text', text: 'go' }] }]) => adapter.turn({ model: 'm-1', system: 'sys', messages, tools, maxTokens: 256, stream });
  return { server, waits, adapter, turn };
}

async function failure(p: Promise<TurnResult>): Promise<ModelError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

const OVERLOADED: Record<Api, string> = { anthropic: 'overloaded_error', responses: 'server_error', chat: 'server_error', gemini: 'UNAVAILABLE' };

describe.each(APIS)('%s against the faithful mock', (api) => {
  it('retries an error event inside a 200 stream that says the vendor is overloaded, then succeeds', async () => {
    const { turn, waits, server } = await setup(api, [{ streamError: { type: OVERLOADED[api] }, text: 'partial ' }, { text: 'whole answer' }]);
    const result = await turn(true);
    expect(result.attempts).toBe(2);
    expect(result.blocks).toEqual([{ type: 'text', text: 'whole answer' }]);
    expect(result.stop).toBe('end_turn');
    expect(waits).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry an error event that says the request itself is wrong', async () => {
    const { turn, server } = await setup(api, [{ streamError: { type: api === 'gemini' ? 'INVALID_ARGUMENT' : 'invalid_request_error', message: 'bad field', code: 400 } }]);
    const error = await failure(turn(true));
    expect(error.transient).toBe(false);
    expect(error.message).toMatch(/bad field/);
    expect(server.requests).toHaveLength(1);
  });

  it('never takes a stream that stopped before its end for a finished answer: transient, retried', async () => {
    const { turn, server } = await setup(api, [{ cut: 'half an ans' }, { text: 'whole answer' }]);
    const result = await turn(true);
    expect(result.blocks).toEqual([{ type: 'text', text: 'whole answer' }]);
    expect(result.attempts).toBe(2);
    expect(server.requests).toHaveLength(2);
  });

  it('gives zeros, never NaN, for a usage object with fields missing', async () => {
    const raw = { anthropic: { output_tokens: 5 }, responses: { output_tokens: 3 }, chat: { completion_tokens: 2 }, gemini: { candidatesTokenCount: 4 } };
    for (const stream of [true, false]) {
      const { turn } = await setup(api, [{ usageRaw: raw, text: 'ok' }]);
      const { usage } = await turn(stream);
      for (const v of Object.values(usage)) expect(Number.isFinite(v), `${api} stream=${stream} ${JSON.stringify(usage)}`).toBe(true);
      expect(usage.input, JSON.stringify(usage)).toBe(0);
      expect(usage.output).toBeGreaterThan(0);
    }
  });

  it('gives every tool call an id unique in the run, turn after turn, and sends results back paired', async () => {
    for (const stream of [true, false]) {
      const call = { toolCalls: [{ name: 'bash', input: { command: 'a' } }, { name: 'bash', input: { command: 'b' } }] };
      const { turn, server } = await setup(api, [call, call, { text: 'done' }]);
      const messages: Message[] = [{ role: 'user', blocks: [{ type: 'text', text: 'go' }] }];
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await turn(stream, messages);
        messages.push({ role: 'assistant', blocks: r.blocks, native: r.native });
        const calls = r.blocks.filter((b) => b.type === 'tool_call');
        if (calls.length === 0) break;
        ids.push(...calls.map((c) => c.id));
        messages.push({ role: 'user', blocks: calls.map((c) => ({ type: 'tool_result' as const, id: c.id, name: c.name, output: `out ${c.id}` })) });
      }
      expect(ids).toHaveLength(4);
      expect(new Set(ids).size, ids.join(',')).toBe(4);
      const last = server.requests.at(-1)!.body;
      if (api === 'gemini') {
        // The API sent no ids, so none goes back: a response is paired with its call by name and order.
        expect(JSON.stringify(last.contents)).not.toMatch(/"id"/);
        expect(last.contents.at(-1).parts).toHaveLength(2);
      }
    }
  });

  it('replays streamed reasoning (thinking deltas and signature, encrypted reasoning, thought signatures) verbatim next turn', async () => {
    for (const stream of [true, false]) {
      const { turn, server } = await setup(api, [{ reasoning: 'Let me think about this at length.', toolCalls: [{ name: 'bash', input: { command: 'ls' } }] }, { text: 'done' }]);
      const messages: Message[] = [{ role: 'user', blocks: [{ type: 'text', text: 'go' }] }];
      const first = await turn(stream, messages);
      expect(first.blocks.map((b) => b.type), `${api} stream=${stream}`).toEqual(['tool_call']);
      const call = first.blocks[0]!;
      messages.push({ role: 'assistant', blocks: first.blocks, native: first.native }, { role: 'user', blocks: [{ type: 'tool_result', id: (call as { id: string }).id, name: 'bash', output: 'x' }] });
      await turn(stream, messages);
      const sent = JSON.stringify(server.requests[1]!.body);
      if (api === 'anthropic') {
        expect(server.requests[1]!.body.messages[1].content[0]).toMatchObject({ type: 'thinking', thinking: 'Let me think about this at length.', signature: MOCK_SIGNATURE });
      } else if (api === 'responses') {
        expect(sent).toContain(MOCK_ENCRYPTED_REASONING);
      } else if (api === 'gemini') {
        expect(sent).toContain(MOCK_SIGNATURE);
      }
    }
  });

  it('reports a refusal as a stop, streaming and not', async () => {
    for (const stream of [true, false]) {
      const { turn } = await setup(api, [{ refusal: 'I will not help with that.', category: 'cyber' }]);
      const r = await turn(stream);
      expect(r.stop, `${api} stream=${stream}`).toBe('refusal');
      const want = { anthropic: { category: 'cyber', explanation: 'I will not help with that.' }, responses: { explanation: 'I will not help with that.' }, chat: { explanation: 'I will not help with that.' }, gemini: { category: 'SAFETY' } };
      expect(r.refusal, `${api} stream=${stream}`).toEqual(want[api]);
    }
  });

  it('honours a retry-after header (or Gemini RetryInfo) as the floor of the wait', async () => {
    const { turn, waits } = await setup(api, [{ error: { status: api === 'anthropic' ? 529 : 503, retryAfterSec: 3 } }, { text: 'ok' }]);
    const r = await turn(false);
    expect(r.attempts).toBe(2);
    expect(waits[0]).toBeGreaterThanOrEqual(api === 'gemini' ? 0 : 3000);
  });
});

describe('details of one vendor', () => {
  it('anthropic: the request id comes from the request-id header, streaming and not; cache counters are read', async () => {
    for (const stream of [true, false]) {
      const { turn } = await setup('anthropic', [{ text: 'hi', usage: { input: 5, cacheRead: 40, cacheWrite: 9, output: 3 } }]);
      const r = await turn(stream);
      expect(r.requestId).toBe('req_vf_1');
      expect(r.usage).toEqual({ input: 5, cache_read: 40, cache_write: 9, output: 3, reasoning: 0 });
    }
  });

  it('responses: an error event with a null code and the server-error message is retried', async () => {
    const { turn } = await setup('responses', [{ streamError: { type: null as unknown as string, message: 'The server had an error while processing your request. Sorry about that!' } }, { text: 'ok' }]);
    expect((await turn(true)).attempts).toBe(2);
  });

  it('responses: a response.failed with a server error is retried; one with a bad prompt is not', async () => {
    const a = await setup('responses', [{ failed: { code: 'server_error', message: 'oops' } }, { text: 'ok' }]);
    expect((await a.turn(true)).attempts).toBe(2);
    const b = await setup('responses', [{ failed: { code: 'invalid_prompt', message: 'no' } }]);
    const error = await failure(b.turn(true));
    expect(error.transient).toBe(false);
    expect(error.errorKind).not.toBe('harness');
  });

  it('responses: a turn cut after its reasoning (incomplete, reasoning only) is not replayed as an orphan reasoning item, which the API refuses', async () => {
    for (const stream of [true, false]) {
      const { turn, server } = await setup('responses', [{ text: '', reasoning: 'Thinking and thinking.', stop: 'max_tokens', usage: { output: 64, reasoning: 64 } }, { text: 'done' }], 0);
      const messages: Message[] = [{ role: 'user', blocks: [{ type: 'text', text: 'go' }] }];
      const cut = await turn(stream, messages);
      expect(cut).toMatchObject({ stop: 'max_tokens', blocks: [], usage: { reasoning: 64 } });
      messages.push({ role: 'assistant', blocks: cut.blocks, native: cut.native }, { role: 'user', blocks: [{ type: 'text', text: 'go on' }] });
      expect((await turn(stream, messages)).blocks, `stream=${stream}`).toEqual([{ type: 'text', text: 'done' }]);
      expect(JSON.stringify(server.requests[1]!.body.input)).not.toContain(MOCK_ENCRYPTED_REASONING);
    }
  });

  it('responses and chat: the request id comes from x-request-id when streaming too; cached and reasoning tokens are read', async () => {
    for (const api of ['responses', 'chat'] as const) {
      const { turn } = await setup(api, [{ text: 'hi', usage: { input: 5, cacheRead: 40, output: 9, reasoning: 4 } }]);
      const r = await turn(true);
      expect(r.requestId, api).toBe('req_vf_1');
      expect(r.usage, api).toEqual({ input: 5, cache_read: 40, cache_write: 0, output: 9, reasoning: 4 });
    }
  });

  it('gemini: text cut over stream chunks is one text; thought parts are not text; usage is read from the last chunk', async () => {
    const { turn } = await setup('gemini', [{ text: 'a fairly long answer', reasoning: 'thinking it over', usage: { input: 10, cacheRead: 30, output: 12, reasoning: 5 } }]);
    const r = await turn(true);
    expect(r.blocks).toEqual([{ type: 'text', text: 'a fairly long answer' }]);
    expect(r.usage).toEqual({ input: 10, cache_read: 30, cache_write: 0, output: 12, reasoning: 5 });
    expect(r.model).toBe('m-1-001');
  });

  it('gemini: a blocked prompt (promptFeedback.blockReason, no candidates) is a refusal, streaming and not', async () => {
    for (const stream of [true, false]) {
      const { turn } = await setup('gemini', [{ geminiBlocked: 'PROHIBITED_CONTENT' }]);
      const r = await turn(stream);
      expect(r.stop).toBe('refusal');
      expect(r.refusal).toEqual({ category: 'PROHIBITED_CONTENT' });
    }
  });

  it('gemini: MALFORMED_FUNCTION_CALL is a bad sample to ask again for, not a finished answer', async () => {
    for (const stream of [true, false]) {
      const { turn, server } = await setup('gemini', [{ geminiFinish: 'MALFORMED_FUNCTION_CALL' }, { toolCalls: [{ name: 'bash', input: { command: 'ls' } }] }]);
      const r = await turn(stream);
      expect(r.attempts).toBe(2);
      expect(r.stop).toBe('tool_use');
      expect(server.requests).toHaveLength(2);
      const again = await setup('gemini', [{ geminiFinish: 'MALFORMED_FUNCTION_CALL' }], 0);
      expect(await failure(again.turn(stream))).toMatchObject({ errorKind: 'infra', transient: true });
    }
  });

  it('gemini: RECITATION is a refusal, MAX_TOKENS a max-tokens stop', async () => {
    const { turn } = await setup('gemini', [{ geminiFinish: 'RECITATION', text: 'quoted' }, { geminiFinish: 'MAX_TOKENS', text: 'cut' }]);
    expect((await turn(true)).stop).toBe('refusal');
    expect((await turn(true)).stop).toBe('max_tokens');
  });

  it('anthropic: pause_turn is a paused turn to send back, model_context_window_exceeded an overflow, an unknown stop not a finish', async () => {
    for (const stream of [true, false]) {
      const { turn } = await setup('anthropic', [{ anthropicStop: 'pause_turn', text: 'half' }, { anthropicStop: 'model_context_window_exceeded', text: 'x' }, { anthropicStop: 'a_reason_from_next_year', text: 'y' }]);
      expect(await turn(stream), `stream=${stream}`).toMatchObject({ stop: 'pause', blocks: [{ type: 'text', text: 'half' }] });
      expect((await turn(stream)).stop).toBe('context_overflow');
      expect((await turn(stream)).stop).toBe('other');
    }
  });
});
