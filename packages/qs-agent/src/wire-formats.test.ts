// The model agents against a mock written from the vendors' published wire formats (not @quickloop/testkit):
// several tool calls in one reply, every kind of ending, cache and reasoning counters, error bodies with
// their statuses and retry hints. Each run's stop, classification, tokens, cost and retries are checked.
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { memoryIo } from '@quickloop/cli-kit';
import { run } from './run.js';
import { localAgentOptions, ndjson, parseOut, taskLoaded, type TaskSpec } from './testing/task-event.js';
import { cleanedAfterEach, MODEL, QS_CHECK, vendorMock, type Reply, type Vendor } from './testing/vendors.js';

const QS_AGENT = fileURLToPath(new URL('../bin/qs-agent.js', import.meta.url));
const KEY = 'sk-wire-SECRET-5f1e2d3c4b';
const { sandboxesOf, closeLater } = cleanedAfterEach();

async function agentRun(vendor: Vendor, replies: Reply[], opts: { stream?: boolean; task?: TaskSpec } = {}) {
  const mock = await vendorMock(replies, closeLater);
  const env: Record<string, string> =
    vendor === 'anthropic' ? { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url } : vendor === 'gemini' ? { GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: mock.url } : { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${mock.url}/v1` };
  const io = memoryIo({ stdin: ndjson([taskLoaded('w1', { script: 'false', ...opts.task })]), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', ...env } });
  let code: number | undefined;
  let thrown = '';
  try {
    code = await run(localAgentOptions(vendor, { model: MODEL[vendor], stream: opts.stream ?? false }), io);
  } catch (error) {
    // A refused key is a usage error (exit 2), thrown after the run is recorded.
    thrown = String((error as Error).message);
  }
  expect(thrown).not.toContain(KEY);
  const events = parseOut(io.out());
  sandboxesOf(events);
  const out = io.out();
  const err = io.err();
  expect(out).not.toContain(KEY);
  expect(err).not.toContain(KEY);
  const r = spawnSync(process.execPath, [QS_CHECK, '-q'], { input: out, encoding: 'utf8' });
  const verdict = parseOut(r.stdout).find((e) => e.type === 'run.completed') as Record<string, unknown> | undefined;
  return {
    code,
    thrown,
    events,
    err,
    seen: mock.seen,
    completed: events.find((e) => e.type === 'agent.completed') as Record<string, any>,
    turns: events.filter((e) => e.type === 'agent.turn') as Array<Record<string, any>>,
    retries: events.filter((e) => e.type === 'agent.retry'),
    calls: events.filter((e) => e.type === 'tool.call'),
    classification: verdict?.classification,
  };
}

// ---- Anthropic Messages ----
const aMsg = (content: unknown[], stop_reason: string, usage: Record<string, number> = { input_tokens: 10, output_tokens: 5 }, extra: object = {}): Reply => ({
  headers: { 'request-id': 'req_a' },
  body: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content, stop_reason, stop_sequence: null, usage, ...extra },
});
const aErr = (status: number, type: string, headers: Record<string, string> = {}, message = `${type} happened`): Reply => ({ status, headers, body: { type: 'error', error: { type, message }, request_id: 'req_e' } });
const bashUse = (id: string, command: string) => ({ type: 'tool_use', id, name: 'bash', input: { command } });

describe('anthropic, as the Messages API answers', () => {
  it('runs several tool_use blocks of one reply, counts cache writes and reads once, and prices them', async () => {
    const got = await agentRun('anthropic', [
      aMsg([{ type: 'text', text: 'Two commands.' }, bashUse('toolu_1', 'echo one'), bashUse('toolu_2', 'echo two')], 'tool_use', { input_tokens: 10, cache_creation_input_tokens: 2000, cache_read_input_tokens: 0, output_tokens: 50 }),
      aMsg([{ type: 'text', text: 'Done.' }], 'end_turn', { input_tokens: 20, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 30 }),
    ]);
    expect(got.completed).toMatchObject({ stop_reason: 'completed', turns: 2 });
    expect(got.calls.map((c) => c.call_id)).toEqual(['toolu_1', 'toolu_2']);
    expect(got.turns.map((t) => t.usage)).toEqual([
      { input_tokens: 10, cache_read_tokens: 0, cache_write_tokens: 2000, output_tokens: 50, reasoning_tokens: 0 },
      { input_tokens: 20, cache_read_tokens: 2000, cache_write_tokens: 100, output_tokens: 30, reasoning_tokens: 0 },
    ]);
    // $3 in, $0.30 cache read, $3.75 cache write, $15 out per million.
    expect(got.turns.map((t) => t.usd)).toEqual([(10 * 3 + 2000 * 3.75 + 50 * 15) / 1e6, (20 * 3 + 2000 * 0.3 + 100 * 3.75 + 30 * 15) / 1e6]);
    // Both results go back in one user message, paired by id.
    const results = got.seen[1]?.body.messages.at(-1).content;
    expect(results.map((r: any) => [r.type, r.tool_use_id])).toEqual([['tool_result', 'toolu_1'], ['tool_result', 'toolu_2']]);
    // This SDK sends the key as a bearer token; older ones sent x-api-key.
    expect([got.seen[0]?.headers['x-api-key'], got.seen[0]?.headers.authorization]).toContainEqual(expect.stringContaining(KEY));
  });

  it('a refusal is agent_refusal; pause_turn resumes; max_tokens is no docs gap', async () => {
    const refused = await agentRun('anthropic', [aMsg([], 'refusal')]);
    expect(refused.completed).toMatchObject({ stop_reason: 'refusal', error_kind: 'refusal' });
    expect(refused.classification).toBe('agent_refusal');
    const paused = await agentRun('anthropic', [aMsg([{ type: 'text', text: 'Working' }], 'pause_turn'), aMsg([{ type: 'text', text: 'Done.' }], 'end_turn')]);
    expect(paused.completed).toMatchObject({ stop_reason: 'completed', turns: 2 });
    const cut = await agentRun('anthropic', [aMsg([{ type: 'text', text: 'a' }], 'max_tokens'), aMsg([{ type: 'text', text: 'b' }], 'max_tokens')], { task: { budgets: { max_turns: 2 } } });
    expect(cut.completed.stop_reason).not.toBe('completed');
    expect(cut.classification).not.toBe('docs_gap');
  });

  it('retries 529 and 429 (honouring retry-after), never a 400 or a 401', async () => {
    const ok = await agentRun('anthropic', [aErr(529, 'overloaded_error', { 'retry-after': '0' }), aErr(429, 'rate_limit_error', { 'retry-after': '1' }), aMsg([{ type: 'text', text: 'Done.' }], 'end_turn')]);
    expect(ok.completed).toMatchObject({ stop_reason: 'completed' });
    expect(ok.retries).toMatchObject([{ status: 529, error_kind: 'infra' }, { status: 429, error_kind: 'infra', wait_ms: expect.any(Number) }]);
    expect(Number((ok.retries[1] as any).wait_ms)).toBeGreaterThanOrEqual(1000);
    const bad = await agentRun('anthropic', [aErr(400, 'invalid_request_error'), aMsg([], 'end_turn')]);
    expect(bad.seen).toHaveLength(1);
    expect(bad.classification).not.toBe('docs_gap');
    const key = await agentRun('anthropic', [aErr(401, 'authentication_error', {}, `invalid x-api-key ${KEY}`), aMsg([], 'end_turn')]);
    expect(key.seen).toHaveLength(1);
    expect(key.completed).toMatchObject({ stop_reason: 'error', error_kind: 'config' });
  });

  it('streaming: two tool_use blocks, usage completed by message_delta', async () => {
    const start = { type: 'message_start', message: { id: 'msg_s', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 500, output_tokens: 1 } } };
    const use = (i: number, id: string, cmd: string): Array<[string, unknown]> => [
      ['content_block_start', { type: 'content_block_start', index: i, content_block: { type: 'tool_use', id, name: 'bash', input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'input_json_delta', partial_json: '{"command": ' } }],
      ['content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'input_json_delta', partial_json: JSON.stringify(cmd) + '}' } }],
      ['content_block_stop', { type: 'content_block_stop', index: i }],
    ];
    const got = await agentRun(
      'anthropic',
      [
        { sse: [['message_start', start], ['ping', { type: 'ping' }], ...use(0, 'toolu_a', 'echo a'), ...use(1, 'toolu_b', 'echo b'), ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 40 } }], ['message_stop', { type: 'message_stop' }]] },
        { sse: [['message_start', start], ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }], ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Done.' } }], ['content_block_stop', { type: 'content_block_stop', index: 0 }], ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } }], ['message_stop', { type: 'message_stop' }]] },
      ],
      { stream: true },
    );
    expect(got.completed).toMatchObject({ stop_reason: 'completed', turns: 2 });
    expect(got.calls.map((c) => [c.call_id, c.command])).toEqual([['toolu_a', 'echo a'], ['toolu_b', 'echo b']]);
    expect(got.turns.map((t) => t.usage)).toEqual([
      { input_tokens: 10, cache_read_tokens: 500, cache_write_tokens: 0, output_tokens: 40, reasoning_tokens: 0 },
      { input_tokens: 10, cache_read_tokens: 500, cache_write_tokens: 0, output_tokens: 7, reasoning_tokens: 0 },
    ]);
  });
});

// ---- OpenAI Responses ----
const rResp = (output: unknown[], usage: Record<string, unknown>, extra: object = {}): Reply => ({
  headers: { 'x-request-id': 'req_r' },
  body: { id: 'resp_1', object: 'response', created_at: 1, model: 'gpt-5-2025-08-07', status: 'completed', error: null, incomplete_details: null, output, usage, ...extra },
});
const rUsage = (input: number, cached: number, output: number, reasoning: number) => ({ input_tokens: input, input_tokens_details: { cached_tokens: cached }, output_tokens: output, output_tokens_details: { reasoning_tokens: reasoning }, total_tokens: input + output });
const rText = (text: string) => ({ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] });
const rCall = (call_id: string, command: string) => ({ type: 'function_call', id: `fc_${call_id}`, call_id, name: 'bash', arguments: JSON.stringify({ command }), status: 'completed' });
const rReasoning = { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA-enc' };

describe('openai, as the Responses API answers', () => {
  it('reasoning, text and two calls in one reply; cached and reasoning tokens counted once; incomplete is no finish', async () => {
    const got = await agentRun('openai', [
      rResp([rReasoning, rText('Two commands.'), rCall('call_1', 'echo one'), rCall('call_2', 'echo two')], rUsage(1200, 1000, 300, 200)),
      rResp([rReasoning], rUsage(1500, 1200, 100, 100), { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }),
      rResp([rText('Done.')], rUsage(1600, 1500, 10, 0)),
    ]);
    expect(got.completed).toMatchObject({ stop_reason: 'completed', turns: 3 });
    expect(got.calls.map((c) => c.call_id)).toEqual(['call_1', 'call_2']);
    expect(got.turns.map((t) => t.stop)).toEqual(['tool_use', 'max_tokens', 'end_turn']);
    expect(got.turns[0]?.usage).toEqual({ input_tokens: 200, cache_read_tokens: 1000, cache_write_tokens: 0, output_tokens: 300, reasoning_tokens: 200 });
    expect(got.turns[0]?.usd).toBe((200 * 1.25 + 1000 * 0.125 + 300 * 10) / 1e6);
    // The reasoning item goes back verbatim, both results after it.
    const input = got.seen[1]?.body.input as any[];
    expect(input.filter((i) => i.type === 'reasoning')).toEqual([rReasoning]);
    expect(input.filter((i) => i.type === 'function_call_output').map((i) => i.call_id)).toEqual(['call_1', 'call_2']);
    expect(got.seen[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('a refusal part and a content_filter stop are agent_refusal; incomplete to the end is no docs gap', async () => {
    const refused = await agentRun('openai', [rResp([{ type: 'message', id: 'm', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help.' }] }], rUsage(10, 0, 5, 0))]);
    expect(refused.completed).toMatchObject({ stop_reason: 'refusal' });
    expect(refused.classification).toBe('agent_refusal');
    const filtered = await agentRun('openai', [rResp([], rUsage(10, 0, 0, 0), { status: 'incomplete', incomplete_details: { reason: 'content_filter' } })]);
    expect(filtered.classification).toBe('agent_refusal');
    const inc = { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
    const cut = await agentRun('openai', [rResp([rReasoning], rUsage(10, 0, 5, 5), inc), rResp([rReasoning], rUsage(10, 0, 5, 5), inc)], { task: { budgets: { max_turns: 2 } } });
    expect(cut.classification).not.toBe('docs_gap');
  });

  it('retries a 429 and a 500, not a 400 or a 401', async () => {
    const e = (status: number, type: string, code: string | null) => ({ status, headers: { 'retry-after-ms': '10' }, body: { error: { message: `${type}!`, type, param: null, code } } });
    const ok = await agentRun('openai', [e(429, 'requests', 'rate_limit_exceeded'), e(500, 'server_error', null), rResp([rText('Done.')], rUsage(1, 0, 1, 0))]);
    expect(ok.retries).toMatchObject([{ status: 429 }, { status: 500 }]);
    expect(ok.completed).toMatchObject({ stop_reason: 'completed' });
    const bad = await agentRun('openai', [e(400, 'invalid_request_error', 'invalid_value'), rResp([rText('Done.')], rUsage(1, 0, 1, 0))]);
    expect(bad.seen).toHaveLength(1);
    const key = await agentRun('openai', [{ status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } }, rResp([rText('Done.')], rUsage(1, 0, 1, 0))]);
    expect(key.seen).toHaveLength(1);
    expect(key.completed).toMatchObject({ stop_reason: 'error', error_kind: 'config' });
  });
});

// ---- OpenAI Chat Completions ----
const cResp = (message: Record<string, unknown>, finish_reason: string, usage: Record<string, unknown> = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }): Reply => ({
  headers: { 'x-request-id': 'req_c' },
  body: { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-5-2025-08-07', choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null, ...message }, logprobs: null, finish_reason }], usage },
});
const cCall = (id: string, command: string) => ({ id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } });

describe('openai-chat, as Chat Completions answers', () => {
  it('two tool_calls with JSON-string arguments; cached prompt tokens counted once', async () => {
    const got = await agentRun('openai-chat', [
      cResp({ tool_calls: [cCall('call_1', 'echo one'), cCall('call_2', 'echo two')] }, 'tool_calls', { prompt_tokens: 1200, completion_tokens: 40, total_tokens: 1240, prompt_tokens_details: { cached_tokens: 1000 }, completion_tokens_details: { reasoning_tokens: 30 } }),
      cResp({ content: 'Done.' }, 'stop'),
    ]);
    expect(got.completed).toMatchObject({ stop_reason: 'completed', turns: 2 });
    expect(got.calls.map((c) => [c.call_id, c.command])).toEqual([['call_1', 'echo one'], ['call_2', 'echo two']]);
    expect(got.turns[0]?.usage).toEqual({ input_tokens: 200, cache_read_tokens: 1000, cache_write_tokens: 0, output_tokens: 40, reasoning_tokens: 30 });
    const msgs = got.seen[1]?.body.messages as any[];
    expect(msgs.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['call_1', 'call_2']);
  });

  it("a reasoning model's 400 for max_tokens (it wants max_completion_tokens) is answered by the newer name, then kept", async () => {
    const unsupported: Reply = { status: 400, body: { error: { message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", type: 'invalid_request_error', param: 'max_tokens', code: 'unsupported_parameter' } } };
    const got = await agentRun('openai-chat', [unsupported, cResp({ tool_calls: [cCall('call_1', 'true')] }, 'tool_calls'), cResp({ content: 'Done.' }, 'stop')]);
    expect(got.completed).toMatchObject({ stop_reason: 'completed', turns: 2 });
    expect(got.seen.map((r) => [r.body.max_tokens !== undefined, r.body.max_completion_tokens !== undefined])).toEqual([[true, false], [false, true], [false, true]]);
    expect(got.retries).toEqual([]);
    // Any other 400 is still not retried.
    const other = await agentRun('openai-chat', [{ status: 400, body: { error: { message: "Invalid value for 'temperature'.", type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' } } }, cResp({ content: 'Done.' }, 'stop')]);
    expect(other.seen).toHaveLength(1);
    expect(other.completed).toMatchObject({ stop_reason: 'error', error_kind: 'config' });
  });

  it('content_filter is agent_refusal; length to the end is no docs gap', async () => {
    const filtered = await agentRun('openai-chat', [cResp({ content: '' }, 'content_filter')]);
    expect(filtered.completed).toMatchObject({ stop_reason: 'refusal' });
    expect(filtered.classification).toBe('agent_refusal');
    const cut = await agentRun('openai-chat', [cResp({ content: 'a' }, 'length'), cResp({ content: 'b' }, 'length')], { task: { budgets: { max_turns: 2 } } });
    expect(cut.classification).not.toBe('docs_gap');
  });
});

// ---- Gemini generateContent ----
const gResp = (parts: unknown[], finishReason: string | undefined, usageMetadata: Record<string, unknown> = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }, extra: object = {}): Reply => ({
  body: { candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}), index: 0 }], usageMetadata, modelVersion: 'gemini-2.5-flash', responseId: 'gr_1', ...extra },
});
const gErr = (code: number, status: string, message: string, details: unknown[] = []): Reply => ({ status: code, body: { error: { code, message, status, details } } });

describe('gemini, as generateContent answers', () => {
  it('two functionCall parts without ids; cached and thought tokens counted once', async () => {
    const got = await agentRun('gemini', [
      gResp([{ text: 'Two commands.' }, { functionCall: { name: 'bash', args: { command: 'echo one' } } }, { functionCall: { name: 'bash', args: { command: 'echo two' } } }], 'STOP', {
        promptTokenCount: 1200,
        cachedContentTokenCount: 1000,
        candidatesTokenCount: 40,
        thoughtsTokenCount: 60,
        totalTokenCount: 1300,
      }),
      gResp([{ text: 'Done.' }], 'STOP'),
    ]);
    expect(got.completed).toMatchObject({ stop_reason: 'completed', turns: 2 });
    expect(got.calls.map((c) => c.command)).toEqual(['echo one', 'echo two']);
    expect(got.turns[0]?.usage).toEqual({ input_tokens: 200, cache_read_tokens: 1000, cache_write_tokens: 0, output_tokens: 100, reasoning_tokens: 60 });
    expect(got.turns[0]?.usd).toBe((200 * 0.3 + 1000 * 0.03 + 100 * 2.5) / 1e6);
    const last = (got.seen[1]?.body.contents as any[]).at(-1);
    expect(last.parts.map((p: any) => p.functionResponse?.name)).toEqual(['bash', 'bash']);
    expect(got.seen[0]?.headers['x-goog-api-key']).toBe(KEY);
  });

  it('SAFETY, RECITATION and a blocked prompt are agent_refusal; MAX_TOKENS to the end is no docs gap', async () => {
    for (const reply of [gResp([], 'SAFETY'), gResp([{ text: 'partial' }], 'RECITATION'), { body: { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 10, totalTokenCount: 10 } } }]) {
      const got = await agentRun('gemini', [reply]);
      expect(got.completed).toMatchObject({ stop_reason: 'refusal' });
      expect(got.classification).toBe('agent_refusal');
    }
    const cut = await agentRun('gemini', [gResp([{ text: 'a' }], 'MAX_TOKENS'), gResp([{ text: 'b' }], 'MAX_TOKENS')], { task: { budgets: { max_turns: 2 } } });
    expect(cut.classification).not.toBe('docs_gap');
  });

  it('retries 429 RESOURCE_EXHAUSTED (with its RetryInfo) and 503, not a 400 bad key', async () => {
    const retryInfo = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0s' }];
    const ok = await agentRun('gemini', [gErr(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded', retryInfo), gErr(503, 'UNAVAILABLE', 'The model is overloaded.'), gResp([{ text: 'Done.' }], 'STOP')]);
    expect(ok.retries).toMatchObject([{ status: 429 }, { status: 503 }]);
    expect(ok.completed).toMatchObject({ stop_reason: 'completed' });
    const key = await agentRun('gemini', [
      gErr(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }]),
      gResp([{ text: 'Done.' }], 'STOP'),
    ]);
    expect(key.seen).toHaveLength(1);
    expect(key.completed).toMatchObject({ stop_reason: 'error', error_kind: 'config' });
  });
});

describe('every vendor, less common shapes', () => {
  it('a 403 about access (region, model, project, permission) is a config error saying what the vendor said, never that the key was refused; a 403 about the key says so', async () => {
    const oErr = (code: string, type: string, message: string): Reply => ({ status: 403, headers: { 'x-request-id': 'req_o' }, body: { error: { message, type, param: null, code } } });
    const cases: Array<[Vendor, Reply, RegExp]> = [
      ['anthropic', aErr(403, 'permission_error', {}, 'Your API key does not have permission to use the specified resource.'), /permission_error: Your API key does not have permission to use the specified resource\./],
      ['openai', oErr('unsupported_country_region_territory', 'request_forbidden', 'Country, region, or territory not supported'), /request_forbidden unsupported_country_region_territory: Country, region, or territory not supported/],
      ['openai-chat', oErr('model_not_found', 'invalid_request_error', 'Project `proj_x` does not have access to model `gpt-5`'), /invalid_request_error model_not_found: Project `proj_x` does not have access to model `gpt-5`/],
      [
        'gemini',
        gErr(403, 'PERMISSION_DENIED', 'Generative Language API has not been used in project 123 before or it is disabled.\nEnable it by visiting the console.', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'SERVICE_DISABLED', domain: 'googleapis.com' }]),
        /PERMISSION_DENIED SERVICE_DISABLED: Generative Language API has not been used in project 123 before or it is disabled\. Enable it/,
      ],
    ];
    for (const [vendor, forbidden, said] of cases) {
      const got = await agentRun(vendor, [forbidden, forbidden, forbidden]);
      expect(got.seen, vendor).toHaveLength(1);
      expect(got.retries, vendor).toEqual([]);
      expect(got.completed, vendor).toMatchObject({ stop_reason: 'error', error_kind: 'config' });
      expect(got.classification, vendor).toBe('harness_error');
      expect(got.thrown, vendor).toMatch(new RegExp(`^${vendor}: the API denied access \\(`));
      expect(got.thrown, vendor).toMatch(said);
      expect(got.thrown, vendor).not.toMatch(/key was refused|\n/);
      expect(got.completed.detail, vendor).toMatch(said);
    }
    const leaked = await agentRun('gemini', [gErr(403, 'PERMISSION_DENIED', 'Your API key was reported as leaked. Please use another API key.')]);
    expect(leaked.thrown).toMatch(/^gemini: the API key was refused \(.*reported as leaked/);
  });

  it('an account out of credit or quota (Anthropic 402 billing_error, OpenAI 429 insufficient_quota) is a config error that ends the sweep, never retried', async () => {
    const cases: Array<[Vendor, Reply]> = [
      ['anthropic', aErr(402, 'billing_error', {}, 'Your credit balance is too low to access the Anthropic API.')],
      ['openai', { status: 429, headers: { 'x-request-id': 'req_q' }, body: { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } } }],
    ];
    for (const [vendor, broke] of cases) {
      const got = await agentRun(vendor, [broke, broke, broke]);
      expect(got.seen, vendor).toHaveLength(1);
      expect(got.retries, vendor).toEqual([]);
      expect(got.completed, vendor).toMatchObject({ stop_reason: 'error', error_kind: 'config' });
      expect(got.thrown, vendor).toMatch(new RegExp(`^${vendor}: the account has no credit or quota left \\(`));
    }
  });

  it('the key in the environment never reaches a command in the sandbox (nor the stream its output is in)', async () => {
    const got = await agentRun('anthropic', [aMsg([bashUse('t1', 'env; tr "\\0" "\\n" < /proc/self/environ')], 'tool_use'), aMsg([{ type: 'text', text: 'Done.' }], 'end_turn')]);
    const result = got.events.find((e) => e.type === 'tool.result') as Record<string, unknown>;
    expect(result.output).toContain('HOME=');
  });

  it('streamed endings: a Responses response.incomplete, a Chat content_filter, a Gemini SAFETY chunk', async () => {
    const base = { id: 'resp_s', object: 'response', created_at: 1, model: 'gpt-5', status: 'in_progress', error: null, incomplete_details: null, output: [], usage: null };
    const fin = { ...base, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [rReasoning], usage: rUsage(100, 50, 20, 20) };
    const sse = (): Reply => ({
      sse: [
        ['response.created', { type: 'response.created', sequence_number: 0, response: base }],
        ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: rReasoning }],
        ['response.output_item.done', { type: 'response.output_item.done', sequence_number: 2, output_index: 0, item: rReasoning }],
        ['response.incomplete', { type: 'response.incomplete', sequence_number: 3, response: fin }],
      ],
    });
    const inc = await agentRun('openai', [sse(), sse()], { stream: true, task: { budgets: { max_turns: 2 } } });
    expect(inc.turns.map((t) => [t.stop, t.usage.input_tokens, t.usage.cache_read_tokens])).toEqual([['max_tokens', 50, 50], ['max_tokens', 50, 50]]);
    expect(inc.classification).toBe('budget_exhausted');

    const ch = (delta: object, finish_reason: string | null): [null, unknown] => [null, { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5', choices: [{ index: 0, delta, finish_reason }] }];
    const usageChunk: [null, unknown] = [null, { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5', choices: [], usage: { prompt_tokens: 100, completion_tokens: 0, total_tokens: 100, prompt_tokens_details: { cached_tokens: 40 } } }];
    const filtered = await agentRun('openai-chat', [{ sse: [ch({ role: 'assistant', content: '' }, null), ch({}, 'content_filter'), usageChunk, [null, '[DONE]']] }], { stream: true });
    expect(filtered.turns.map((t) => [t.stop, t.usage.input_tokens, t.usage.cache_read_tokens])).toEqual([['refusal', 60, 40]]);
    expect(filtered.classification).toBe('agent_refusal');

    const chunk = (c: object) => ({ ...c, modelVersion: 'gemini-2.5-flash', responseId: 'g1' });
    const safety = await agentRun(
      'gemini',
      [{ sse: [[null, chunk({ candidates: [{ content: { role: 'model', parts: [{ text: 'Sure' }] }, index: 0 }] })], [null, chunk({ candidates: [{ finishReason: 'SAFETY', index: 0 }], usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 1, totalTokenCount: 101 } })]] }],
      { stream: true },
    );
    expect(safety.completed).toMatchObject({ stop_reason: 'refusal', error_kind: 'refusal' });
    expect(safety.classification).toBe('agent_refusal');
  });

  it('gemini: a bad key (400 API_KEY_INVALID) is a refused key, as a 401 is for the others: one request, a usage error', async () => {
    const got = await agentRun('gemini', [
      gErr(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }]),
      gResp([{ text: 'Done.' }], 'STOP'),
    ]);
    expect(got.seen).toHaveLength(1);
    expect(got.completed).toMatchObject({ stop_reason: 'error', error_kind: 'config' });
    expect(got.thrown).toMatch(/^gemini: the API key was refused/);
    // A 400 that is not about the key stays an ordinary config error.
    const other = await agentRun('gemini', [gErr(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.'), gResp([{ text: 'Done.' }], 'STOP')]);
    expect(other.thrown).toBe('');
    expect(other.completed).toMatchObject({ stop_reason: 'error', error_kind: 'config' });
  });

  it('openai: a 429 insufficient_quota (no credit) is not retried: waiting does not add credit', async () => {
    const q: Reply = { status: 429, body: { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } } };
    for (const vendor of ['openai', 'openai-chat'] as const) {
      const got = await agentRun(vendor, [q, q, q]);
      expect(got.seen, vendor).toHaveLength(1);
      expect(got.retries, vendor).toEqual([]);
      expect(got.completed, vendor).toMatchObject({ stop_reason: 'error', error_kind: 'config' });
      expect(got.classification, vendor).not.toBe('docs_gap');
    }
  });
});

describe('the binary, with the SDKs asked to log (ANTHROPIC_LOG, OPENAI_LOG)', () => {
  it('keeps their lines off stdout, the event stream, and the key out of both', async () => {
    const done: Record<Vendor, Reply> = {
      anthropic: aMsg([{ type: 'text', text: 'Done.' }], 'end_turn'),
      openai: rResp([rText('Done.')], rUsage(1, 0, 1, 0)),
      'openai-chat': cResp({ content: 'Done.' }, 'stop'),
      gemini: gResp([{ text: 'Done.' }], 'STOP'),
    };
    for (const vendor of ['anthropic', 'openai', 'openai-chat'] as const) {
      const mock = await vendorMock([done[vendor]], closeLater);
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', ANTHROPIC_LOG: 'debug', OPENAI_LOG: 'debug', ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: KEY };
      const base = vendor === 'anthropic' ? mock.url : `${mock.url}/v1`;
      const child = spawn(process.execPath, [QS_AGENT, '--agent', vendor, '--model', MODEL[vendor], '--base-url', base, '--backend', 'local', '--allow-unenforced', '--no-stream'], { env });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      child.stdin.end(ndjson([taskLoaded('b1', { script: 'true' })]));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      sandboxesOf(parseOut(out));
      expect(code, `${vendor}: ${err}`).toBe(0);
      expect(out.split('\n').filter((l) => l !== '' && !l.startsWith('{')), vendor).toEqual([]);
      expect(parseOut(out).find((e) => e.type === 'agent.completed'), vendor).toMatchObject({ stop_reason: 'completed' });
      // The SDK did log (to stderr), with its request's path.
      expect(err, vendor).toMatch(/sdk debug: .*sending request/);
      expect(out + err, vendor).not.toContain(KEY);
    }
  });
});

describe('a gateway key in the --base-url query', () => {
  const gatewayKey = 'gw/Ke+y~ 9\u00e4Z-7f3a';
  const pct = encodeURIComponent(gatewayKey);
  /** Every way a log line, an error, an event or a URL may write the key. */
  const forms = [gatewayKey, pct, pct.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()), encodeURI(gatewayKey), new URLSearchParams({ k: gatewayKey }).toString().slice(2), encodeURIComponent(pct), pct.replace(/%20/g, '+')];

  it('is sent on every request and never shown: not in SDK log lines, retry notices, events, the usage error or stderr', async () => {
    for (const vendor of ['anthropic', 'openai', 'openai-chat', 'gemini'] as const) {
      const echo = `the gateway saw ${forms.join(' and ')}`;
      const replies: Record<Vendor, Reply[]> = {
        anthropic: [aErr(503, 'api_error', { 'retry-after': '0' }, echo), aErr(403, 'permission_error', {}, echo)],
        openai: [{ status: 503, headers: { 'retry-after': '0' }, body: { error: { message: echo, type: 'server_error', param: null, code: null } } }, { status: 403, body: { error: { message: echo, type: 'request_forbidden', param: null, code: null } } }],
        'openai-chat': [{ status: 503, headers: { 'retry-after': '0' }, body: { error: { message: echo, type: 'server_error', param: null, code: null } } }, { status: 403, body: { error: { message: echo, type: 'request_forbidden', param: null, code: null } } }],
        gemini: [gErr(503, 'UNAVAILABLE', echo, [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0s' }]), gErr(403, 'PERMISSION_DENIED', echo)],
      };
      const mock = await vendorMock(replies[vendor], closeLater);
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', ANTHROPIC_LOG: 'debug', OPENAI_LOG: 'debug', ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: KEY, GEMINI_API_KEY: KEY };
      const base = `${vendor === 'anthropic' || vendor === 'gemini' ? mock.url : `${mock.url}/v1`}?key=${pct}&region=eu&region=us`;
      const child = spawn(process.execPath, [QS_AGENT, '--agent', vendor, '--model', MODEL[vendor], '--base-url', base, '--backend', 'local', '--allow-unenforced', '--no-stream'], { env });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      child.stdin.end(ndjson([taskLoaded('g1', { script: 'true' })]));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      const events = parseOut(out);
      sandboxesOf(events);
      // Both requests went to the API's own path, the gateway's query on each, the key as it was given.
      expect(mock.seen.map((r) => new URL(r.path, 'http://x').pathname), vendor).toEqual(Array(2).fill(vendor === 'anthropic' ? '/v1/messages' : vendor === 'gemini' ? `/v1beta/models/${MODEL[vendor]}:generateContent` : vendor === 'openai' ? '/v1/responses' : '/v1/chat/completions'));
      // A name given twice reaches the gateway with both its values.
      for (const r of mock.seen) expect([new URL(r.path, 'http://x').searchParams.getAll('key'), new URL(r.path, 'http://x').searchParams.getAll('region')], vendor).toEqual([[gatewayKey], ['eu', 'us']]);
      expect(code, `${vendor}: ${err}`).toBe(3);
      expect(events.filter((e) => e.type === 'agent.retry'), vendor).toHaveLength(1);
      expect(events.find((e) => e.type === 'agent.completed'), vendor).toMatchObject({ stop_reason: 'error', error_kind: 'config', detail: expect.stringContaining('[redacted]') });
      expect(events.find((e) => e.type === 'agent.started')?.base_url, vendor).toBe(base.split('?')[0]);
      if (vendor !== 'gemini') expect(err, vendor).toMatch(/sdk debug: .*sending request/);
      expect(err.trim().split('\n').at(-1), vendor).toMatch(new RegExp(`^qs-agent: ${vendor}: the API denied access \\(.*\\[redacted\\]`));
      for (const form of [...forms, KEY]) expect(out + err, `${vendor}: ${form}`).not.toContain(form);
      expect(out + err, vendor).not.toMatch(/[?&]key=(?!\[redacted\])/);
    }
  });
});

describe('an empty answer (cut at max tokens before a word, a paused turn with nothing yet) is not sent back as an empty message', () => {
  // Every vendor refuses a request with an empty assistant message in it (400): the run would end there.
  const emptyMessages = (body: any, vendor: Vendor): unknown[] => {
    if (vendor === 'anthropic') return body.messages.filter((m: any) => m.role === 'assistant' && (m.content === '' || (Array.isArray(m.content) && m.content.length === 0)));
    if (vendor === 'gemini') return body.contents.filter((c: any) => !c.parts || c.parts.length === 0);
    if (vendor === 'openai-chat') return body.messages.filter((m: any) => m.role === 'assistant' && (m.content === null || m.content === '') && !m.tool_calls?.length);
    // The Responses API's counterpart: a reasoning item with no message or function call after it (400).
    return body.input.filter((item: any, i: number) => item.type === 'reasoning' && !['message', 'function_call'].includes(body.input[i + 1]?.type));
  };
  const cases: Array<[Vendor, Reply, Reply]> = [
    ['anthropic', aMsg([], 'max_tokens'), aMsg([{ type: 'text', text: 'Done.' }], 'end_turn')],
    ['anthropic', aMsg([], 'pause_turn'), aMsg([{ type: 'text', text: 'Done.' }], 'end_turn')],
    ['gemini', { body: { candidates: [{ finishReason: 'MAX_TOKENS', index: 0 }], usageMetadata: { promptTokenCount: 10, thoughtsTokenCount: 100, totalTokenCount: 110 } } }, gResp([{ text: 'Done.' }], 'STOP')],
    ['openai-chat', cResp({ content: '' }, 'length'), cResp({ content: 'Done.' }, 'stop')],
    ['openai', rResp([rReasoning], rUsage(10, 0, 100, 100), { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }), rResp([rText('Done.')], rUsage(10, 0, 2, 0))],
  ];
  for (const [vendor, empty, done] of cases) {
    it(`${vendor}: ${JSON.stringify((empty.body as any).stop_reason ?? 'cut')}`, async () => {
      const got = await agentRun(vendor, [empty, done]);
      expect(got.seen).toHaveLength(2);
      expect(emptyMessages(got.seen[1]?.body, vendor)).toEqual([]);
      expect(got.completed).toMatchObject({ stop_reason: 'completed', turns: 2 });
    });
  }
});
