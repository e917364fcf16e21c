// The real built binary on real pipes, and the README's examples run as written.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, editedTask, parseOut, pidsWith, REPO, stream, type OutEvent } from './testing.js';

const BIN = fileURLToPath(new URL('../bin/qs-sandbox.js', import.meta.url));
const PATH = `${REPO}node_modules/.bin:${process.env.PATH ?? ''}`;
const made: OutEvent[][] = [];
const scratches: string[] = [];
afterEach(() => {
  for (const events of made.splice(0)) cleanup(events);
  for (const dir of scratches.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A temp folder for workspaces a test cannot see in the output; removed after the test. */
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'qs-sandbox-test-'));
  scratches.push(dir);
  return dir;
}

function bin(args: string[], input: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH, LANG: 'C.UTF-8' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
    child.stdin.end(input);
  });
}

describe('qs-sandbox binary', () => {
  it('emits events on stdout only and a summary line on stderr', async () => {
    const r = await bin([], stream('setup.ndjson'));
    const events = parseOut(r.out);
    made.push(events);
    expect(r.code).toBe(0);
    expect(events.map((e) => e.type)).toEqual(['task.loaded', 'sandbox.ready', 'setup.started', 'setup.completed', 'setup.started', 'setup.completed', 'sandbox.usage']);
    expect(r.err).toMatch(/^qs-sandbox: greeter-setup: ready \(bwrap\) \/.+\/workspace\n$/);
  });

  it('exits 3 with one line for a refused local backend', async () => {
    const r = await bin(['--backend', 'local'], stream('setup.ndjson'));
    expect(r.code).toBe(3);
    expect(r.out).toBe('');
    expect(r.err).toBe('qs-sandbox: the local backend enforces nothing (no filesystem, network or process limits); pass --allow-unenforced to use it\n');
  });

  it('--max-processes, --max-memory, --max-tmp and --max-shm set the limits sandbox.ready lists (and the later stages take); a bad one is exit 3 naming it', async () => {
    const r = await bin(['--max-processes', '2048', '--max-memory', '6G', '--max-tmp', '2G', '--max-shm', '64M'], stream('setup.ndjson'));
    const events = parseOut(r.out);
    made.push(events);
    expect(r.code, r.err).toBe(0);
    const limits = Object.fromEntries(((events.find((e) => e.type === 'sandbox.ready') as { limits?: Array<{ name: string; value: number }> }).limits ?? []).map((l) => [l.name, l.value]));
    expect(limits).toEqual({ processes: 2048, memory: 6 * 1024 ** 3, '/tmp': 2 * 1024 ** 3, '/var/tmp': 2 * 1024 ** 3, '/dev/shm': 64 * 1024 ** 2 });
    for (const [flag, value, said] of [
      ['--max-processes', '8', '--max-processes 8: not a whole number of at least 16'],
      ['--max-processes', 'lots', '--max-processes lots: not a whole number of at least 16'],
      ['--max-memory', '10M', '--max-memory 10M: not a size of at least 64M (a number of bytes, or with K, M, G or T: 500M, 5G)'],
      ['--max-shm', 'big', '--max-shm big: not a size of at least 1M (a number of bytes, or with K, M, G or T: 500M, 5G)'],
    ] as const) {
      const bad = await bin([flag, value], stream('setup.ndjson'));
      expect(bad.code, flag).toBe(3);
      expect(bad.out, flag).toBe('');
      expect(bad.err, flag).toBe(`qs-sandbox: ${said}\n`);
    }
  });

  it('exits 3 naming the line of a bad input', async () => {
    const r = await bin([], 'not json\n');
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/^qs-sandbox: stdin:1: not JSON/);
  });

  it('ends quietly with 0 when the reader goes away', () => {
    const base = scratch();
    const r = spawnSync('bash', ['-o', 'pipefail', '-c', `node ${BIN} --base-dir ${base} < ${REPO}fixtures/streams/qs-sandbox/two-tasks.ndjson | head -1 >/dev/null`], { env: { PATH }, encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).not.toMatch(/EPIPE|error/i);
    expect(r.status).toBe(0);
  });
  it('on SIGINT kills the running setup command and everything in its sandbox, and exits 130', async () => {
    const base = scratch();
    const tag = `qs-sigint-${process.pid}-${Date.now()}`;
    const input = editedTask((e) => {
      e.task.setup = [`bash -c 'exec -a ${tag}-plain sleep 300' & setsid -f bash -c 'exec -a ${tag}-daemon sleep 300'; wait`];
    });
    const child = spawn(process.execPath, [BIN, '--base-dir', base], { env: { PATH }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    const started = new Promise<void>((resolve) => {
      child.stdout.on('data', (c) => {
        out += c;
        if (out.includes('"setup.started"')) resolve();
      });
    });
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.stdin.end(input);
    await started;
    // Both sleeps exist before the signal (so the check below means something).
    while (pidsWith(`${tag}-plain`, true).length + pidsWith(`${tag}-daemon`, true).length < 2) await new Promise((r) => setTimeout(r, 10));
    child.kill('SIGINT');
    expect(await closed).toBe(130);
    expect(pidsWith(tag)).toEqual([]);
    expect(parseOut(out).map((e) => e.type)).toEqual(['task.loaded', 'sandbox.ready', 'setup.started', 'setup.completed', 'sandbox.usage']);
  });
});

describe('README examples', () => {
  const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
  const section = readme.slice(readme.indexOf('## Examples'));
  const examples = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => (m[1] ?? '').split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#')));

  it('has examples to run', () => {
    expect(examples.length).toBeGreaterThanOrEqual(3);
  });

  for (const example of examples) {
    it(example, () => {
      // TMPDIR holds the workspaces an example makes, so they are removed even when its output is only a count.
      const r = spawnSync('bash', ['-o', 'pipefail', '-c', example], { cwd: REPO, env: { PATH, LANG: 'C.UTF-8', TMPDIR: scratch() }, encoding: 'utf8', timeout: 30_000 });
      expect(r.stderr).not.toMatch(/internal error/);
      expect(r.status).toBe(0);
      expect(r.stdout.trim()).not.toBe('');
    });
  }
});
