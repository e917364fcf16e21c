// The model agent's loop through the real SDKs against the testkit mock, in a local sandbox (the
// sandbox is not under test here: model-e2e.test.ts runs every vendor in the enforced one).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryIo } from '@quickloop/cli-kit';
import { removeLayout } from '@quickloop/sandbox';
import { startMockServer, type MockServer, type MockStep } from '@quickloop/testkit';
import { parsePriceBook, type Message, type ModelAdapter, type TurnRequest, type TurnResult } from '@quickloop/models/core';
import { createModelAgent, type AfterToolInfo } from './agents/model.js';
import { redactor, resolveVendor } from './agents/credentials.js';
import { run } from './run.js';
import { localAgentOptions, ndjson, parseOut, taskLoaded, type TaskSpec } from './testing/task-event.js';

const QS_CHECK = fileURLToPath(new URL('../../qs-check/bin/qs-check.js', import.meta.url));
const KEY = 'sk-test-SECRET-4f9a1c77e2';
const made: string[] = [];
const mocks: MockServer[] = [];
const temps: string[] = [];

afterEach(async () => {
  for (const root of made.splice(0)) removeLayout({ root });
  for (const m of mocks.splice(0)) await m.close();
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true });
});

type Vendor = 'anthropic' | 'openai' | 'openai-chat' | 'gemini';
const VENDORS: Vendor[] = ['anthropic', 'openai', 'openai-chat', 'gemini'];

function envFor(vendor: Vendor, mock: MockServer, key = KEY): Record<string, string> {
  if (vendor === 'anthropic') return { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: mock.url };
  if (vendor === 'gemini') return { GEMINI_API_KEY: key, GOOGLE_GEMINI_BASE_URL: mock.url };
  return { OPENAI_API_KEY: key, OPENAI_BASE_URL: mock.openaiUrl };
}

interface Go {
  vendor?: Vendor;
  script: MockStep[];
  spec?: TaskSpec;
  model?: string;
  stream?: boolean;
  prices?: { text: string; file: string };
}

