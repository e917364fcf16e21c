// Opt-in (QUICKLOOP_REAL_CLIS=1): the real `claude -p` and `codex exec`, through invokeCli, against the mock model server.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REAL_CLI_ARGV, claudeMockEnv, codexMockEnv, findOnPath, geminiMockEnv, startMockServer, type MockServer } from '@quickloop/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv } from './cli/env.js';
import { invokeCli } from './cli/invoke.js';

const OPTED_IN = process.env.QUICKLOOP_REAL_CLIS === '1';

const claude = findOnPath('claude');
const codex = findOnPath('codex');
const gemini = findOnPath('gemini');
const why = (bin: string, found: string | undefined) =>
  !OPTED_IN ? 'skipped: set QUICKLOOP_REAL_CLIS=1 to run' : found ? `using ${found}` : `skipped: ${bin} not on PATH`;

// A value the parent process holds; the assertions prove it never reaches the model.
const PARENT_SECRET = 'sk-parent-secret-must-not-leak-0451';

let mock: MockServer;
let home: string;
beforeAll(async () => {
  if (!OPTED_IN) return;
  process.env.QL_REAL_CLI_TEST_SECRET = PARENT_SECRET;
  mock = await startMockServer();
  home = mkdtempSync(join(tmpdir(), 'ql-real-cli-'));
});
afterAll(async () => {
  delete process.env.QL_REAL_CLI_TEST_SECRET;
  await mock?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});
afterEach(() => {
  mock?.reset();
});

