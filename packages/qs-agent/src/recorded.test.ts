// --agent recorded: a paid run's saved stream re-driven with no model, no key and no cost, in a fresh
// enforced sandbox, through the real pipeline; where the world answers differently, replay.diverged.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIo } from '@quickloop/cli-kit';
import { removeLayout } from '@quickloop/sandbox';
import { startMockServer, type MockServer, type MockStep } from '@quickloop/testkit';
import { cli } from './cli.js';
import { BIN, typedPipeline } from './testing/pipeline.js';
import { ndjson, parseOut, taskLoaded } from './testing/task-event.js';

const root = (p: string) => fileURLToPath(new URL(`../../../${p}`, import.meta.url));
const TASK = root('fixtures/examples/greeter.yaml');
const SITE = root('fixtures/docs-site');
const KEY = 'sk-recorded-SECRET-5f1e0c';
const MAP = ['--docs-map', `https://docs.greeter.test/=${SITE}`];

const pipeline = (agentArgs: string[], env: Record<string, string> = {}) => typedPipeline(TASK, agentArgs, env);

let mock: MockServer;
let work: string;
let recorded: string;
let recordedFile: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'qs-recorded-'));
  const validated = await new Promise<string>((resolve) => {
    const child = spawn(process.execPath, [BIN.validate, TASK]);
    let s = '';
    child.stdout.on('data', (c: Buffer) => (s += c.toString()));
    child.on('close', () => resolve(s));
  });
  const commands = (parseOut(validated).find((e) => e.type === 'task.loaded') as unknown as { task: { replay: string[] } }).task.replay;
  const script: MockStep[] = [
    { text: 'Reading the install page first.', toolCalls: [{ id: 'k1', name: 'read_docs', input: { url: 'https://docs.greeter.test/install.html' } }] },
    { toolCalls: [{ id: 'k2', name: 'read_docs', input: { url: 'https://docs.greeter.test/quickstart.html' } }, { id: 'u1', name: 'python', input: { code: 'print(1)' } }] },
    ...commands.map((command, i): MockStep => ({ toolCalls: [{ id: `b${i}`, name: 'bash', input: { command } }], usage: { input: 900, output: 40, cacheRead: 300 } })),
    { text: 'The greeter is built and greets Ada.' },
  ];
  mock = await startMockServer({ script, whenEmpty: 'error' });
  const r = await pipeline(['--agent', 'anthropic', '--model', 'claude-sonnet-4-6', ...MAP], { QS_ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url });
  expect(r.code, r.stderr).toBe(0);
  recorded = r.stdout;
  recordedFile = join(work, 'paid.ndjson');
  writeFileSync(recordedFile, recorded);
});

afterAll(async () => {
  await mock?.close();
  rmSync(work, { recursive: true, force: true });
});

const ofType = (events: Array<Record<string, unknown>>, type: string) => events.filter((e) => e.type === type);