async function modelRun(go: Go) {
  const vendor = go.vendor ?? 'anthropic';
  const mock = await startMockServer({ script: go.script, whenEmpty: 'error' });
  mocks.push(mock);
  const io = memoryIo({ stdin: ndjson([taskLoaded('r1', { script: 'false', ...go.spec })]), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', ...envFor(vendor, mock) } });
  const opts = localAgentOptions(vendor, { model: go.model ?? 'claude-sonnet-4-6', stream: go.stream ?? true, ...(go.prices ? { prices: go.prices } : {}) });
  let code: number;
  let thrown: Error | undefined;
  try {
    code = await run(opts, io);
  } catch (error) {
    thrown = error as Error;
    code = -1;
  }
  const events = parseOut(io.out());
  for (const e of events) if (e.type === 'sandbox.ready') made.push(String(e.root));
  return { code, thrown, events, out: io.out(), err: io.err(), mock, completed: events.find((e) => e.type === 'agent.completed') };
}

/** qs-check on a saved stream (a real process): the verdict a run gets. */
function check(out: string): Record<string, unknown> {
  const r = spawnSync(process.execPath, [QS_CHECK, '-q'], { input: out, encoding: 'utf8' });
  const events = parseOut(r.stdout);
  return events.find((e) => e.type === 'run.completed') ?? { stderr: r.stderr };
}

const SCRIPT: MockStep[] = [
  { text: 'Reading the docs first.', toolCalls: [{ id: 'c1', name: 'read_docs', input: { url: 'https://docs.greeter.test/install.html' } }], usage: { input: 100, output: 20 } },
  { toolCalls: [{ id: 'c2', name: 'bash', input: { command: 'echo Hello, Ada!; exit 3' } }], usage: { input: 50, cacheRead: 100, output: 10 } },
  { toolCalls: [{ id: 'c3', name: 'fly', input: { to: 'moon' } }, { id: 'c4', name: 'bash', input: { cmd: 'ls' } }, { id: 'c5', name: 'read_docs', input: { url: 'https://docs.greeter.test/quickstart.html', page: '2' } }] },
  { text: 'Done: the greeter says hello.' },
];

describe('the model agent loop', () => {
  it('reads docs, runs commands and answers bad calls with tool errors: every turn and call as events', async () => {
    const { code, events, mock, completed } = await modelRun({ script: SCRIPT });
    expect(code).toBe(0);
    const types = events.map((e) => e.type).filter((t) => !['task.loaded', 'sandbox.ready', 'sandbox.usage'].includes(t));
    expect(types).toEqual([
      'agent.started',
      'agent.turn',
      'tool.call',
      'docs.read',
      'agent.turn',
      'tool.call',
      'tool.result',
      'agent.turn',
      'tool.call',
      'tool.error',
      'tool.call',
      'tool.error',
      'tool.call',
      'tool.error',
      'agent.turn',
      'agent.completed',
    ]);
    const turns = events.filter((e) => e.type === 'agent.turn');
    expect(turns.map((t) => t.turn)).toEqual([1, 2, 3, 4]);
    expect(turns[0]?.request_id).toMatch(/^req_mock_/);
    // Every call hangs under its turn, every result or error under its call.
    for (const call of events.filter((e) => e.type === 'tool.call')) {
      const turn = events.filter((e) => e.type === 'agent.turn' && events.indexOf(e) < events.indexOf(call)).at(-1);
      expect(call.parent_id).toBe(turn?.id);
      const answer = events[events.indexOf(call) + 1];
      expect(answer?.parent_id).toBe(call.id);
    }
    expect(events.filter((e) => e.type === 'tool.call').map((e) => e.call_id)).toEqual(['c1', 'c2', 'c3', 'c4', 'c5']);
    expect(events.filter((e) => e.type === 'tool.error').map((e) => e.error)).toEqual([
      "unknown tool 'fly': the tools are bash and read_docs",
      'bash needs {"command": "<a shell command>"}: command is missing',
      'read_docs: page must be a whole number from 1',
    ]);
    expect(events.find((e) => e.type === 'tool.call' && e.tool === 'fly')).toMatchObject({ input: { to: 'moon' } });
    // What the model was told: the page text, the exit code and output, the errors.
    const anth = mock.requestsFor('anthropic');
    expect(anth).toHaveLength(4);
    const results = (n: number) => (anth[n]?.body.messages.at(-1).content as Array<{ type: string; content: string; is_error?: boolean }>).filter((c) => c.type === 'tool_result');
    expect(results(1)[0]?.content).toContain('Greeter');
    expect(results(2)[0]?.content).toBe('exit code: 3\nHello, Ada!\n');
    expect(results(3).map((r) => r.is_error)).toEqual([true, true, true]);
    expect(anth[0]?.body.system[0].text).toMatch(/quickstart/);
    expect(JSON.stringify(anth[0]?.body.messages[0])).toContain('1. https://docs.greeter.test/install.html');
    expect(anth[0]?.body.tools.map((t: { name: string }) => t.name)).toEqual(['bash', 'read_docs']);
    expect(completed).toMatchObject({
      stop_reason: 'completed',
      commands: 1,
      turns: 4,
      model: 'claude-sonnet-4-6',
      final_text: 'Done: the greeter says hello.',
      // 100+12+50+12 input, 100 cache read, 20+7+10+7 output; priced from the built-in book.
      usage: { input_tokens: 174, cache_read_tokens: 100, cache_write_tokens: 0, output_tokens: 44, reasoning_tokens: 0 },
    });
    const perTurn = turns.map((t) => t.usd as number);
    expect(perTurn[0]).toBeCloseTo((100 * 3 + 20 * 15) / 1e6, 9);
    expect(completed?.usd).toBeCloseTo(perTurn.reduce((a, b) => a + b, 0), 6);
  });

  it('answers tool arguments that are not JSON with a tool error, and goes on (an OpenAI-compatible server\'s own bytes)', async () => {
    const completion = {
      id: 'chatcmpl-x',
      object: 'chat.completion',
      created: 0,
      model: 'mock-model',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'bad1', type: 'function', function: { name: 'bash', arguments: '{"command": "ls' } }] } }],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    };
    const { events, completed, mock } = await modelRun({ vendor: 'openai-chat', stream: false, model: 'mock-model', script: [{ malformed: JSON.stringify(completion) }, { text: 'Sorry, done.' }] });
    expect(events.find((e) => e.type === 'tool.call')).toMatchObject({ tool: 'bash', call_id: 'bad1', input: {} });
    expect(events.find((e) => e.type === 'tool.error')).toMatchObject({ tool: 'bash', error: 'bash: the arguments are not JSON: {"command": "ls' });
    expect(events.filter((e) => e.type === 'tool.result')).toHaveLength(0);
    const told = mock.requestsFor('chat')[1]?.body.messages.at(-1);
    expect(told).toMatchObject({ role: 'tool', tool_call_id: 'bad1', content: 'error: bash: the arguments are not JSON: {"command": "ls' });
    expect(completed).toMatchObject({ stop_reason: 'completed', commands: 0, turns: 2 });
  });

  it('gives the same normalised events through every adapter, streaming and not', async () => {
    const norm = (events: Array<Record<string, unknown>>) =>
      events
        .filter((e) => !['task.loaded', 'sandbox.ready', 'sandbox.usage'].includes(String(e.type)))
        .map((e) => {
          const { id: _i, parent_id: _p, ts: _t, request_id: _r, duration_ms: _d, stage: _s, run_id: _u, agent: _a, base_url: _b, ...rest } = e;
          return rest;
        });
    let first: unknown;
    for (const vendor of VENDORS) {
      for (const stream of [true, false]) {
        const { events, code } = await modelRun({ vendor, stream, script: SCRIPT, model: 'mock-model' });
        expect(code, `${vendor} stream=${stream}`).toBe(0);
        const n = norm(events);
        if (first === undefined) first = n;
        else expect(n, `${vendor} stream=${stream}`).toEqual(first);
      }
    }
    expect((first as Array<{ type: string; usd?: unknown }>).filter((e) => e.type === 'agent.turn').map((e) => e.usd)).toEqual([null, null, null, null]);
  });

  it('a refusal stops the run with agent_refusal, for every vendor', async () => {
    for (const vendor of VENDORS) {
      const { out, completed } = await modelRun({ vendor, script: [{ refusal: 'I will not do that.', category: 'cyber' }] });
      expect(completed, vendor).toMatchObject({ stop_reason: 'refusal', error_kind: 'refusal', turns: 1 });
      expect(check(out), vendor).toMatchObject({ classification: 'agent_refusal' });
    }
  });

  it('429 twice then success: two agent.retry events, and the run goes on', async () => {
    const { events, completed } = await modelRun({ script: [{ error: { status: 429 } }, { error: { status: 429, retryAfterMs: 10 } }, { text: 'All done.' }] });
    const retries = events.filter((e) => e.type === 'agent.retry');
    expect(retries.map((r) => [r.turn, r.attempt, r.status, r.error_kind])).toEqual([
      [1, 1, 429, 'infra'],
      [1, 2, 429, 'infra'],
    ]);
    expect(events.find((e) => e.type === 'agent.turn')).toMatchObject({ attempts: 3 });
    expect(completed).toMatchObject({ stop_reason: 'completed', final_text: 'All done.' });
  });

  it.each(['anthropic', 'openai', 'openai-chat', 'gemini'] as const)("%s: an empty first answer (no text, no tool call) is the provider's failure, never a docs gap; an empty last answer after work is a finish", async (vendor) => {
    const empty = await modelRun({ vendor, script: [{ text: '' }] });
    expect(empty.completed, empty.err).toMatchObject({ stop_reason: 'error', error_kind: 'infra', detail: expect.stringContaining('answered with nothing') });
    expect(check(empty.out)).toMatchObject({ classification: 'infra_error', evidential: false });
    // It read the docs first: a failed check after an agent that never read them is no evidence either.
    const done = await modelRun({ vendor, script: [{ toolCalls: [{ id: 'c0', name: 'read_docs', input: { url: 'https://docs.greeter.test/install.html' } }] }, { toolCalls: [{ id: 'c1', name: 'bash', input: { command: 'true' } }] }, { text: '' }] });
    expect(done.completed, done.err).toMatchObject({ stop_reason: 'completed' });
    expect(check(done.out)).toMatchObject({ classification: 'docs_gap' });
  });

  it('a persistent 500 is infra_error, after the retries', async () => {
    const { out, events, completed } = await modelRun({ vendor: 'openai', script: [{ error: { status: 500 } }, { error: { status: 500 } }, { error: { status: 500 } }] });
    expect(events.filter((e) => e.type === 'agent.retry')).toHaveLength(2);
    expect(completed).toMatchObject({ stop_reason: 'error', error_kind: 'infra', turns: 0 });
    expect(check(out)).toMatchObject({ classification: 'infra_error' });
  });

  it('a context overflow is its own stop reason (budget_exhausted)', async () => {
    const { out, completed } = await modelRun({ script: [{ error: { status: 400, message: 'prompt is too long: 210000 tokens > 200000 maximum' } }] });
    expect(completed).toMatchObject({ stop_reason: 'context_overflow', error_kind: 'context_overflow' });
    expect(check(out)).toMatchObject({ classification: 'budget_exhausted' });
  });

  it('max_turns: the model never finishing is budget_exhausted after exactly max_turns turns', async () => {
    const call = { toolCalls: [{ name: 'bash', input: { command: 'true' } }] };
    const { out, events, completed, mock } = await modelRun({ script: [call, call, call], spec: { budgets: { max_turns: 2 } } });
    expect(events.filter((e) => e.type === 'agent.turn')).toHaveLength(2);
    expect(mock.pending).toBe(1);
    expect(completed).toMatchObject({ stop_reason: 'max_turns', turns: 2 });
    expect(check(out)).toMatchObject({ classification: 'budget_exhausted' });
  });

  it('max_tokens: no turn starts that the budget cannot cover, and a turn may ask only for what is left', async () => {
    const call = { toolCalls: [{ name: 'bash', input: { command: 'true' } }], usage: { input: 300, output: 50 } };
    const { out, events, completed, mock } = await modelRun({ script: [call, call, call], spec: { budgets: { max_tokens: 800 } } });
    const asked = mock.requestsFor('anthropic').map((r) => r.body.max_tokens);
    // 800 left; then 800 − 350 used − what the next request re-reads (300 in + 50 out + 4 for
    // "exit code: 0\n" at 4 characters a token) = 96; then nothing is left.
    expect(asked).toEqual([800, 96]);
    expect(events.filter((e) => e.type === 'agent.turn')).toHaveLength(2);
    expect(completed).toMatchObject({ stop_reason: 'token_budget', usage: { input_tokens: 600, output_tokens: 100 } });
    expect(check(out)).toMatchObject({ classification: 'budget_exhausted' });
  });

  it('openai: a turn cut at the output limit after only its reasoning is asked to go on, and the run finishes', async () => {
    for (const stream of [false, true]) {
      const { completed, events, mock } = await modelRun({ vendor: 'openai', model: 'gpt-5', stream, script: [{ text: '', reasoning: 'Planning at length.', stop: 'max_tokens' }, { text: 'Done.' }] });
      expect(events.filter((e) => e.type === 'agent.turn').map((e) => e.stop), `stream ${stream}`).toEqual(['max_tokens', 'end_turn']);
      expect(completed, `stream ${stream}`).toMatchObject({ stop_reason: 'completed', turns: 2, final_text: 'Done.' });
      expect(mock.requestsFor('responses')[1]?.body.input.map((i: { type?: string; role?: string }) => i.type ?? i.role)).toEqual(['user', 'user']);
    }
  });

  it('max_seconds is a deadline: a model call that hangs is aborted at it, and the run says timeout', async () => {
    const { out, completed, mock } = await modelRun({ script: [{ hang: true }], spec: { budgets: { max_seconds: 3 } } });
    expect(completed).toMatchObject({ stop_reason: 'timeout', detail: 'max_seconds (3) reached during turn 1: the model call was cut' });
    await mock.settled();
    expect(mock.requests[0]?.aborted).toBe(true);
    expect(check(out)).toMatchObject({ classification: 'budget_exhausted' });
  });

  it('max_seconds also cuts a command: its timeout is what is left of the deadline, not max_command_seconds', async () => {
    const { completed, events } = await modelRun({ script: [{ toolCalls: [{ name: 'bash', input: { command: 'sleep 60' } }] }], spec: { budgets: { max_seconds: 3, max_command_seconds: 300 } } });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ exit_code: 124, timed_out: true });
    expect(completed).toMatchObject({ stop_reason: 'timeout' });
  });

  it('a model answer slower than the deadline is cut too (delayMs), never waited for', async () => {
    const { completed, mock } = await modelRun({ vendor: 'gemini', script: [{ text: 'late', delayMs: 60_000 }], spec: { budgets: { max_seconds: 3 } } });
    expect(completed).toMatchObject({ stop_reason: 'timeout', turns: 0 });
    await mock.settled();
    expect(mock.requests[0]?.aborted).toBe(true);
  });

  it('a model not in the price book costs null, never 0; --prices replaces the book', async () => {
    const unknown = await modelRun({ script: [{ text: 'ok' }], model: 'claude-unheard-of' });
    expect(unknown.completed).toMatchObject({ usd: null });
    expect(unknown.events.find((e) => e.type === 'agent.turn')).toMatchObject({ usd: null });
    const book = JSON.stringify({ as_of: '2026-11-30', models: { 'claude-unheard-of': { input: 1000000, cache_read: 0, cache_write: 0, output: 2000000 } } });
    const priced = await modelRun({ script: [{ text: 'ok', usage: { input: 3, output: 2 } }], model: 'claude-unheard-of-20261130', prices: { text: book, file: 'p.json' } });
    expect(priced.completed).toMatchObject({ usd: 7 });
  });

  it('a rejected key or model ends the stage with a usage error after agent.completed says config', async () => {
    const { thrown, completed, out, err } = await modelRun({ script: [{ error: { status: 401, message: `invalid x-api-key ${KEY}` } }] });
    expect(completed).toMatchObject({ stop_reason: 'error', error_kind: 'config' });
    expect(thrown?.message).toMatch(/^anthropic: the API key was refused/);
    expect(`${thrown?.message}${out}${err}`).not.toContain(KEY);
    const notFound = await modelRun({ vendor: 'openai', script: [{ error: { status: 404, message: 'The model does not exist' } }] });
    expect(notFound.thrown?.message).toMatch(/^openai: model 'claude-sonnet-4-6' or endpoint not found/);
  });

  it('the key never reaches the sandbox, an event or a message', async () => {
    const { out, err, events, mock } = await modelRun({ script: [{ toolCalls: [{ name: 'bash', input: { command: 'env; cat /proc/self/environ | tr "\\0" "\\n"' } }] }, { error: { status: 500, message: `echo ${KEY}` } }, { error: { status: 500, message: KEY } }, { error: { status: 500 } }] });
    expect(events.find((e) => e.type === 'tool.result')?.output).toMatch(/PATH=/);
    expect(`${out}\n${err}`).not.toContain(KEY);
    expect(events.filter((e) => e.type === 'agent.retry').map((e) => e.error)).toEqual(expect.arrayContaining([expect.stringContaining('[redacted]')]));
    // The key did go where it belongs.
    expect(mock.receivedText()).toContain(KEY);
  });
});

