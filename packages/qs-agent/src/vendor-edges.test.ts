// The model agents against a mock written from the vendors' published formats, for the answers that decide
// a run's class or cost and that the vendors send as errors rather than as stops: a content policy that
// blocks the prompt or the output (Anthropic's "Output blocked by content filtering policy", OpenAI's
// `invalid_prompt`, Azure's `content_filter`), over HTTP and inside a 200 stream.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { memoryIo } from '@quickloop/cli-kit';
import { run } from './run.js';
import { localAgentOptions, ndjson, parseOut, taskLoaded, type TaskSpec } from './testing/task-event.js';
import { cleanedAfterEach, MODEL, QS_CHECK, vendorMock, type Reply, type Vendor } from './testing/vendors.js';

const KEY = 'sk-edge-SECRET-7a6b5c4d3e';
const { sandboxesOf, closeLater } = cleanedAfterEach();

async function agentRun(vendor: Vendor, replies: Reply[], opts: { stream?: boolean; task?: TaskSpec } = {}) {
  const mock = await vendorMock(replies, closeLater);
  const env: Record<string, string> =
    vendor === 'anthropic' ? { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url } : vendor === 'gemini' ? { GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: mock.url } : { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${mock.url}/v1` };
  const io = memoryIo({ stdin: ndjson([taskLoaded('e1', { script: 'false', ...opts.task })]), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', ...env } });
  let thrown = '';
  try {
    await run(localAgentOptions(vendor, { model: MODEL[vendor], stream: opts.stream ?? false }), io);
  } catch (error) {
    thrown = String((error as Error).message);
  }
  const out = io.out();
  const events = parseOut(out);
  sandboxesOf(events);
  for (const text of [thrown, out, io.err()]) expect(text).not.toContain(KEY);
  const r = spawnSync(process.execPath, [QS_CHECK, '-q'], { input: out, encoding: 'utf8' });
  const verdict = parseOut(r.stdout).find((e) => e.type === 'run.completed') as Record<string, unknown> | undefined;
  return {
    thrown,
    seen: mock.seen,
    completed: events.find((e) => e.type === 'agent.completed') as Record<string, any>,
    retries: events.filter((e) => e.type === 'agent.retry'),
    turns: events.filter((e) => e.type === 'agent.turn') as Array<Record<string, any>>,
    calls: events.filter((e) => e.type === 'tool.call') as Array<Record<string, any>>,
    classification: verdict?.classification,
  };
}

const BLOCKED = 'Output blocked by content filtering policy';
const FLAGGED = 'Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt: https://platform.openai.com/docs/guides/reasoning#advice-on-prompting';

describe('a content policy that blocks the prompt or the answer, sent as an error', () => {
  it('anthropic: a 400 "Output blocked by content filtering policy" is the model declining (agent_refusal), not a harness or config error, and not retried', async () => {
    const got = await agentRun('anthropic', [{ status: 400, headers: { 'request-id': 'req_b' }, body: { type: 'error', error: { type: 'invalid_request_error', message: BLOCKED }, request_id: 'req_b' } }]);
    expect(got.seen).toHaveLength(1);
    expect(got.completed).toMatchObject({ stop_reason: 'refusal', error_kind: 'refusal' });
    expect(got.completed.detail).toContain(BLOCKED);
    expect(got.thrown).toBe('');
    expect(got.classification).toBe('agent_refusal');
  });

  it('anthropic: the same block as an error event inside a 200 stream, after usage was reported: a refusal that costs what the stream said', async () => {
    const start = { type: 'message_start', message: { id: 'msg_b', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } } };
    const blocked: Reply = {
      sse: [
        ['message_start', start],
        ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
        ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Here is' } }],
        ['error', { type: 'error', error: { details: null, type: 'invalid_request_error', message: BLOCKED } }],
      ],
    };
    const got = await agentRun('anthropic', [blocked, blocked, blocked], { stream: true });
    expect(got.seen).toHaveLength(1);
    expect(got.retries).toEqual([]);
    expect(got.completed).toMatchObject({ stop_reason: 'refusal', error_kind: 'refusal' });
    expect(got.completed.usage).toMatchObject({ input_tokens: 1000, output_tokens: 1 });
    expect(got.completed.usd).toBe((1000 * 3 + 1 * 15) / 1e6);
    expect(got.classification).toBe('agent_refusal');
  });

  it('openai and openai-chat: a 400 invalid_prompt (the prompt flagged under the usage policy) is a refusal, not retried', async () => {
    const flagged: Reply = { status: 400, headers: { 'x-request-id': 'req_f' }, body: { error: { message: FLAGGED, type: 'invalid_request_error', param: null, code: 'invalid_prompt' } } };
    for (const vendor of ['openai', 'openai-chat'] as const) {
      const got = await agentRun(vendor, [flagged, flagged]);
      expect(got.seen, vendor).toHaveLength(1);
      expect(got.completed, vendor).toMatchObject({ stop_reason: 'refusal', error_kind: 'refusal' });
      expect(got.thrown, vendor).toBe('');
      expect(got.classification, vendor).toBe('agent_refusal');
    }
  });

  it('openai: a streamed response.failed whose code is invalid_prompt is a refusal', async () => {
    const base = { id: 'resp_f', object: 'response', created_at: 1, model: 'gpt-5', status: 'in_progress', error: null, incomplete_details: null, output: [], usage: null };
    const failed = { ...base, status: 'failed', error: { code: 'invalid_prompt', message: FLAGGED }, usage: { input_tokens: 500, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 500 } };
    const reply: Reply = { sse: [['response.created', { type: 'response.created', sequence_number: 0, response: base }], ['response.failed', { type: 'response.failed', sequence_number: 1, response: failed }]] };
    const got = await agentRun('openai', [reply, reply], { stream: true });
    expect(got.seen).toHaveLength(1);
    expect(got.completed).toMatchObject({ stop_reason: 'refusal', error_kind: 'refusal' });
    expect(got.completed.usage).toMatchObject({ input_tokens: 500 });
    expect(got.classification).toBe('agent_refusal');
  });

  it("openai-chat: an Azure-style 400 content_filter (the prompt tripped the content management policy) is a refusal", async () => {
    const filtered: Reply = {
      status: 400,
      body: { error: { message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.", type: null, param: 'prompt', code: 'content_filter', status: 400, innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { hate: { filtered: true, severity: 'high' } } } } },
    };
    const got = await agentRun('openai-chat', [filtered, filtered]);
    expect(got.seen).toHaveLength(1);
    expect(got.completed).toMatchObject({ stop_reason: 'refusal', error_kind: 'refusal' });
    expect(got.classification).toBe('agent_refusal');
  });

  it('an ordinary 400 invalid_request_error stays a config error (no refusal read into it)', async () => {
    const got = await agentRun('anthropic', [{ status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages: roles must alternate' } } }]);
    expect(got.completed).toMatchObject({ stop_reason: 'error', error_kind: 'config' });
    expect(got.classification).toBe('harness_error');
  });
});

describe('a model this place may not use', () => {
  // Gemini answers a request from a region it does not serve with a 400 FAILED_PRECONDITION, not a 403:
  // no later run could fare better, so it ends the sweep's stage like a refused key (exit 3), not each run as ours.
  it('gemini: a 400 FAILED_PRECONDITION "User location is not supported" stops as the 403 of a denied access does', async () => {
    const region = { error: { code: 400, message: 'User location is not supported for the API use.', status: 'FAILED_PRECONDITION' } };
    const denied = { error: { code: 403, message: 'Permission denied: Consumer has been suspended.', status: 'PERMISSION_DENIED' } };
    const a = await agentRun('gemini', [{ status: 400, body: region }]);
    const b = await agentRun('gemini', [{ status: 403, body: denied }]);
    expect(a.seen).toHaveLength(1);
    expect(b.thrown).not.toBe('');
    expect(a.thrown).toContain('User location is not supported');
    expect(a.completed).toMatchObject({ stop_reason: b.completed.stop_reason, error_kind: b.completed.error_kind });
    expect(a.classification).toBe(b.classification);
  });
});

describe('streams at their edges', () => {
  it('gemini: a stream whose last event has no blank line after it is cut (as the SSE standard reads it): retried, never a docs gap, and what it said it was billed counts', async () => {
    const chunk = (c: object) => JSON.stringify({ ...c, modelVersion: 'gemini-2.5-flash', responseId: 'g1' });
    const first = chunk({ candidates: [{ content: { role: 'model', parts: [{ text: 'Done' }] }, index: 0 }], usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 1, totalTokenCount: 101 } });
    const last = chunk({ candidates: [{ content: { role: 'model', parts: [{ text: '.' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 2, totalTokenCount: 102 } });
    const unended: Reply = { raw: `data: ${first}\r\n\r\ndata: ${last}\r\n` };
    const whole: Reply = { raw: `data: ${first}\r\n\r\ndata: ${last}\r\n\r\n` };
    const got = await agentRun('gemini', [unended, whole], { stream: true });
    expect(got.seen).toHaveLength(2);
    expect(got.retries).toMatchObject([{ error_kind: 'infra' }]);
    expect(got.completed).toMatchObject({ stop_reason: 'completed', turns: 1 });
    // The cut attempt said 100 in and 1 out; the answer 100 and 2.
    expect(got.completed.usage).toMatchObject({ input_tokens: 200, output_tokens: 3 });
    // Each attempt is priced to the micro-dollar: $0.0000325 rounds to $0.000033, and $0.000035.
    expect(got.completed.usd).toBe(0.000068);
  });

  it('anthropic: thinking and redacted_thinking blocks streamed with signature deltas are not text, and go back verbatim before the tool result', async () => {
    const start = { type: 'message_start', message: { id: 'msg_t', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 50, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } } };
    const ev = (e: Record<string, unknown>): [string, unknown] => [String(e.type), e];
    const got = await agentRun(
      'anthropic',
      [
        {
          sse: [
            ev(start),
            ev({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
            ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'I should list ' } }),
            ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'the files.' } }),
            ev({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig-opaque-1' } }),
            ev({ type: 'content_block_stop', index: 0 }),
            ev({ type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'redacted-opaque-2' } }),
            ev({ type: 'content_block_stop', index: 1 }),
            ev({ type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_t', name: 'bash', input: {} } }),
            ev({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"command":"echo hi"}' } }),
            ev({ type: 'content_block_stop', index: 2 }),
            ev({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 80 } }),
            ev({ type: 'message_stop' }),
          ],
        },
        {
          sse: [
            ev(start),
            ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
            ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Done.' } }),
            ev({ type: 'content_block_stop', index: 0 }),
            ev({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } }),
            ev({ type: 'message_stop' }),
          ],
        },
      ],
      { stream: true },
    );
    expect(got.completed).toMatchObject({ stop_reason: 'completed', turns: 2, final_text: 'Done.' });
    expect(got.turns[0]?.blocks).toEqual([{ type: 'tool_call', id: 'toolu_t', name: 'bash', input: { command: 'echo hi' } }]);
    const replayed = got.seen[1]?.body.messages[1];
    expect(replayed.role).toBe('assistant');
    expect(replayed.content.map((b: any) => [b.type, b.thinking ?? b.data ?? b.id, b.signature])).toEqual([
      ['thinking', 'I should list the files.', 'sig-opaque-1'],
      ['redacted_thinking', 'redacted-opaque-2', undefined],
      ['tool_use', 'toolu_t', undefined],
    ]);
    expect(got.seen[1]?.body.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_t' });
  });
});
