// The attempt process (bin/attempt.js) as `qs run` starts it, in what a process per stage met: an interrupt
// during setup, qs gone before the attempt ended, a long command line, a second Ctrl-C, a SIGKILL.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { attemptArgv } from './attempt.js';
import { qsEnv, runNodeBin, runQs } from './testing/qs-bin.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ATTEMPT = join(ROOT, 'packages', 'qs', 'bin', 'attempt.js');
const VALIDATE = join(ROOT, 'packages', 'qs-validate', 'bin', 'qs-validate.js');
const DOCS = `https://docs.greeter.test/=${join(ROOT, 'fixtures', 'docs-site')}`;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A temporary folder (removed after the test) with a `tmp` inside, for the sandboxes' TMPDIR. */
function scratch(prefix: string): { dir: string; tmp: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp);
  return { dir, tmp };
}

/** Writes a task whose replay is `replay` (and setup `setup`, when given); returns its path. */
function taskFile(dir: string, replay: string, setup?: string): string {
  const path = join(dir, 'task.yaml');
  writeFileSync(path, ['name: waits', 'goal: Wait.', 'docs:', '  path:', '    - https://docs.greeter.test/install.html', ...(setup ? ['setup:', `  - ${setup}`] : []), 'replay:', `  - ${replay}`, 'success:', '  script: |', '    test -d .', ''].join('\n'));
  return path;
}

/** The task's task.loaded line, as qs-validate writes it. */
async function taskLine(dir: string, replay: string, setup?: string): Promise<string> {
  const loaded = await runNodeBin(VALIDATE, [taskFile(dir, replay, setup), '--no-config', '-q'], dir);
  expect(loaded.code).toBe(0);
  return loaded.out;
}

/** Resolves, with all that was read, once `stream` has said every one of `needles`. */
function until(stream: Readable, ...needles: string[]): Promise<string> {
  let seen = '';
  return new Promise((resolve) => {
    stream.on('data', (c: Buffer) => {
      seen += c.toString();
      if (needles.every((n) => seen.includes(n))) resolve(seen);
    });
  });
}

const quickloopFolders = (tmp: string): string[] => readdirSync(tmp).filter((n) => n.startsWith('quickloop-'));
const argvOf = { 'qs-sandbox': ['--backend', 'bwrap'], 'qs-agent': ['--agent', 'replay', '--docs-map', DOCS], 'qs-check': [] };

describe('an interrupt during setup', () => {
  it('says nothing of a sandbox that could not be made: it was made, and its run was interrupted', async () => {
    const { dir, tmp } = scratch('qs-attempt-setup-');
    const line = await taskLine(dir, 'echo hi', 'sleep 600');
    const child = spawn(process.execPath, [ATTEMPT, ...attemptArgv(argvOf, false)], { cwd: dir, env: qsEnv({ TMPDIR: tmp }), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | string>((resolve) => child.once('close', (code, signal) => resolve(code ?? String(signal))));
    child.stdin.end(line);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await until(child.stdout, '"setup.started"');
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(err).not.toContain('cannot make a sandbox');
    expect(quickloopFolders(tmp)).toEqual([]);
    // The run ends as interrupted, in the stream: not as an incomplete one whose agent vanished.
    const ends = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { type: string; stop_reason?: string });
    expect(ends.filter((e) => e.type === 'agent.completed').map((e) => e.stop_reason)).toEqual(['interrupted']);
    expect(ends.filter((e) => e.type.startsWith('run.')).map((e) => e.type)).toEqual(['run.interrupted']);
  });
});

describe('the attempt process after qs has gone', () => {
  it('still ends its run and removes its sandbox when its stdout and stderr are closed before an interrupt', async () => {
    const { dir, tmp } = scratch('qs-attempt-orphan-');
    const line = await taskLine(dir, 'sleep 600');
    const child = spawn(process.execPath, [ATTEMPT, ...attemptArgv(argvOf, true)], { cwd: dir, env: qsEnv({ TMPDIR: tmp }), stdio: ['pipe', 'pipe', 'pipe', 'pipe'], detached: true });
    const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? String(signal))));
    child.stdin.end(line);
    // The replay's command is running once its tool.call is out.
    await until(child.stdout, '"sleep 600"', '"tool.call"');
    expect(quickloopFolders(tmp)).toHaveLength(1);
    // qs exits: every pipe it read closes, then the one SIGINT it had passed on arrives.
    for (const p of [child.stdout, child.stderr, child.stdio[3] as Readable]) p.destroy();
    child.kill('SIGINT');
    const code = await exited;
    expect(quickloopFolders(tmp)).toEqual([]);
    expect(code).toBe(130);
  });
});