describe('the loop over any ModelAdapter', () => {
  it('never calls an unknown stop with no tool call "completed": it is a harness error, not evidence', async () => {
    const adapter: ModelAdapter = { name: 'odd', turn: async () => ({ blocks: [{ type: 'text', text: 'partial' }], stop: 'other', usage: { input: 1, cache_read: 0, cache_write: 0, output: 1, reasoning: 0 }, attempts: 1, durationMs: 0 }) };
    const io = memoryIo({ stdin: ndjson([taskLoaded('r1', { script: 'false' })]), env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    const agent = createModelAgent('odd', () => adapter, { model: 'odd-model' });
    expect(await run({ agent: 'odd', agentImpl: agent, docs: { maps: [] }, backend: 'local', allowUnenforced: true, keep: false, allowRegistries: [], level: 'quiet' }, io)).toBe(0);
    const events = parseOut(io.out());
    for (const e of events) if (e.type === 'sandbox.ready') made.push(String(e.root));
    expect(events.find((e) => e.type === 'agent.completed')).toMatchObject({ stop_reason: 'error', error_kind: 'harness', detail: expect.stringContaining('a reason other than finishing') });
  });


  it('goes on after a paused turn: the partial answer is sent back last, and the run finishes', async () => {
    const seen: Message[][] = [];
    const replies: TurnResult[] = [
      { blocks: [{ type: 'text', text: 'working on it' }], stop: 'pause', usage: { input: 1, cache_read: 0, cache_write: 0, output: 1, reasoning: 0 }, attempts: 1, durationMs: 0, native: [{ type: 'text', text: 'working on it' }] },
      { blocks: [{ type: 'text', text: 'done' }], stop: 'end_turn', usage: { input: 1, cache_read: 0, cache_write: 0, output: 1, reasoning: 0 }, attempts: 1, durationMs: 0 },
    ];
    const adapter: ModelAdapter = {
      name: 'pausing',
      turn: async (req) => {
        seen.push(structuredClone(req.messages));
        return replies[seen.length - 1] as TurnResult;
      },
    };
    const io = memoryIo({ stdin: ndjson([taskLoaded('r1', { script: 'true' })]), env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    expect(await run({ agent: 'pausing', agentImpl: createModelAgent('pausing', () => adapter, { model: 'p-1' }), docs: { maps: [] }, backend: 'local', allowUnenforced: true, keep: false, allowRegistries: [], level: 'quiet' }, io)).toBe(0);
    const events = parseOut(io.out());
    for (const e of events) if (e.type === 'sandbox.ready') made.push(String(e.root));
    expect(seen).toHaveLength(2);
    expect(seen[1]?.at(-1)).toMatchObject({ role: 'assistant', blocks: [{ type: 'text', text: 'working on it' }], native: [{ type: 'text', text: 'working on it' }] });
    expect(events.filter((e) => e.type === 'agent.turn').map((e) => e.stop)).toEqual(['pause', 'end_turn']);
    expect(events.find((e) => e.type === 'agent.completed')).toMatchObject({ stop_reason: 'completed', final_text: 'done' });
  });

  it('runs turns from an adapter that is not a vendor (as a recorded run will), calling afterTool once each call is recorded', async () => {
    const zero = { input: 1, cache_read: 0, cache_write: 0, output: 1, reasoning: 0 };
    const turns: TurnResult[] = [
      { blocks: [{ type: 'tool_call', id: 'r1', name: 'bash', input: { command: 'echo recorded' } }, { type: 'tool_call', id: 'r2', name: 'read_docs', input: { url: 'https://docs.greeter.test/nope.html' } }], stop: 'tool_use', usage: zero, attempts: 1, durationMs: 0 },
      { blocks: [{ type: 'tool_call', id: 'r3', name: 'read_docs', input: { url: 'https://docs.greeter.test/install.html' } }, { type: 'tool_call', id: 'r4', name: 'bash', input: {} }], stop: 'tool_use', usage: zero, attempts: 1, durationMs: 0 },
      { blocks: [{ type: 'text', text: 'replayed' }], stop: 'end_turn', usage: zero, attempts: 1, durationMs: 0 },
    ];
    const seen: TurnRequest[] = [];
    const adapter: ModelAdapter = { name: 'recorded', turn: async (req) => (seen.push(structuredClone({ ...req, signal: undefined, onRetry: undefined })), turns[seen.length - 1] as TurnResult) };
    const infos: AfterToolInfo[] = [];
    const io = memoryIo({ stdin: ndjson([taskLoaded('r1', { script: 'false' })]), env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    const agent = createModelAgent('recorded', () => adapter, { model: 'recorded-model' }, { afterTool: async (info) => void infos.push(info) });
    const code = await run({ ...localAgentOptions('recorded', {}), agentImpl: agent }, io);
    const events = parseOut(io.out());
    for (const e of events) if (e.type === 'sandbox.ready') made.push(String(e.root));
    expect(code).toBe(0);
    expect(infos.map((i) => [i.turn, i.callId, i.tool, i.outcome.kind])).toEqual([
      [1, 'r1', 'bash', 'bash'],
      [1, 'r2', 'read_docs', 'read_docs'],
      [2, 'r3', 'read_docs', 'read_docs'],
      [2, 'r4', 'bash', 'error'],
    ]);
    expect(infos[0]?.outcome).toEqual({ kind: 'bash', exitCode: 0, output: 'recorded\n', timedOut: false });
    expect(infos[1]?.outcome).toMatchObject({ kind: 'read_docs', ok: false, text: expect.stringMatching(/^error: /) });
    expect(infos[2]?.outcome).toMatchObject({ kind: 'read_docs', ok: true, status: 200, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    for (const info of infos) {
      const call = events.find((e) => e.id === info.toolCallEventId);
      expect(call).toMatchObject({ type: 'tool.call', call_id: info.callId });
      const o = info.outcome;
      const want = o.kind === 'bash' ? 'tool.result' : o.kind === 'error' ? 'tool.error' : o.ok ? 'docs.read' : 'docs.error';
      expect(events.filter((e) => e.parent_id === info.toolCallEventId).map((e) => e.type)).toEqual([want]);
    }
    expect(seen).toHaveLength(3);
    expect(seen[2]?.messages.at(-1)?.blocks.map((b) => (b.type === 'tool_result' ? [b.id, b.is_error ?? false] : b.type))).toEqual([
      ['r3', false],
      ['r4', true],
    ]);
    expect(events.find((e) => e.type === 'agent.completed')).toMatchObject({ agent: 'recorded', stop_reason: 'completed', turns: 3, final_text: 'replayed', usd: null });
  });
});

describe('cost by the model that served', () => {
  it('prices each turn by the model the provider reports, not the alias asked for; one unpriced turn makes the run\'s cost null', async () => {
    const book = parsePriceBook(JSON.stringify({ as_of: '2026-11-30', models: { 'priced-model': { input: 1000000, cache_read: 0, cache_write: 0, output: 0 } } }), 'p.json');
    const go = async (servedBy: string[]) => {
      let n = 0;
      const adapter: ModelAdapter = {
        name: 'scripted',
        turn: async () => {
          const model = servedBy[n++] as string;
          const last = n === servedBy.length;
          return { model, blocks: last ? [{ type: 'text', text: 'ok' }] : [{ type: 'tool_call', id: `c${n}`, name: 'bash', input: { command: 'true' } }], stop: last ? 'end_turn' : 'tool_use', usage: { input: 2, cache_read: 0, cache_write: 0, output: 0, reasoning: 0 }, attempts: 1, durationMs: 0 };
        },
      };
      const io = memoryIo({ stdin: ndjson([taskLoaded('r1', { script: 'false' })]), env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
      const agent = createModelAgent('scripted', () => adapter, { model: 'alias', prices: book });
      await run({ agent: 'scripted', agentImpl: agent, docs: { maps: [] }, backend: 'local', allowUnenforced: true, keep: false, allowRegistries: [], level: 'quiet' }, io);
      const events = parseOut(io.out());
      for (const e of events) if (e.type === 'sandbox.ready') made.push(String(e.root));
      return events;
    };
    const priced = await go(['priced-model-20261130', 'priced-model']);
    expect(priced.filter((e) => e.type === 'agent.turn').map((e) => [e.model, e.usd])).toEqual([
      ['priced-model-20261130', 2],
      ['priced-model', 2],
    ]);
    expect(priced.find((e) => e.type === 'agent.completed')).toMatchObject({ model: 'priced-model', usd: 4 });
    const mixed = await go(['priced-model', 'other-model']);
    expect(mixed.find((e) => e.type === 'agent.completed')).toMatchObject({ usd: null });
  });
});

describe('keys and endpoints', () => {
  it('takes quickloop\'s own key first, then the vendor\'s; a base URL from the flag, then the variable', () => {
    expect(resolveVendor('anthropic', {}, { ANTHROPIC_API_KEY: 'vendor-key', QS_ANTHROPIC_API_KEY: 'qs-key' })).toMatchObject({ apiKey: 'qs-key', model: 'claude-sonnet-4-6', shownBaseUrl: 'https://api.anthropic.com' });
    expect(resolveVendor('gemini', {}, { GOOGLE_API_KEY: 'g', GEMINI_API_KEY: '  ' })).toMatchObject({ apiKey: 'g' });
    expect(resolveVendor('openai', { baseUrl: 'http://flag.test/v1/' }, { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'http://env.test/v1' })).toMatchObject({ baseURL: 'http://flag.test/v1', model: 'gpt-5' });
    // A local OpenAI-compatible server needs no key; api.openai.com does.
    expect(resolveVendor('openai-chat', { model: 'llama3' }, { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' })).toMatchObject({ apiKey: 'no-key', secrets: [] });
    expect(() => resolveVendor('openai-chat', { model: 'llama3' }, {})).toThrow('--agent openai-chat needs an API key: set QS_OPENAI_API_KEY or OPENAI_API_KEY (or give --base-url for a server that needs none)');
  });

  it('shows an endpoint without its query, and treats every query value as a secret in whatever encoding it is printed', () => {
    const gatewayKey = 'gw/Ke+y~ 9\u00e4Z';
    const r = resolveVendor('openai', { baseUrl: `https://gw.test/v1/?token=t0k&key=${encodeURIComponent(gatewayKey)}#f` }, { OPENAI_API_KEY: KEY });
    expect(r).toMatchObject({ shownBaseUrl: 'https://gw.test/v1', baseURL: `https://gw.test/v1?token=t0k&key=${encodeURIComponent(gatewayKey)}#f`, params: ['token', 'key'] });
    expect(r.secrets).toEqual(expect.arrayContaining([gatewayKey, 't0k', KEY]));
    expect(r.words).toEqual(['t0k', gatewayKey]);
    const redact = redactor(r.secrets, r.params, r.words);
    const pct = encodeURIComponent(gatewayKey);
    const forms = [gatewayKey, pct, pct.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()), new URLSearchParams({ k: gatewayKey }).toString().slice(2), encodeURIComponent(pct), KEY, encodeURIComponent(KEY)];
    const text = redact(`POST https://gw.test/v1/responses?token=t0k&key=${pct} failed; the gateway said: ${forms.join(', ')}`);
    for (const form of forms) expect(text, form).not.toContain(form);
    // A value too short to look for in free text is still taken out of a URL's query.
    expect(text).toMatch(/^POST https:\/\/gw\.test\/v1\/responses\?token=\[redacted\]&key=\[redacted\] failed/);
  });

  it('scrubs a short query value from free text only as a whole word, never a word that contains it', () => {
    const r = resolveVendor('openai', { baseUrl: 'https://gw.test/v1?tenant=prod' }, { OPENAI_API_KEY: KEY });
    expect(redactor(r.secrets, r.params, r.words)(`tenant prod: the production build failed (${KEY}x)`)).toBe('tenant [redacted]: the production build failed ([redacted]x)');
  });

  it('refuses a base URL with a user or password in it (fetch never sends them), without showing them', () => {
    for (const baseUrl of ['https://bob:hunter2x@gw.test/v1', 'https://hunter2x@gw.test/v1']) {
      let message = '';
      try {
        resolveVendor('openai', { baseUrl }, { OPENAI_API_KEY: KEY });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toBe('--base-url: must not carry a user or password (fetch will not send them); give the key in QS_OPENAI_API_KEY');
    }
    expect(() => resolveVendor('anthropic', {}, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: 'https://u:p@gw.test' })).toThrow('ANTHROPIC_BASE_URL: must not carry a user or password');
  });
});

describe('qs-agent --agent MODEL (the binary)', () => {
  const BIN = fileURLToPath(new URL('../bin/qs-agent.js', import.meta.url));
  const bin = (args: string[], env: Record<string, string>, input = 'not json\n') => spawnSync(process.execPath, [BIN, ...args], { input, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } });

  it('a missing key is a one-line usage error before stdin is read or a sandbox made', () => {
    for (const [agent, vars] of [
      ['anthropic', 'QS_ANTHROPIC_API_KEY or ANTHROPIC_API_KEY'],
      ['openai', 'QS_OPENAI_API_KEY or OPENAI_API_KEY'],
      ['gemini', 'QS_GEMINI_API_KEY or GEMINI_API_KEY or GOOGLE_API_KEY'],
    ] as const) {
      const r = bin(['--agent', agent], {});
      expect(r.status, agent).toBe(3);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(`needs an API key: set ${vars}`);
    }
    const chat = bin(['--agent', 'openai-chat', '--base-url', 'http://127.0.0.1:9/v1'], {});
    expect(chat.stderr).toContain('--agent openai-chat needs --model');
    expect(chat.status).toBe(3);
  });

  it('a bad --prices file or --base-url is a one-line usage error naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'qs-prices-'));
    temps.push(dir);
    const file = join(dir, 'prices.json');
    writeFileSync(file, JSON.stringify({ as_of: '2026-01-01', models: { m: { input: 1, cache_read: 0, cache_write: 0, output: -2 } } }));
    const bad = bin(['--agent', 'anthropic', '--prices', file], { ANTHROPIC_API_KEY: KEY });
    expect(bad.status).toBe(3);
    expect(bad.stderr).toContain(`${file}: models.m.output must be a number ≥ 0`);
    const missing = bin(['--agent', 'anthropic', '--prices', join(dir, 'nope.json')], { ANTHROPIC_API_KEY: KEY });
    expect(missing.stderr).toContain('nope.json: cannot read it: ENOENT');
    const url = bin(['--agent', 'gemini', '--base-url', 'ftp://x'], { GEMINI_API_KEY: KEY });
    expect(url.stderr).toContain('--base-url: must be an http or https URL');
    for (const r of [bad, missing, url]) expect(r.stderr).not.toContain(KEY);
  });
});