describe('--agent recorded', () => {
  it('re-drives the paid run with no key, no model call and no cost, and reaches the same verdict', async () => {
    const before = mock.requests.length;
    const r = await pipeline(['--agent', 'recorded', '--from', recordedFile, ...MAP]);
    const events = parseOut(r.stdout);
    const paid = parseOut(recorded);
    expect(r.code, r.stderr).toBe(0);
    expect(mock.requests.length).toBe(before);
    expect(ofType(events, 'run.completed')[0]).toMatchObject({ classification: 'passed' });
    expect(ofType(events, 'agent.started')[0]).toMatchObject({ agent: 'recorded', from: recordedFile, model: 'claude-sonnet-4-6' });
    // The same turns, the same calls by the same ids, the unknown tool refused the same way.
    const turns = (es: Array<Record<string, unknown>>) => ofType(es, 'agent.turn').map((e) => [e.turn, e.stop, e.blocks]);
    expect(turns(events)).toEqual(turns(paid));
    const calls = (es: Array<Record<string, unknown>>) => ofType(es, 'tool.call').map((e) => [e.tool, e.call_id, e.command ?? e.url ?? null]);
    expect(calls(events)).toEqual(calls(paid));
    expect(ofType(events, 'tool.error').map((e) => e.tool)).toEqual(['python']);
    expect(ofType(events, 'agent.turn').every((e) => e.usd === 0 && Object.values(e.usage as object).every((n) => n === 0))).toBe(true);
    expect(ofType(events, 'agent.completed')[0]).toMatchObject({ stop_reason: 'completed', usd: 0, final_text: 'The greeter is built and greets Ada.' });
    expect(ofType(events, 'replay.diverged')).toEqual([]);
    expect(String(ofType(events, 'agent.completed')[0]?.detail)).toContain('every tool result matched the recording');
    expect(ofType(paid, 'agent.completed')[0]?.usd).toBeGreaterThan(0);
  });

  it('says which call diverged and how when a result differs from the recording', async () => {
    // Yesterday's run saw a different greeting: as if the docs (or the package) had changed since.
    const edited = recorded
      .split('\n')
      .map((l) => (l.includes('"type":"tool.result"') && l.includes('Hello, Ada!') ? l.replace(/Hello, Ada!/g, 'Hello, Bob!') : l))
      .join('\n');
    const file = join(work, 'edited.ndjson');
    writeFileSync(file, edited);
    const r = await pipeline(['--agent', 'recorded', '--from', file, ...MAP]);
    const events = parseOut(r.stdout);
    const diverged = ofType(events, 'replay.diverged');
    expect(diverged).toHaveLength(1);
    expect(diverged[0]).toMatchObject({ tool: 'bash', call_id: 'b1', field: 'output', recorded: 'Hello, Bob!\n', actual: 'Hello, Ada!\n', turn: 4 });
    const call = ofType(events, 'tool.call').find((e) => e.call_id === 'b1');
    expect(diverged[0]?.parent_id).toBe(call?.id);
    expect(String(ofType(events, 'agent.completed')[0]?.detail)).toContain('1 tool result diverged');
  });
});

