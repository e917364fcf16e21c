// invokeCli against the fake CLIs and real processes: stdin, env, parsing, retries, deadlines and tree kills.
import { InterruptedError } from '@quickloop/cli-kit';
import { createFakeCliHome, fakeCliPath, isProcessAlive, type FakeCliHome, type FakeStep } from '@quickloop/testkit';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv } from './env.js';
import { invokeCli, type InvokeCliOptions } from './invoke.js';

let home: FakeCliHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

function setup(script: FakeStep[] | Record<string, FakeStep[]>) {
  home = createFakeCliHome(script);
  return home;
}

const call = (h: FakeCliHome, options: Partial<InvokeCliOptions> & { argv: string[] }) =>
  invokeCli({ prompt: 'the prompt', cwd: h.dir, env: cliEnv(process.env, h.env), timeoutMs: 20_000, retry: { retries: 0 }, ...options });

describe('invokeCli', () => {
  it('sends the prompt on stdin with argv as given, in cwd, and returns stdout in text mode', async () => {
    const h = setup([{ echo: true }]);
    const r = await call(h, { argv: [fakeCliPath('claude'), '-p', '--model', 'claude-sonnet-4-6'], prompt: 'multi\nline "prompt" $HOME' });
    expect(r).toMatchObject({ text: 'multi\nline "prompt" $HOME\n', exitCode: 0, timedOut: false, attempts: 1 });
    expect(r.errorKind).toBeUndefined();
    expect(r.usage).toBeUndefined();
    const [c] = h.calls();
    expect(c!.argv).toEqual(['-p', '--model', 'claude-sonnet-4-6']);
    expect(c!.prompt).toBe('multi\nline "prompt" $HOME');
    expect(c!.cwd).toBe(h.dir.replace(/\/$/, ''));
  });

  it('parses usage and cost from claude -p --output-format json', async () => {
    const h = setup([{ reply: 'answer', usage: { input: 3, output: 11, cacheRead: 200, cacheWrite: 40 }, costUsd: 0.0123 }]);
    const r = await call(h, { argv: [fakeCliPath('claude'), '-p', '--output-format', 'json'], outputMode: 'claude-json' });
    expect(r).toMatchObject({ text: 'answer', exitCode: 0, usage: { input: 3, cache_read: 200, cache_write: 40, output: 11, reasoning: 0 }, costUsd: 0.0123 });
  });

  it('parses codex exec --json and gemini -o json', async () => {
    const h = setup({ codex: [{ reply: 'from codex', usage: { input: 5, cacheRead: 7, output: 9, reasoning: 4 } }], gemini: [{ reply: 'from gemini', usage: { input: 6, cacheRead: 2, output: 8, reasoning: 3 } }] });
    const codex = await call(h, { argv: [fakeCliPath('codex'), 'exec', '--skip-git-repo-check', '--ephemeral', '--json', '-'], outputMode: 'codex-json' });
    expect(codex).toMatchObject({ text: 'from codex', usage: { input: 5, cache_read: 7, cache_write: 0, output: 9, reasoning: 4 } });
    expect(codex.costUsd).toBeUndefined();
    const gemini = await call(h, { argv: [fakeCliPath('gemini'), '-m', 'gemini-x', '-o', 'json'], outputMode: 'gemini-json' });
    expect(gemini).toMatchObject({ text: 'from gemini', usage: { input: 6, cache_read: 2, cache_write: 0, output: 8, reasoning: 3 } });
  });

  it('reports malformed JSON output as a harness error, in every JSON mode', async () => {
    const h = setup([{ malformed: true }]);
    for (const [kind, argv, mode] of [
      ['claude', ['-p', '--output-format', 'json'], 'claude-json'],
      ['codex', ['exec', '--json'], 'codex-json'],
      ['gemini', ['-o', 'json'], 'gemini-json'],
    ] as const) {
      const r = await call(h, { argv: [fakeCliPath(kind), ...argv], outputMode: mode });
      expect(r.errorKind, kind).toBe('harness');
      expect(r.exitCode).toBe(0);
      expect(r.message).toMatch(/not JSON|no "type":"result"/);
    }
  });

  it('keeps API keys out of the environment unless the caller passes them', async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-test-never-sent';
    try {
      // The default env: the safe subset of ours.
      const r = await invokeCli({ argv: [process.execPath, '-e', 'process.stdout.write(JSON.stringify(process.env))'], prompt: '', cwd: process.cwd(), timeoutMs: 20_000 });
      const seen = JSON.parse(r.text);
      expect(seen.ANTHROPIC_API_KEY).toBeUndefined();
      expect(r.text).not.toContain('sk-ant-test-never-sent');
      expect(seen.PATH).toBe(process.env.PATH);
      const h = setup([{}]);
      await call(h, { argv: [fakeCliPath('claude'), '-p'] });
      await call(h, { argv: [fakeCliPath('claude'), '-p'], env: cliEnv(process.env, { ...h.env, ANTHROPIC_API_KEY: 'passed-on-purpose' }) });
      const [without, withKey] = h.calls();
      expect(without!.envKeys).not.toContain('ANTHROPIC_API_KEY');
      expect(withKey!.envKeys).toContain('ANTHROPIC_API_KEY');
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('retries transient failures with jittered backoff and returns the success', async () => {
    const h = setup([{ apiError: { status: 529 } }, { apiError: { status: 429 } }, { reply: 'third time', usage: { input: 1, output: 2 } }]);
    const waits: number[] = [];
    const retried: string[] = [];
    const r = await call(h, {
      argv: [fakeCliPath('claude'), '-p', '--output-format', 'json'],
      outputMode: 'claude-json',
      retry: { retries: 3, baseMs: 100, random: () => 0.5, sleep: async (ms) => void waits.push(ms) },
      onRetry: ({ attempt, waitMs, result }) => retried.push(`${attempt}:${waitMs}:${result.errorKind}:${result.exitCode}`),
    });
    expect(retried).toEqual(['1:75:infra:1', '2:150:infra:1']);
    expect(r).toMatchObject({ text: 'third time', exitCode: 0, attempts: 3, usage: { input: 1, output: 2 } });
    expect(r.errorKind).toBeUndefined();
    // Equal jitter: half the ceiling plus half of it scaled by random(); the ceiling doubles per retry.
    expect(waits).toEqual([75, 150]);
    expect(h.calls()).toHaveLength(3);
  });

  it('does not retry config errors or context overflow, and stops retrying at the deadline', async () => {
    const h = setup({ claude: [{ contextOverflow: true }], codex: [{ apiError: { status: 500 } }] });
    const overflow = await call(h, { argv: [fakeCliPath('claude'), '-p', '--output-format', 'json'], outputMode: 'claude-json', retry: { retries: 3, sleep: async () => {} } });
    expect(overflow).toMatchObject({ errorKind: 'context_overflow', exitCode: 1, attempts: 1 });
    const badFlag = await call(h, { argv: [fakeCliPath('claude'), '-p', '--frobnicate'], retry: { retries: 3, sleep: async () => {} } });
    expect(badFlag).toMatchObject({ errorKind: 'config', exitCode: 1, attempts: 1 });
    expect(badFlag.stderrTail).toContain("unknown option '--frobnicate'");
    // The first backoff (30 s) would cross a 10 s deadline, so the call gives up after one attempt.
    const slept: number[] = [];
    const late = await call(h, { argv: [fakeCliPath('codex'), 'exec', '--json'], outputMode: 'codex-json', timeoutMs: 10_000, retry: { retries: 3, baseMs: 60_000, maxMs: 60_000, sleep: async (ms) => void slept.push(ms) } });
    expect(late).toMatchObject({ errorKind: 'infra', attempts: 1, exitCode: 1 });
    expect(slept).toEqual([]);
  });

  it('classifies a refusal, a missing binary or cwd, and a file that is not executable', async () => {
    const h = setup([{ refusal: 'I cannot help with that.' }]);
    const refusal = await call(h, { argv: [fakeCliPath('claude'), '-p', '--output-format', 'json'], outputMode: 'claude-json', retry: { retries: 2, sleep: async () => {} } });
    expect(refusal).toMatchObject({ errorKind: 'refusal', attempts: 1, text: 'I cannot help with that.' });
    const missing = await call(h, { argv: ['quickloop-no-such-model-cli', '-p'] });
    expect(missing).toMatchObject({ errorKind: 'config', exitCode: 127, message: 'command not found: quickloop-no-such-model-cli' });
    const noCwd = await call(h, { argv: [fakeCliPath('claude'), '-p'], cwd: join(h.dir, 'gone') });
    expect(noCwd).toMatchObject({ errorKind: 'config', exitCode: 127, message: `working directory not found: ${join(h.dir, 'gone')}` });
    const notExecutable = join(h.dir, 'script.json');
    const denied = await call(h, { argv: [notExecutable] });
    expect(denied).toMatchObject({ errorKind: 'config', exitCode: 127, message: `cannot run ${notExecutable}: EACCES` });
  });

  it('on timeout kills the whole process tree, SIGTERM-ignoring grandchild included', async () => {
    const h = setup([{ hang: true, spawnChild: true, ignoreSigterm: true, partial: 'half an ans' }]);
    const r = await call(h, { argv: [fakeCliPath('claude'), '-p'], timeoutMs: 3000, killGraceMs: 200 });
    expect(r).toMatchObject({ timedOut: true, errorKind: 'infra', text: '' });
    const spawned = h.spawned();
    expect(spawned).toHaveLength(1);
    const [cli, grandchild] = spawned[0]!;
    expect(isProcessAlive(cli)).toBe(false);
    expect(isProcessAlive(grandchild)).toBe(false);
  });

  it('ends helpers a CLI leaves behind after a normal exit', async () => {
    const h = setup([{ spawnChild: true, reply: 'done' }]);
    const r = await call(h, { argv: [fakeCliPath('claude'), '-p'], killGraceMs: 200 });
    expect(r).toMatchObject({ text: 'done\n', exitCode: 0, timedOut: false });
    const [[, grandchild]] = h.spawned() as [[number, number]];
    expect(isProcessAlive(grandchild)).toBe(false);
  });

  it('on abort kills the tree and rejects with InterruptedError', async () => {
    const h = setup([{ hang: true, spawnChild: true }]);
    const controller = new AbortController();
    const pending = call(h, { argv: [fakeCliPath('claude'), '-p'], signal: controller.signal, killGraceMs: 200 });
    // Abort once the fake has started its grandchild, so the test proves the grandchild dies too.
    while (h.spawned().length === 0) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(InterruptedError);
    const [[cli, grandchild]] = h.spawned() as [[number, number]];
    expect(isProcessAlive(cli)).toBe(false);
    expect(isProcessAlive(grandchild)).toBe(false);
  });

  it('kills a CLI whose output passes the cap and calls it a harness error', async () => {
    const h = setup([{ outputBytes: 100_000 }]);
    const r = await call(h, { argv: [fakeCliPath('claude'), '-p'], maxOutputBytes: 1000 });
    expect(r).toMatchObject({ errorKind: 'harness' });
    expect(r.message).toContain('exceeded 1000 bytes');
  });

  it('with overflow tail, a long stderr is no truncated stdout, and a short bound does not cut the error message', async () => {
    const tail = (script: string, options: Partial<InvokeCliOptions> = {}) =>
      invokeCli({ argv: ['bash', '-c', script], prompt: '', cwd: process.cwd(), timeoutMs: 20_000, overflow: 'tail', retry: { retries: 0 }, ...options });
    const noisy = await tail('head -c 100000 /dev/zero | tr "\\0" e >&2; echo answer');
    expect(noisy).toMatchObject({ text: 'answer\n', exitCode: 0 });
    expect(noisy.outputTruncated).toBeUndefined();
    // The 429 sits at the start of stderr, further back than a 16-byte stdout bound: it is still seen, and retried.
    const slept: number[] = [];
    const limited = await tail('echo "Error: 429 Too Many Requests; please wait a little" >&2; exit 1', { maxOutputBytes: 16, retry: { retries: 1, sleep: async (ms) => void slept.push(ms) } });
    expect(limited).toMatchObject({ errorKind: 'infra', attempts: 2, stderrTail: 'Error: 429 Too Many Requests; please wait a little\n' });
    expect(limited.outputTruncated).toBeUndefined();
    expect(slept).toHaveLength(1);
  });

  it('runs parallel calls independently, each fake call taking its own scripted step', async () => {
    const h = setup({ reviewer: [1, 2, 3, 4, 5].map((n) => ({ reply: `review ${n}`, delayMs: 50 * (5 - n) })) });
    const reviewer = h.persona('reviewer', 'claude');
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => call(h, { argv: [reviewer, '-p'], prompt: `artifact ${n}` })));
    expect(new Set(results.map((r) => r.text))).toEqual(new Set([1, 2, 3, 4, 5].map((n) => `review ${n}\n`)));
    expect(results.every((r) => r.exitCode === 0 && r.errorKind === undefined)).toBe(true);
    expect(h.calls().map((c) => c.index).sort()).toEqual([0, 1, 2, 3, 4]);
  });

  it('rejects an empty argv', async () => {
    await expect(invokeCli({ argv: [], prompt: '', cwd: '.', timeoutMs: 1000 })).rejects.toThrow(/argv must name a command/);
  });
});

describe('invokeCli, out of resources at spawn', () => {
  it('retries a spawn that failed for want of descriptors (EMFILE) as transient, and succeeds once they are free', async () => {
    // In a process limited by ulimit: fill the descriptor table, call, and free the table before the retry.
    const script = `import { openSync, closeSync } from 'node:fs';
import { invokeCli } from ${JSON.stringify(new URL('../../dist/cli/invoke.js', import.meta.url).pathname)};
const fds = [];
try { for (;;) fds.push(openSync('/dev/null', 'r')); } catch {}
const r = await invokeCli({ argv: ['echo', 'answer'], prompt: '', cwd: '/', timeoutMs: 20000,
  retry: { retries: 1, sleep: async () => { for (const fd of fds.splice(0)) closeSync(fd); } } });
console.log(JSON.stringify({ text: r.text, attempts: r.attempts, errorKind: r.errorKind ?? null }));`;
    const { runChild } = await import('@quickloop/cli-kit/process-group');
    const r = await runChild(['bash', '-c', 'ulimit -n 256 && exec "$0" --input-type=module -e "$1"', process.execPath, script], { cwd: process.cwd(), timeoutMs: 30_000 });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ text: 'answer\n', attempts: 2, errorKind: null });
  });
});
