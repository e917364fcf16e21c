// What a model call's failed attempts were billed (a stream that reported its usage, then failed, was
// cut, or was aborted) counts toward the run's usage and cost and toward the sweep's --max-spend, and
// a retry is a call like any other: the ledger reserves it before it starts. Real SDK, the testkit
// mock, a real spend ledger on a Unix socket.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryIo } from '@quickloop/cli-kit';
import { DEFAULT_PRICE_BOOK, usdFor, type Usage } from '@quickloop/models/core';
import { removeLayout } from '@quickloop/sandbox';
import { startMockServer, type MockServer, type MockStep } from '@quickloop/testkit';
import { run } from './run.js';
import { serveSpendLedger, startSpendLedger, type SpendLedger } from './spend.js';
import { localAgentOptions, ndjson, parseOut, taskLoaded, type TaskSpec } from './testing/task-event.js';

const QS_CHECK = fileURLToPath(new URL('../../qs-check/bin/qs-check.js', import.meta.url));
const KEY = 'sk-billed-attempts-KEY-8e7d6c5b4a';
const MODEL = 'claude-sonnet-4-6';
const made: string[] = [];
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const root of made.splice(0)) removeLayout({ root });
  for (const c of closers.splice(0)) await c();
});

const frame = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const start = (usage: object) => frame('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage } });
/** An answer's stream that reports 2000 input tokens and 300 cache reads, then 40 output tokens, then the vendor's overload. */
const BILLED_FRAMES = [
  start({ input_tokens: 2000, cache_read_input_tokens: 300, cache_creation_input_tokens: 0, output_tokens: 1 }),
  frame('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  frame('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'I will' } }),
  frame('message_delta', { delta: { stop_reason: null, stop_sequence: null }, usage: { output_tokens: 40 } }),
];
const BILLED_THEN_OVERLOADED: MockStep = { raw: { body: [...BILLED_FRAMES, frame('error', { error: { type: 'overloaded_error', message: 'Overloaded' } })] } };
const BILLED: Usage = { input: 2000, cache_read: 300, cache_write: 0, output: 40, reasoning: 0 };
const DONE: MockStep = { text: 'Done.', usage: { input: 100, output: 10 } };
const DONE_USAGE: Usage = { input: 100, cache_read: 0, cache_write: 0, output: 10, reasoning: 0 };
const times = (u: Usage, n: number): Usage => ({ input: u.input * n, cache_read: u.cache_read * n, cache_write: u.cache_write * n, output: u.output * n, reasoning: u.reasoning * n });
const plus = (a: Usage, b: Usage): Usage => ({ input: a.input + b.input, cache_read: a.cache_read + b.cache_read, cache_write: a.cache_write + b.cache_write, output: a.output + b.output, reasoning: a.reasoning + b.reasoning });
const tokens = (u: Usage) => ({ input_tokens: u.input, cache_read_tokens: u.cache_read, cache_write_tokens: u.cache_write, output_tokens: u.output, reasoning_tokens: u.reasoning });
const usd = (u: Usage) => usdFor(DEFAULT_PRICE_BOOK, MODEL, u) as number;
const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

async function agentRun(script: MockStep[], o: { spec?: TaskSpec; spendLedger?: string } = {}) {
  const mock: MockServer = await startMockServer({ script, whenEmpty: 'error' });
  closers.push(() => mock.close());
  const io = memoryIo({ stdin: ndjson([taskLoaded('b1', { script: 'false', ...o.spec })]), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url } });
  const code = await run(localAgentOptions('anthropic', { model: MODEL, stream: true, ...(o.spendLedger !== undefined ? { spendLedger: o.spendLedger } : {}) }), io);
  const events = parseOut(io.out());
  for (const e of events) if (e.type === 'sandbox.ready') made.push(String(e.root));
  expect(io.out() + io.err()).not.toContain(KEY);
  const checked = parseOut(spawnSync(process.execPath, [QS_CHECK, '-q'], { input: io.out(), encoding: 'utf8' }).stdout).find((e) => e.type === 'run.completed');
  return { code, events, mock, completed: events.find((e) => e.type === 'agent.completed') as Record<string, any>, turns: events.filter((e) => e.type === 'agent.turn') as Array<Record<string, any>>, classification: checked?.classification };
}

