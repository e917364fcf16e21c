// The real qs-agent binary, through --base-url, against a mock written from the vendors' published
// formats (raw JSON bodies and SSE frames), then qs-check: every run must land in the class its cause
// deserves, retries must be bounded and only for what is transient, usage and cost must add up, and
// the key must appear nowhere.
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICE_BOOK, usdFor } from '@quickloop/models/core';
import { ndjson, parseOut, taskLoaded, type TaskSpec } from './testing/task-event.js';
import { cleanedAfterEach, QS_CHECK, type Vendor } from './testing/vendors.js';

const QS_AGENT = fileURLToPath(new URL('../bin/qs-agent.js', import.meta.url));
const SITE = fileURLToPath(new URL('../../../fixtures/docs-site', import.meta.url));
const KEY = 'sk-docs-agent-KEY-91c2d3e4f5';
const { sandboxesOf, closeLater } = cleanedAfterEach();

interface Reply {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  /** Raw SSE frames, written as they are. */
  sse?: string[];
}

async function mock(replies: Reply[]) {
  const seen: any[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      seen.push(raw ? JSON.parse(raw) : undefined);
      const r = replies.shift() ?? { status: 400, json: { error: { message: 'the mock has no more replies' } } };
      if (r.sse) {
        res.writeHead(r.status ?? 200, { 'content-type': 'text/event-stream', ...r.headers });
        for (const f of r.sse) res.write(f);
        res.end();
        return;
      }
      res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers });
      res.end(JSON.stringify(r.json ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeLater(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const MODEL: Record<Vendor, string> = { anthropic: 'claude-sonnet-4-6', openai: 'gpt-5', 'openai-chat': 'gpt-5', gemini: 'gemini-2.5-flash' };

/** qs-agent (the bin) with `--base-url` at the mock, then qs-check on its output. */
async function agent(vendor: Vendor, replies: Reply[], opts: { stream?: boolean; task?: TaskSpec } = {}) {
  const m = await mock(replies);
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: KEY, GEMINI_API_KEY: KEY };
  const base = vendor === 'openai' || vendor === 'openai-chat' ? `${m.url}/v1` : m.url;
  const argv = [QS_AGENT, '--agent', vendor, '--model', MODEL[vendor], '--base-url', base, '--backend', 'local', '--allow-unenforced', '--rate-limit', '0', '--docs-map', `https://docs.greeter.test/=${SITE}`, ...(opts.stream ? [] : ['--no-stream'])];
  const child = spawn(process.execPath, argv, { env });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  child.stdin.end(ndjson([taskLoaded('d1', { script: 'false', ...opts.task })]));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const events = parseOut(out);
  sandboxesOf(events);
  const check = spawnSync(process.execPath, [QS_CHECK, '-q'], { input: out, encoding: 'utf8' });
  expect(out + err + check.stdout + check.stderr).not.toContain(KEY);
  const of = (type: string) => events.filter((e) => e.type === type) as Array<Record<string, any>>;
  return {
    code,
    err,
    seen: m.seen,
    completed: of('agent.completed')[0] as Record<string, any>,
    turns: of('agent.turn'),
    retries: of('agent.retry'),
    calls: of('tool.call'),
    results: of('tool.result'),
    toolErrors: of('tool.error'),
    classification: (parseOut(check.stdout).find((e) => e.type === 'run.completed') as Record<string, unknown> | undefined)?.classification,
  };
}

// Anthropic Messages, as documented: named SSE events, a message body.
const aEvent = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const aMessage = (content: unknown[], stop_reason: string, usage: object = { input_tokens: 10, output_tokens: 5 }) => ({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content, stop_reason, stop_sequence: null, usage });

describe('qs-agent against the published formats', () => {
  it('anthropic: a bash call cut off at max_tokens mid-input is never run; the model is told and the run goes on', async () => {
    const got = await agent(
      'anthropic',
      [
        {
          sse: [
            aEvent('message_start', { message: aMessage([], null as unknown as string, { input_tokens: 100, output_tokens: 1 }) }),
            aEvent('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_cut', name: 'bash', input: {} } }),
            aEvent('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"command": "echo RAN-THE-HALF-COMMAND; rm -rf bu' } }),
            aEvent('content_block_stop', { index: 0 }),
            aEvent('message_delta', { delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 256 } }),
            aEvent('message_stop', {}),
          ],
        },
        {
          sse: [
            aEvent('message_start', { message: aMessage([], null as unknown as string) }),
            aEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
            aEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Stopping here.' } }),
            aEvent('content_block_stop', { index: 0 }),
            aEvent('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 4 } }),
            aEvent('message_stop', {}),
          ],
        },
      ],
      { stream: true },
    );
    expect(got.results).toEqual([]);
    expect(got.toolErrors).toHaveLength(1);
    expect(got.toolErrors[0]!.error).toMatch(/cut off at the output limit/);
    expect(JSON.stringify(got.calls)).not.toContain('RAN-THE-HALF-COMMAND');
    // The model got its call answered as an error, by id.
    const answer = got.seen[1].messages.at(-1).content[0];
    expect(answer).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_cut', is_error: true });
    expect(got.completed).toMatchObject({ stop_reason: 'completed', turns: 2 });
  });

  it('anthropic: a 400 "input length and max_tokens exceed context limit" is a context overflow (budget_exhausted), not a refused config', async () => {
    const got = await agent('anthropic', [{ status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message: 'input length and `max_tokens` exceed context limit: 190000 + 16384 > 200000, decrease input length or `max_tokens` and try again' } } }]);
    expect(got.code).toBe(0);
    expect(got.seen).toHaveLength(1);
    expect(got.completed).toMatchObject({ stop_reason: 'context_overflow', error_kind: 'context_overflow' });
    expect(got.classification).toBe('budget_exhausted');
  });

  it('a 200 stream that ends before its first event is retried, boundedly, and ends as infra_error', async () => {
    for (const vendor of ['anthropic', 'openai', 'openai-chat', 'gemini'] as const) {
      const got = await agent(vendor, [{ sse: [] }, { sse: [] }, { sse: [] }], { stream: true });
      expect(got.seen, vendor).toHaveLength(3);
      expect(got.retries, vendor).toHaveLength(2);
      expect(got.completed, vendor).toMatchObject({ stop_reason: 'error', error_kind: 'infra' });
      expect(got.classification, vendor).toBe('infra_error');
    }
  });

  it('openai-chat: finish_reason tool_calls with no tool call in the message is no finished run (never a docs gap)', async () => {
    const got = await agent('openai-chat', [{ json: { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-5', choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 } } }]);
    expect(got.completed.stop_reason).not.toBe('completed');
    expect(got.classification).not.toBe('docs_gap');
    expect(got.classification).toBe('harness_error');
  });

  it('openai: a token budget whose remainder is under the 16 output tokens the Responses API takes at least ends as token_budget, not a 400', async () => {
    const below16 = { status: 400, json: { error: { message: "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 11 instead.", type: 'invalid_request_error', param: 'max_output_tokens', code: 'integer_below_min_value' } } };
    const call = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'bash', arguments: '{"command":"true"}', status: 'completed' };
    const first = { json: { id: 'resp_1', object: 'response', status: 'completed', model: 'gpt-5', output: [call], usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 } } };
    const got = await agent('openai', [first, below16], { task: { budgets: { max_tokens: 45 } } });
    for (const body of got.seen) expect(body.max_output_tokens).toBeGreaterThanOrEqual(16);
    expect(got.completed).toMatchObject({ stop_reason: 'token_budget' });
    expect(got.classification).toBe('budget_exhausted');
  });

  it('anthropic: cache writes and reads, summed over the turns and priced by the served model', async () => {
    const u1 = { input_tokens: 20, cache_creation_input_tokens: 3000, cache_read_input_tokens: 0, output_tokens: 40 };
    const u2 = { input_tokens: 30, cache_creation_input_tokens: 200, cache_read_input_tokens: 3000, output_tokens: 25 };
    const got = await agent('anthropic', [
      { json: { ...aMessage([{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'echo hi' } }, { type: 'tool_use', id: 'toolu_2', name: 'bash', input: { command: 'true' } }], 'tool_use', u1), model: 'claude-sonnet-4-6-20260101' } },
      { json: aMessage([{ type: 'text', text: 'Done.' }], 'end_turn', u2) },
    ]);
    expect(got.results.map((r) => r.exit_code)).toEqual([0, 0]);
    expect(got.completed.usage).toMatchObject({ input_tokens: 50, cache_write_tokens: 3200, cache_read_tokens: 3000, output_tokens: 65 });
    const usd = (u: typeof u1) => usdFor(DEFAULT_PRICE_BOOK, 'claude-sonnet-4-6', { input: u.input_tokens, cache_read: u.cache_read_input_tokens, cache_write: u.cache_creation_input_tokens, output: u.output_tokens, reasoning: 0 })!;
    expect(got.turns.map((t) => t.usd)).toEqual([usd(u1), usd(u2)]);
    expect(got.completed.usd).toBeCloseTo(usd(u1) + usd(u2), 6);
    // The check (false) failed, but the agent read no page of the docs: no evidence about them.
    expect(got.classification).toBe('harness_error');
  });
  it('every vendor: an attempt whose stream reported usage, then failed, is retried and its usage counted in the turn and the run', async () => {
    const data = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
    const rResp = (extra: object) => ({ id: 'resp_1', object: 'response', created_at: 1, model: 'gpt-5', output: [], error: null, incomplete_details: null, ...extra });
    const billed: Record<Vendor, string[]> = {
      anthropic: [aEvent('message_start', { message: aMessage([], null as unknown as string, { input_tokens: 3000, cache_read_input_tokens: 500, output_tokens: 1 }) }), aEvent('message_delta', { delta: { stop_reason: null, stop_sequence: null }, usage: { output_tokens: 60 } }), aEvent('error', { error: { type: 'overloaded_error', message: 'Overloaded' } })],
      openai: [
        `event: response.created\n${data({ type: 'response.created', sequence_number: 0, response: rResp({ status: 'in_progress', usage: null }) })}`,
        `event: response.failed\n${data({ type: 'response.failed', sequence_number: 1, response: rResp({ status: 'failed', error: { code: 'server_error', message: 'The server had an error.' }, usage: { input_tokens: 3500, input_tokens_details: { cached_tokens: 500 }, output_tokens: 60, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 3560 } }) })}`,
      ],
      'openai-chat': [data({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5', choices: [], usage: { prompt_tokens: 3500, completion_tokens: 60, total_tokens: 3560, prompt_tokens_details: { cached_tokens: 500 } } }), data({ error: { message: 'The server is overloaded', type: 'server_error', param: null, code: null } })],
      gemini: [data({ candidates: [{ content: { role: 'model', parts: [{ text: 'I' }] }, index: 0 }], usageMetadata: { promptTokenCount: 3500, cachedContentTokenCount: 500, candidatesTokenCount: 60, totalTokenCount: 3560 } }), data({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } })],
    };
    const done: Record<Vendor, string[]> = {
      anthropic: [aEvent('message_start', { message: aMessage([], null as unknown as string, { input_tokens: 100, output_tokens: 1 }) }), aEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }), aEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Done.' } }), aEvent('content_block_stop', { index: 0 }), aEvent('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 10 } }), aEvent('message_stop', {})],
      openai: [`event: response.completed\n${data({ type: 'response.completed', sequence_number: 0, response: rResp({ status: 'completed', output: [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] }], usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 110 } }) })}`],
      'openai-chat': [data({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5', choices: [{ index: 0, delta: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }] }), data({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5', choices: [], usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } }), 'data: [DONE]\n\n'],
      gemini: [data({ candidates: [{ content: { role: 'model', parts: [{ text: 'Done.' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 } })],
    };
    const both = { input: 3100, cache_read: 500, cache_write: 0, output: 70, reasoning: 0 };
    for (const vendor of ['anthropic', 'openai', 'openai-chat', 'gemini'] as const) {
      const got = await agent(vendor, [{ sse: billed[vendor] }, { sse: done[vendor] }], { stream: true });
      expect(got.seen, vendor).toHaveLength(2);
      expect(got.retries, vendor).toHaveLength(1);
      const tokens = { input_tokens: both.input, cache_read_tokens: both.cache_read, cache_write_tokens: 0, output_tokens: both.output, reasoning_tokens: 0 };
      expect(got.turns[0], vendor).toMatchObject({ attempts: 2, usage: tokens, usd: usdFor(DEFAULT_PRICE_BOOK, MODEL[vendor], both) });
      expect(got.completed, vendor).toMatchObject({ stop_reason: 'completed', usage: tokens, usd: usdFor(DEFAULT_PRICE_BOOK, MODEL[vendor], both) });
    }
  });
  it('every vendor, the binary itself (one bundle of every SDK): a refused connection is transient infra, retried, and ends as infra_error', async () => {
    // A port nothing listens on: bound, then closed.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const p = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(p));
      });
    });
    for (const vendor of ['anthropic', 'openai', 'openai-chat', 'gemini'] as const) {
      const base = vendor === 'openai' || vendor === 'openai-chat' ? `http://127.0.0.1:${port}/v1` : `http://127.0.0.1:${port}`;
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: KEY, GEMINI_API_KEY: KEY };
      const r = spawnSync(process.execPath, [QS_AGENT, '--agent', vendor, '--model', MODEL[vendor], '--base-url', base, '--backend', 'local', '--allow-unenforced', '--rate-limit', '0'], { env, input: ndjson([taskLoaded('c1', { script: 'false' })]), encoding: 'utf8' });
      const events = parseOut(r.stdout);
      sandboxesOf(events);
      expect(r.stdout + r.stderr).not.toContain(KEY);
      expect(events.filter((e) => e.type === 'agent.retry'), `${vendor}: ${r.stderr}`).toHaveLength(2);
      expect(events.find((e) => e.type === 'agent.completed'), vendor).toMatchObject({ stop_reason: 'error', error_kind: 'infra' });
    }
  });
  it('every vendor: tool calls with no id, a name that is no string, an input that is a list: every event stays valid, so qs-check reads the run, and the model is told', async () => {
    const odd: Record<Vendor, Reply> = {
      anthropic: { json: aMessage([{ type: 'tool_use', id: null, name: 7, input: [1] }, { type: 'tool_use', id: '', name: 'bash', input: { command: 'true' } }], 'tool_use') },
      openai: { json: { id: 'r1', object: 'response', status: 'completed', model: 'gpt-5', output: [{ type: 'function_call', id: 'fc_1', call_id: null, name: 7, arguments: '[1]', status: 'completed' }, { type: 'function_call', id: 'fc_2', call_id: '', name: 'bash', arguments: '{"command":"true"}', status: 'completed' }], usage: { input_tokens: 10, output_tokens: 5 } } },
      'openai-chat': { json: { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-5', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: null, type: 'function', function: { name: 7, arguments: '[1]' } }, { id: '', type: 'function', function: { name: 'bash', arguments: '{"command":"true"}' } }] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } } },
      gemini: { json: { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 7, args: [1] } }, { functionCall: { id: '', name: 'bash', args: { command: 'true' } } }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 } } },
    };
    const done: Record<Vendor, Reply> = {
      anthropic: { json: aMessage([{ type: 'text', text: 'Done.' }], 'end_turn') },
      openai: { json: { id: 'r2', object: 'response', status: 'completed', model: 'gpt-5', output: [{ type: 'message', id: 'm', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] }], usage: { input_tokens: 10, output_tokens: 5 } } },
      'openai-chat': { json: { id: 'c2', object: 'chat.completion', created: 1, model: 'gpt-5', choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } } },
      gemini: { json: { candidates: [{ content: { role: 'model', parts: [{ text: 'Done.' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 } } },
    };
    for (const vendor of ['anthropic', 'openai', 'openai-chat', 'gemini'] as const) {
      const got = await agent(vendor, [odd[vendor], done[vendor]]);
      // What matters is that there is a verdict: the check (false) failed after an agent that read no
      // page of the docs, so it is no evidence about them.
      expect(got.classification, `${vendor}: ${got.err}`).toBe('harness_error');
      expect(got.toolErrors.map((e) => e.tool), vendor).toEqual(['7']);
      expect(got.results.map((r) => r.exit_code), vendor).toEqual([0]);
      expect(got.completed, vendor).toMatchObject({ stop_reason: 'completed', turns: 2 });
      const ids = got.turns[0]!.blocks.map((b: { id: string }) => b.id);
      expect(ids.every((id: unknown) => typeof id === 'string' && id !== ''), `${vendor}: ${ids}`).toBe(true);
    }
  });
});
