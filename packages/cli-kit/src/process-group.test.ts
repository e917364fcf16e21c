// Running and ending a real process tree: the leader, a child that ignores SIGTERM, output bounds, and the signal table.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { endGroup, endGroups, exitCodeOf, groupRunning, runChild, signalNumber } from './process-group.js';

/** A detached shell whose child traps TERM and lives on; resolves once both are running. */
async function stubbornTree(): Promise<number> {
  const child = spawn('bash', ['-c', "bash -c 'trap \"\" TERM; echo up; while :; do sleep 0.05; done' & wait"], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.unref();
  return child.pid as number;
}

describe('signals', () => {
  it('come from the kernel table', () => {
    expect(signalNumber('SIGTERM')).toBe(constants.signals.SIGTERM);
    expect(signalNumber('SIGALRM')).toBe(constants.signals.SIGALRM);
    expect(signalNumber('SIGNOPE')).toBe(0);
  });
  it('give a shell-style exit code', () => {
    expect(exitCodeOf(3, null)).toBe(3);
    expect(exitCodeOf(0, 'SIGKILL')).toBe(0);
    expect(exitCodeOf(null, 'SIGKILL')).toBe(128 + constants.signals.SIGKILL);
    expect(exitCodeOf(null, 'SIGUSR2')).toBe(128 + constants.signals.SIGUSR2);
    expect(exitCodeOf(null, null, 7)).toBe(7);
  });
});

describe('endGroup', () => {
  it('ends a tree whose child ignores SIGTERM (SIGKILL after the grace), and only then resolves', async () => {
    const pgid = await stubbornTree();
    expect(groupRunning(pgid)).toBe(true);
    await endGroup(pgid, 50);
    expect(groupRunning(pgid)).toBe(false);
  });

  it('with no grace, kills at once; several groups at a time; a group already gone is fine', async () => {
    const groups = [await stubbornTree(), await stubbornTree()];
    await endGroups(groups, 0);
    expect(groups.map(groupRunning)).toEqual([false, false]);
    await endGroups(groups, 10);
    expect(groups.map(groupRunning)).toEqual([false, false]);
  });

  it('a tree that honours SIGTERM ends within the grace, without SIGKILL', async () => {
    const child = spawn('bash', ['-c', "trap 'echo term; exit 0' TERM; echo up; while :; do sleep 0.05; done"], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    await new Promise<void>((resolve) => child.stdout.on('data', (c: Buffer) => { out += c.toString(); if (out.includes('up')) resolve(); }));
    const exited = new Promise<string | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    await endGroup(child.pid as number, 10_000);
    expect(await exited).toBe(null);
    expect(out).toContain('term');
  });
});

describe('runChild', () => {
  const cwd = process.cwd();
  const sh = (script: string, options: Partial<Parameters<typeof runChild>[1]> = {}) => runChild(['bash', '-c', script], { cwd, timeoutMs: 20_000, ...options });

  it('passes input on stdin and returns both streams, the exit code and no flags', async () => {
    const r = await sh('tr a-z A-Z; echo oops >&2; exit 3', { input: 'hello' });
    expect(r).toMatchObject({ exitCode: 3, signal: null, stdout: 'HELLO', stderr: 'oops\n', timedOut: false, aborted: false, outputExceeded: false });
    expect(r.spawnError).toBeUndefined();
  });

  it('gives a child with no input /dev/null, which it may open as /dev/stdin too', async () => {
    const none = await sh('cat /dev/stdin; echo "read $?"');
    expect(none).toMatchObject({ exitCode: 0, stdout: 'read 0\n', stderr: '' });
  });

  it('reports a program that cannot start, and a bad argument, without throwing', async () => {
    const missing = await runChild(['/nonexistent/quickloop-cli'], { cwd, timeoutMs: 5000 });
    expect(missing).toMatchObject({ exitCode: null, spawnError: { code: 'ENOENT' } });
    const nul = await runChild(['echo', 'a\0b'], { cwd, timeoutMs: 5000 });
    expect(nul.exitCode).toBeNull();
    expect(nul.spawnError?.code).toBe('ERR_INVALID_ARG_VALUE');
  });

  it('in kill mode ends the whole group once a stream passes its bound', async () => {
    const r = await sh('(trap "" TERM; sleep 30) & yes quickloop', { maxOutputBytes: 64 * 1024, killGraceMs: 50 });
    expect(r.outputExceeded).toBe(true);
    expect(r.timedOut).toBe(false);
    expect(r.stdout.length).toBeLessThanOrEqual(64 * 1024);
  });

  it('in tail mode lets the child finish and keeps the last bytes, a cut character as U+FFFD', async () => {
    // 3 bytes per é: 5 bytes of tail start inside a character.
    const r = await sh('printf "start"; for i in $(seq 2000); do printf "é"; done; printf "end"', { maxOutputBytes: 8, overflow: 'tail' });
    expect(r.exitCode).toBe(0);
    expect(r.outputExceeded).toBe(true);
    expect(r.stdout).toBe('\uFFFDééend'.slice(-6));
    expect(Buffer.byteLength(r.stdout)).toBeGreaterThan(0);
  });

  it('in tail mode keeps 64 KiB of stderr whatever the stdout bound, and a long stderr alone is no exceeded output', async () => {
    // A short stdout bound must not cut a CLI's error message.
    const small = await sh('printf 0123456789abcdef; echo "Error: 429 Too Many Requests, retry later" >&2; exit 1', { maxOutputBytes: 8, overflow: 'tail' });
    expect(small).toMatchObject({ exitCode: 1, stdout: '89abcdef', stderr: 'Error: 429 Too Many Requests, retry later\n', outputExceeded: true });
    // 100 000 bytes of stderr and a short stdout: the last 64 KiB of stderr are kept, and stdout was not cut.
    const noisy = await sh('head -c 100000 /dev/zero | tr "\\0" e >&2; echo ok', { maxOutputBytes: 1024, overflow: 'tail' });
    expect(noisy).toMatchObject({ exitCode: 0, stdout: 'ok\n', outputExceeded: false });
    expect(noisy.stderr).toBe('e'.repeat(64 * 1024));
  });

  it('in tail mode with a bound of 0 keeps nothing of stdout, and does not throw', async () => {
    const r = await sh('echo out; echo err >&2', { maxOutputBytes: 0, overflow: 'tail' });
    expect(r).toMatchObject({ exitCode: 0, stdout: '', stderr: 'err\n', outputExceeded: true });
  });

  it('takes a deadline longer than one timer holds (about 24.8 days), or Infinity, as far off rather than as now', async () => {
    for (const timeoutMs of [2 ** 31, 30 * 24 * 3600 * 1000, Number.POSITIVE_INFINITY]) {
      const r = await sh('sleep 0.1; echo ok', { timeoutMs });
      expect(r, String(timeoutMs)).toMatchObject({ exitCode: 0, stdout: 'ok\n', timedOut: false });
    }
  });

  it('on timeout ends the tree, SIGTERM-ignoring grandchild included', async () => {
    const r = await sh('bash -c \'trap "" TERM; while :; do sleep 0.05; done\' & echo $$; wait', { timeoutMs: 300, killGraceMs: 50 });
    expect(r.timedOut).toBe(true);
    // The leader's pid is the group's id; a killed orphan may stay a zombie here, which runs nothing.
    expect(groupRunning(Number(r.stdout.trim()))).toBe(false);
  });

  it('a child that exits before its deadline has not timed out, however long its leftovers take to end', async () => {
    // A helper left in the group that ignores SIGTERM outlives the deadline by the grace...
    const helper = await sh('(trap "" TERM; sleep 30) & sleep 0.1; echo done', { timeoutMs: 600, killGraceMs: 1500 });
    expect(helper).toMatchObject({ exitCode: 0, signal: null, timedOut: false, stdout: 'done\n' });
    // ...and so does the wait on a pipe that a process outside the group holds.
    const outside = await sh('setsid sleep 30 & echo $!; sleep 0.1; echo done', { timeoutMs: 600, killGraceMs: 1500 });
    try {
      expect(outside).toMatchObject({ exitCode: 0, timedOut: false });
      expect(outside.stdout).toContain('done');
    } finally {
      process.kill(Number(outside.stdout.split('\n')[0]), 'SIGKILL');
    }
  });

  it('an abort, even one signalled before the start, ends the tree and says so', async () => {
    const before = new AbortController();
    before.abort();
    const r1 = await sh('sleep 30', { signal: before.signal, killGraceMs: 0 });
    expect(r1.aborted).toBe(true);
    const during = new AbortController();
    setTimeout(() => during.abort(), 100);
    const r2 = await sh('sleep 30', { signal: during.signal, killGraceMs: 50 });
    expect(r2).toMatchObject({ aborted: true, timedOut: false });
  });

  it('starts nothing for a signal that was aborted before the call', async () => {
    // Started and then ended, `touch` sometimes got to create its file first.
    const dir = mkdtempSync(join(tmpdir(), 'runchild-abort-'));
    try {
      for (let i = 0; i < 10; i++) {
        const before = new AbortController();
        before.abort();
        const r = await runChild(['touch', join(dir, `ran-${i}`)], { cwd, timeoutMs: 5000, signal: before.signal, killGraceMs: 0 });
        expect(r).toMatchObject({ aborted: true, timedOut: false, exitCode: null, signal: null, stdout: '', stderr: '' });
        expect(r.spawnError).toBeUndefined();
      }
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ends the helpers a child leaves in its group, and does not wait on a pipe held outside it', async () => {
    // `sleep &` stays in the group and holds stdout; the setsid one leaves the group and holds stderr.
    const r = await sh('echo $$; sleep 30 & setsid sleep 30 >&2 & echo $!; sleep 0.3; echo done', { killGraceMs: 50 });
    const [leader, outside] = r.stdout.split('\n').map(Number);
    try {
      expect(r.exitCode).toBe(0);
      expect(r.timedOut).toBe(false);
      expect(groupRunning(leader!)).toBe(false);
      expect(r.stdout).toContain('done');
    } finally {
      process.kill(outside!, 'SIGKILL');
    }
  });
});

describe('runChild, from a process of its own', () => {
  it('leaves nothing that keeps the process alive once the call is done', async () => {
    // A timer left behind would hold the caller's event loop open for the grace.
    // A child that closes its output before it exits makes Node report both ends in one go.
    const script = `import { runChild } from ${JSON.stringify(new URL('../dist/process-group.js', import.meta.url).pathname)};
await runChild(['bash', '-c', 'exec >&- 2>&-; sleep 0.1'], { cwd: '/', timeoutMs: 60000, killGraceMs: 5000 });
await new Promise((resolve) => setImmediate(resolve));
console.log(JSON.stringify(process.getActiveResourcesInfo().filter((r) => r === 'Timeout')));`;
    const r = await runChild([process.execPath, '--input-type=module', '-e', script], { cwd: process.cwd(), timeoutMs: 120_000 });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
  });
});

describe('runChild, out of file descriptors', () => {
  it('reports a spawn that fails for want of descriptors (EMFILE) rather than rejecting or crashing', async () => {
    // Each round fills the descriptor table, frees a few (never enough for spawn's pipes at first), and runs `true`.
    const script = `import { openSync, closeSync } from 'node:fs';
import { runChild } from ${JSON.stringify(new URL('../dist/process-group.js', import.meta.url).pathname)};
const seen = [];
for (let spare = 0; spare <= 12; spare++) {
  const fds = [];
  try { for (;;) fds.push(openSync('/dev/null', 'r')); } catch {}
  for (let i = 0; i < spare; i++) closeSync(fds.pop());
  const r = await runChild(['true'], { cwd: '/', timeoutMs: 5000 }).catch((e) => ({ rejected: String(e) }));
  for (const fd of fds) closeSync(fd);
  seen.push(r.rejected ?? r.spawnError?.code ?? r.exitCode);
}
console.log(JSON.stringify(seen));`;
    const r = await runChild(['bash', '-c', 'ulimit -n 256 && exec "$0" --input-type=module -e "$1"', process.execPath, script], { cwd: process.cwd(), timeoutMs: 20_000 });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const seen = JSON.parse(r.stdout) as unknown[];
    expect(seen).toContain('EMFILE');
    expect(seen.every((s) => s === 0 || s === 'EMFILE'), r.stdout).toBe(true);
  });
});

describe('runChild: a leading BOM', () => {
  it('is dropped by default and kept with keepBom, as Python’s utf-8 text mode keeps it', async () => {
    const argv = [process.execPath, '-e', "process.stdout.write('\\ufeffhi'); process.stderr.write('\\ufeffoh')"];
    const plain = await runChild(argv, { cwd: tmpdir(), timeoutMs: 30_000 });
    expect([plain.stdout, plain.stderr]).toEqual(['hi', 'oh']);
    const kept = await runChild(argv, { cwd: tmpdir(), timeoutMs: 30_000, keepBom: true });
    expect([kept.stdout, kept.stderr]).toEqual(['\ufeffhi', '\ufeffoh']);
  });
});