describe('--agent recorded, the recording\'s own end', () => {
  const made: string[] = [];
  afterAll(() => {
    for (const r of made.splice(0)) removeLayout({ root: r });
  });
  const line = (o: Record<string, unknown>) => JSON.stringify({ v: 1, ts: '2026-01-01T00:00:00.000Z', stage: 'qs-agent', ...o });
  const usage = { input_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, output_tokens: 0, reasoning_tokens: 0 };
  const turn = (n: number, command: string) => line({ type: 'agent.turn', run_id: 'old', id: `t${n}`, turn: n, model: 'gpt-5', stop: 'tool_use', blocks: [{ type: 'tool_call', id: `c${n}`, name: 'bash', input: { command } }], usage, usd: null, duration_ms: 1, request_id: null, attempts: 1 });

  async function replay(recording: string[], extra: string[] = []) {
    const file = join(work, `rec-${made.length}-${Math.random().toString(36).slice(2)}.ndjson`);
    writeFileSync(file, recording.join('\n') + '\n');
    const io = memoryIo({ stdin: ndjson([taskLoaded('r1', { name: 'budgeted', replay: null })]), cwd: work, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1' } });
    let code: number;
    try {
      code = await cli(['--agent', 'recorded', '--from', file, '--backend', 'bwrap', '-q', ...extra], io);
    } finally {
      for (const e of parseOut(io.out())) if (e.type === 'sandbox.ready') made.push(String(e.root));
    }
    return { code, events: parseOut(io.out()) };
  }

  it('stops where the recorded run stopped, for the reason it stopped (here: out of turns)', async () => {
    const { code, events } = await replay([
      line({ type: 'task.loaded', run_id: 'old', task: { name: 'budgeted' } }),
      turn(1, 'echo one'),
      turn(2, 'echo two'),
      line({ type: 'agent.completed', run_id: 'old', agent: 'openai', stop_reason: 'max_turns', detail: 'max_turns (2) reached without the model finishing', commands: 2, duration_ms: 5 }),
    ]);
    expect(code).toBe(0);
    const done = ofType(events, 'agent.completed')[0];
    expect(done).toMatchObject({ agent: 'recorded', stop_reason: 'max_turns', turns: 2 });
    expect(String(done?.detail)).toMatch(/^the recorded run stopped here: max_turns \(2\) reached/);
    // No result was recorded for these calls (the stream holds turns only): each is a divergence, not a silent match.
    expect(ofType(events, 'replay.diverged').map((e) => e.field)).toEqual(['error', 'error']);
  });

  it('keeps a recorded provider failure\'s kind, and calls a recording cut short a harness error', async () => {
    const infra = await replay([
      line({ type: 'task.loaded', run_id: 'old', task: { name: 'budgeted' } }),
      turn(1, 'true'),
      line({ type: 'agent.completed', run_id: 'old', agent: 'openai', stop_reason: 'error', detail: 'turn 2: 500 server error', error_kind: 'infra', commands: 1, duration_ms: 5 }),
    ]);
    expect(ofType(infra.events, 'agent.completed')[0]).toMatchObject({ stop_reason: 'error', error_kind: 'infra' });
    const cutShort = await replay([line({ type: 'task.loaded', run_id: 'old', task: { name: 'budgeted' } }), turn(1, 'true')]);
    const done = ofType(cutShort.events, 'agent.completed')[0];
    expect(done).toMatchObject({ stop_reason: 'error', error_kind: 'harness' });
    expect(String(done?.detail)).toContain('with no agent.completed (was the recorded run cut short?)');
  });

  it('refuses, in one line and before any sandbox, what cannot be replayed', async () => {
    const io = () => memoryIo({ stdin: '', cwd: work });
    await expect(cli(['--agent', 'recorded'], io())).rejects.toThrow('--agent recorded needs --from FILE');
    await expect(cli(['--agent', 'recorded', '--from', 'nope.ndjson'], io())).rejects.toThrow('--from nope.ndjson: cannot read it: ENOENT');
    await expect(cli(['--agent', 'replay', '--from', recordedFile], io())).rejects.toThrow('--from and --from-run go with --agent recorded');
    const replayOnly = join(work, 'replay-only.ndjson');
    writeFileSync(replayOnly, `${line({ type: 'agent.started', run_id: 'x', agent: 'replay', task: 't' })}\n`);
    await expect(cli(['--agent', 'recorded', '--from', replayOnly], io())).rejects.toThrow(`--from ${replayOnly}: no model turns in it`);
    const broken = join(work, 'broken.ndjson');
    writeFileSync(broken, `${turn(1, 'true')}\n{"type":"agent.tu`);
    await expect(cli(['--agent', 'recorded', '--from', broken], io())).rejects.toThrow(`--from ${broken}:2: not a JSON event (the file ends mid-line`);
    // A recording of another task: the stage refuses it with the runs it has (exit 3), after saying the agent stopped.
    const other = join(work, 'other.ndjson');
    writeFileSync(other, [line({ type: 'task.loaded', run_id: 'old', task: { name: 'something-else' } }), turn(1, 'true')].join('\n'));
    const run = memoryIo({ stdin: ndjson([taskLoaded('r1', { name: 'budgeted', replay: null })]), cwd: work, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    await expect(cli(['--agent', 'recorded', '--from', other, '--backend', 'bwrap', '-q'], run)).rejects.toThrow(`no model run of task 'budgeted' (runs with turns: old (something-else)); choose one with --from-run`);
    for (const e of parseOut(run.out())) if (e.type === 'sandbox.ready') made.push(String(e.root));
    expect(ofType(parseOut(run.out()), 'agent.completed')[0]).toMatchObject({ stop_reason: 'error' });
  });
});