describe('the sandbox folders an attempt is done with', () => {
  it('are left for qs, named in the report after the verdict is out, and still there when the process has ended', async () => {
    const { dir, tmp } = scratch('qs-attempt-leave-');
    const line = await taskLine(dir, 'echo hi > made.txt');
    const child = spawn(process.execPath, [ATTEMPT, ...attemptArgv(argvOf, true)], { cwd: dir, env: qsEnv({ TMPDIR: tmp }), stdio: ['pipe', 'pipe', 'ignore', 'pipe'], detached: true });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    let reported = '';
    (child.stdio[3] as Readable).on('data', (c: Buffer) => (reported += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    child.stdin.end(line);
    expect(await exited).toBe(0);
    const report = JSON.parse(reported) as { codes: number[]; remove: string[] };
    expect(report.codes).toEqual([0, 0, 0]);
    const ready = out.split('\n').filter((l) => l.includes('"sandbox.ready"')).map((l) => JSON.parse(l) as { root: string });
    expect(ready).toHaveLength(1);
    expect(report.remove).toEqual([ready[0]?.root]);
    expect(existsSync(join(ready[0]?.root as string, 'workspace', 'made.txt'))).toBe(true);
    expect(out).toContain('"run.completed"');
  });

  it('are removed by qs run itself by the time it exits', async () => {
    const { dir, tmp } = scratch('qs-attempt-left-');
    const r = await runQs(['run', taskFile(dir, 'echo hi > made.txt'), '--repeat', '3', '--no-config', '-q', '--docs-map', DOCS], dir, { TMPDIR: tmp });
    expect(r.code).toBe(0);
    expect(r.out.match(/"run\.completed"/g)).toHaveLength(3);
    expect(quickloopFolders(tmp)).toEqual([]);
  });
});

describe('a long command line', () => {
  it('runs as it did with a process per stage: no one argument of the attempt is over the kernel\'s limit for one (128 KiB)', async () => {
    const { dir } = scratch('qs-attempt-argv-');
    // 2,000 maps of 75 bytes: 150 KB in all, each well under the limit for one argument.
    const maps = Array.from({ length: 2000 }, (_, i) => ['--docs-map', `https://docs-${String(i).padStart(4, '0')}.example.test/=${join(ROOT, 'fixtures', 'docs-site')}`]).flat();
    const r = await runQs(['run', '--example', 'greeter', '--no-config', '-q', ...maps], dir, { TMPDIR: dir });
    expect(r.err).not.toContain('E2BIG');
    expect(r.code).toBe(0);
  });
});

describe('a second Ctrl-C while qs-validate reads a long list of tasks', () => {
  it('ends qs at once, as when qs-validate was a process of its own', async () => {
    const { dir } = scratch('qs-validate-int-');
    const tasks = join(dir, 'tasks');
    mkdirSync(tasks);
    const files = 200;
    for (let i = 0; i < files; i++) {
      writeFileSync(join(tasks, `t${String(i).padStart(4, '0')}.yaml`), [`name: t${i}`, 'goal: Wait.', 'docs:', '  path:', '    - https://docs.greeter.test/install.html', 'replay:', '  - echo hi', 'success:', '  script: |', '    test -f x', ''].join('\n'));
    }
    const child = spawn(process.execPath, [join(ROOT, 'packages', 'qs', 'bin', 'qs.js'), 'run', tasks, '--no-config'], { cwd: dir, env: qsEnv({ TMPDIR: dir }), stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    // The first file is read: validation is under way, with the rest of the list to go.
    await until(child.stderr, 'ok  ');
    child.kill('SIGINT');
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    // Ended before the list was: the last file was never reached.
    expect(err).not.toContain(`t${String(files - 1).padStart(4, '0')}.yaml`);
  });
});

describe('an attempt process that dies', () => {
  it('is recorded as such, and qs removes the sandbox folder it left (SIGKILL: nothing of it ran to its end)', async () => {
    const { dir, tmp } = scratch('qs-attempt-killed-');
    const child = spawn(process.execPath, [join(ROOT, 'packages', 'qs', 'bin', 'qs.js'), 'run', taskFile(dir, 'sleep 600'), '--no-config', '-q', '--docs-map', DOCS], { cwd: dir, env: qsEnv({ TMPDIR: tmp }), stdio: ['ignore', 'pipe', 'ignore'] });
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await until(child.stdout, '"sleep 600"', '"tool.call"');
    const ready = out.split('\n').map((l) => (l.startsWith('{') ? (JSON.parse(l) as { type: string; root?: string }) : null)).find((e) => e?.type === 'sandbox.ready');
    expect(ready?.root).toMatch(/quickloop-/);
    // qs's one child is the attempt process (the stages' own children are its).
    const attempt = readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .find((p) => {
        try {
          return readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]?.split(' ')[1] === String(child.pid) && readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('attempt.js');
        } catch {
          return false;
        }
      });
    expect(attempt).toBeDefined();
    // The session its agent runs in has a support folder named as the attempt's.
    const parent = process.getuid?.() === 0 ? '/tmp' : tmp;
    const supportOf = (pid: string): string[] =>
      readdirSync(parent)
        .filter((n) => n.startsWith('quickloop-proxy-'))
        .filter((n) => {
          try {
            return readFileSync(join(parent, n, 'owner'), 'utf8').startsWith(`${pid} `);
          } catch {
            return false;
          }
        });
    const named = supportOf(attempt as string);
    expect(named.length).toBeGreaterThan(0);
    process.kill(Number(attempt), 'SIGKILL');
    expect(await exited).toBe(2);
    const failed = out.split('\n').filter((l) => l.includes('"run.failed"')).map((l) => JSON.parse(l) as { failed_stage: string; error: string });
    expect(failed).toEqual([expect.objectContaining({ failed_stage: 'qs', error: "the attempt's process ended (SIGKILL) before its stages reported" })]);
    expect(existsSync(ready?.root as string)).toBe(false);
    // Nor the support folder of its session; a root harness keeps it under /tmp, another under its TMPDIR.
    for (const n of named) expect(existsSync(join(parent, n))).toBe(false);
  });
});