async function ledger(cap: number): Promise<SpendLedger> {
  const dir = mkdtempSync(join(tmpdir(), 'qs-billed-'));
  const l = await startSpendLedger(join(dir, 'ledger.sock'), cap);
  closers.push(async () => {
    await l.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return l;
}

describe('what failed attempts were billed', () => {
  it("a turn retried after a stream that reported usage and failed: the turn's usage and cost count both attempts, and the run's", async () => {
    const { turns, completed } = await agentRun([BILLED_THEN_OVERLOADED, DONE]);
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({ attempts: 2, usage: tokens(plus(BILLED, DONE_USAGE)), usd: usd(plus(BILLED, DONE_USAGE)) });
    expect(completed).toMatchObject({ stop_reason: 'completed', usage: tokens(plus(BILLED, DONE_USAGE)), usd: usd(plus(BILLED, DONE_USAGE)) });
  });

  it('a turn whose every attempt failed after reporting usage: the run costs what they were billed (not 0), and is an infra error', async () => {
    const { completed, classification } = await agentRun([BILLED_THEN_OVERLOADED, BILLED_THEN_OVERLOADED, BILLED_THEN_OVERLOADED]);
    expect(completed).toMatchObject({ stop_reason: 'error', error_kind: 'infra', turns: 0, usage: tokens(times(BILLED, 3)), usd: usd(times(BILLED, 3)) });
    expect(classification).toBe('infra_error');
  });

  it('a stream cut at the deadline after it reported usage: the run is a timeout that costs what the stream said', async () => {
    const { completed, classification } = await agentRun([{ raw: { body: BILLED_FRAMES, open: true } }], { spec: { budgets: { max_seconds: 1 } } });
    expect(completed).toMatchObject({ stop_reason: 'timeout', turns: 0, usage: tokens(BILLED), usd: usd(BILLED) });
    expect(classification).toBe('budget_exhausted');
  });
});

describe('under a spend ledger', () => {
  it('a retry is reserved before it is sent: a cap with room for one call stops the run rather than retry unreserved', async () => {
    const l = await ledger(0.4);
    const { completed, mock, classification } = await agentRun([BILLED_THEN_OVERLOADED, DONE], { spendLedger: l.path });
    expect(mock.requestsFor('anthropic')).toHaveLength(1);
    expect(completed).toMatchObject({ stop_reason: 'spend_cap', usage: tokens(BILLED), usd: usd(BILLED) });
    expect(classification).toBe('budget_exhausted');
    const s = l.state();
    expect([s.granted, s.refused, s.reserved]).toEqual([1, 1, 0]);
    // The failed attempt keeps its estimate: what its stream said is no more than it could have cost.
    expect(s.spent).toBeGreaterThan(usd(BILLED));
  });

  it('with room for both, the retry is reserved and settled: the ledger holds the failed attempt at its estimate and the answer at its cost', async () => {
    const l = await ledger(10);
    const { turns, mock } = await agentRun([BILLED_THEN_OVERLOADED, DONE], { spendLedger: l.path });
    expect(mock.requestsFor('anthropic')).toHaveLength(2);
    const s = l.state();
    expect([s.granted, s.refused, s.reserved]).toEqual([2, 0, 0]);
    const estimate = (turns[0]?.reserved_usd as number) / 2;
    expect(turns[0]).toMatchObject({ attempts: 2, reserved_usd: expect.any(Number) });
    expect(s.spent).toBe(round6(estimate + usd(DONE_USAGE)));
  });
});

describe('a ledger that fails when a retry asks it', () => {
  it('ends the run as a harness error before the retry is sent, not as a spend cap', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qs-billed-'));
    let asked = 0;
    const settled: number[] = [];
    const server = await serveSpendLedger(join(dir, 'ledger.sock'), {
      reserve: () => {
        asked += 1;
        if (asked > 1) throw new Error('the store is gone');
        return { granted: true, id: asked };
      },
      settle: (_id, usd) => void settled.push(usd),
    });
    closers.push(async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const { completed, mock, classification } = await agentRun([BILLED_THEN_OVERLOADED, DONE], { spendLedger: server.path });
    expect(mock.requestsFor('anthropic')).toHaveLength(1);
    expect(completed).toMatchObject({ stop_reason: 'error', error_kind: 'harness', detail: expect.stringMatching(/spend ledger failed before attempt 2 of turn 1/), usage: tokens(BILLED) });
    expect(classification).toBe('harness_error');
    // The failed attempt was settled before the retry was asked for.
    expect(settled).toHaveLength(1);
  });
});

describe('an answer that reports no usage at all', () => {
  it('is settled at its reservation, not at $0: a cap is kept against a server that never says what it billed', async () => {
    const l = await ledger(10);
    const data = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
    // A Chat stream without the usage chunk it was asked for (stream_options.include_usage).
    const silent: MockStep = { raw: { body: [data({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5', choices: [{ index: 0, delta: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }] }), 'data: [DONE]\n\n'] } };
    const mock: MockServer = await startMockServer({ script: [silent], whenEmpty: 'error' });
    closers.push(() => mock.close());
    const io = memoryIo({ stdin: ndjson([taskLoaded('u1', { script: 'false' })]), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', OPENAI_API_KEY: KEY, OPENAI_BASE_URL: mock.openaiUrl } });
    await run(localAgentOptions('openai-chat', { model: 'gpt-5', stream: true, spendLedger: l.path }), io);
    const events = parseOut(io.out());
    for (const e of events) if (e.type === 'sandbox.ready') made.push(String(e.root));
    const turn = events.find((e) => e.type === 'agent.turn') as Record<string, any>;
    expect(turn.usage).toEqual(tokens({ input: 0, cache_read: 0, cache_write: 0, output: 0, reasoning: 0 }));
    expect(l.state()).toMatchObject({ granted: 1, reserved: 0, spent: turn.reserved_usd });
    expect(turn.reserved_usd).toBeGreaterThan(0);
  });
});