/** Each call gets a throwaway HOME: the CLIs write sessions and caches there. */
function scratchHome(name: string): string {
  const dir = join(home, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe.skipIf(!OPTED_IN || !claude)(`claude -p against the mock (${why('claude', claude)})`, () => {
  const claudeEnv = (dir: string) => cliEnv(process.env, claudeMockEnv(mock, dir));
  const judgeArgv = [...REAL_CLI_ARGV.claudeJudge];

  it('answers as a judge: text, usage with cache fields and cost from --output-format json', async () => {
    mock.push({ text: '```json\n{"verdict":"pass","blocking_issues":[],"confidence":0.9,"notes":"ok"}\n```', usage: { input: 30, cacheWrite: 100, cacheRead: 0, output: 21 } });
    const dir = scratchHome('judge');
    const r = await invokeCli({ argv: judgeArgv, prompt: 'You are the judge. Is 2+2=4?', cwd: dir, env: claudeEnv(dir), timeoutMs: 60_000, outputMode: 'claude-json' });
    expect(r.errorKind, r.message ?? r.stderrTail).toBeUndefined();
    expect(r.text).toContain('"verdict":"pass"');
    expect(r.usage).toEqual({ input: 30, cache_read: 0, cache_write: 100, output: 21, reasoning: 0 });
    expect(r.costUsd).toBeGreaterThan(0);
    const sent = mock.requestsFor('anthropic');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.lastUserText).toContain('Is 2+2=4?');
    expect(sent[0]!.body.tools).toEqual([]);
    expect(mock.receivedText()).not.toContain(PARENT_SECRET);
  });

  it('runs its own tool loop offline: the mock asks for Bash, claude runs it and sends the result back', async () => {
    mock.push({ text: 'Running it.', toolCalls: [{ name: 'Bash', input: { command: 'echo mock-tool-ran', description: 'echo' } }] }, (req) => ({ text: `host saw: ${req.lastUserText.trim()}` }));
    const dir = scratchHome('host');
    const r = await invokeCli({ argv: [...REAL_CLI_ARGV.claudeHost], prompt: 'Draft plan.md for this loop.', cwd: dir, env: claudeEnv(dir), timeoutMs: 90_000, outputMode: 'claude-json' });
    expect(r.errorKind, r.message ?? r.stderrTail).toBeUndefined();
    expect(r.text).toContain('host saw: mock-tool-ran');
    const second = mock.requestsFor('anthropic').at(-1)!;
    expect(JSON.stringify(second.body.messages)).toContain('mock-tool-ran');
  });

  it('classifies a 529 as transient infra and our retry gets the answer', async () => {
    mock.push({ error: { status: 529 } }, { text: 'second try' });
    const dir = scratchHome('retry');
    const waits: number[] = [];
    const r = await invokeCli({ argv: judgeArgv, prompt: 'retry me', cwd: dir, env: claudeEnv(dir), timeoutMs: 60_000, outputMode: 'claude-json', retry: { retries: 2, sleep: async (ms) => void waits.push(ms) } });
    expect(r).toMatchObject({ text: 'second try', attempts: 2 });
    expect(r.errorKind).toBeUndefined();
    expect(waits).toHaveLength(1);
  });

  it('classifies "prompt is too long" as context overflow and a refusal as refusal', async () => {
    mock.push({ error: { status: 400, message: 'prompt is too long: 250000 tokens > 200000 maximum' } });
    const dir = scratchHome('errors');
    const overflow = await invokeCli({ argv: judgeArgv, prompt: 'too long', cwd: dir, env: claudeEnv(dir), timeoutMs: 60_000, outputMode: 'claude-json', retry: { retries: 2, sleep: async () => {} } });
    expect(overflow).toMatchObject({ errorKind: 'context_overflow', attempts: 1, exitCode: 1 });
    mock.push({ refusal: 'No.', category: 'cyber' }, { refusal: 'No.', category: 'cyber' }, { refusal: 'No.', category: 'cyber' }, { refusal: 'No.', category: 'cyber' });
    const refusal = await invokeCli({ argv: judgeArgv, prompt: 'refuse me', cwd: dir, env: claudeEnv(dir), timeoutMs: 60_000, outputMode: 'claude-json', retry: { retries: 2, sleep: async () => {} } });
    expect(refusal).toMatchObject({ errorKind: 'refusal', attempts: 1 });
  });
});

describe.skipIf(!OPTED_IN || !codex)(`codex exec against the mock (${why('codex', codex)})`, () => {
  function codexEnv(name: string) {
    const dir = scratchHome(name);
    return { dir, env: cliEnv(process.env, codexMockEnv(mock, dir)) };
  }
  const argv = [...REAL_CLI_ARGV.codex];

  it('answers with text and usage from --json (cached and reasoning tokens included)', async () => {
    mock.push({ text: '```json\n{"verdict":"revise","blocking_issues":["x"]}\n```', usage: { input: 10, cacheRead: 8, output: 5, reasoning: 2 } });
    const { dir, env } = codexEnv('judge');
    const r = await invokeCli({ argv, prompt: 'You are the judge. Review this.', cwd: dir, env, timeoutMs: 60_000, outputMode: 'codex-json' });
    expect(r.errorKind, r.message ?? r.stderrTail).toBeUndefined();
    expect(r.text).toContain('"verdict":"revise"');
    expect(r.usage).toEqual({ input: 10, cache_read: 8, cache_write: 0, output: 5, reasoning: 2 });
    const sent = mock.requestsFor('responses');
    expect(sent[0]!.lastUserText).toContain('Review this.');
    expect(sent[0]!.headers.authorization).toBe('Bearer dummy');
    expect(mock.receivedText()).not.toContain(PARENT_SECRET);
  });

  it('runs its own exec_command tool against the mock and reports the result', async () => {
    mock.push({ toolCalls: [{ name: 'exec_command', input: { cmd: 'echo mock-tool-ran' } }] }, (req) => ({ text: `host saw: ${req.lastUserText.includes('mock-tool-ran') ? 'mock-tool-ran' : req.lastUserText.slice(0, 600)}` }));
    const { dir, env } = codexEnv('host');
    // codex will not install its sandbox helper under a temp dir (our scratch HOME), so run the echo unsandboxed.
    const r = await invokeCli({ argv: [...argv.slice(0, -1), '--sandbox', 'danger-full-access', '-'], prompt: 'Write the next delivery artifact.', cwd: dir, env, timeoutMs: 90_000, outputMode: 'codex-json' });
    expect(r.errorKind, r.message ?? r.stderrTail).toBeUndefined();
    expect(r.text).toBe('host saw: mock-tool-ran');
  });

  it('reports a 429 as transient infra (turn.failed)', async () => {
    mock.push({ error: { status: 429 } });
    const { dir, env } = codexEnv('limited');
    const r = await invokeCli({ argv, prompt: 'rate limit me', cwd: dir, env, timeoutMs: 60_000, outputMode: 'codex-json', retry: { retries: 0 } });
    expect(r).toMatchObject({ errorKind: 'infra', exitCode: 1 });
    expect(r.message).toContain('429');
  });
});

describe.skipIf(!OPTED_IN || !gemini)(`gemini against the mock (${why('gemini', gemini)})`, () => {
  const argv = [...REAL_CLI_ARGV.gemini];

  it('answers with text and usage from -o json (cached and thought tokens included)', async () => {
    mock.push({ text: 'gemini verdict: pass', usage: { input: 10, cacheRead: 4, output: 9, reasoning: 3 } });
    const dir = scratchHome('gemini-judge');
    const r = await invokeCli({ argv, prompt: 'You are the judge. Is 2+2=4?', cwd: dir, env: cliEnv(process.env, geminiMockEnv(mock, dir)), timeoutMs: 90_000, outputMode: 'gemini-json' });
    expect(r.errorKind, r.message ?? r.stderrTail).toBeUndefined();
    expect(r.text).toBe('gemini verdict: pass');
    expect(r.usage).toEqual({ input: 10, cache_read: 4, cache_write: 0, output: 9, reasoning: 3 });
    expect(mock.requestsFor('gemini')[0]!.lastUserText).toContain('Is 2+2=4?');
    expect(mock.receivedText()).not.toContain(PARENT_SECRET);
  });

  it('reports a 400 from the API as a config error read from its stderr JSON', async () => {
    mock.push({ error: { status: 400, message: 'Request contains an invalid argument.' } });
    const dir = scratchHome('gemini-error');
    const r = await invokeCli({ argv, prompt: 'bad request', cwd: dir, env: cliEnv(process.env, geminiMockEnv(mock, dir)), timeoutMs: 90_000, outputMode: 'gemini-json', retry: { retries: 2, sleep: async () => {} } });
    expect(r).toMatchObject({ errorKind: 'config', attempts: 1 });
    expect(r.exitCode).not.toBe(0);
  });
});
