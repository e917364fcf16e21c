// Test helpers: find host processes by a marker in their argv, a policy builder, and a harness of its own for unprivileged runs. Not exported by the package.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';
import type { EgressPolicy } from './types.js';

/** Host pids whose command line contains `marker`: what survives is seen from outside every namespace. */
export function pidsWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1];
      if (cmdline.includes(marker) && state !== 'Z') found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

export function policy(p: Partial<EgressPolicy> = {}): EgressPolicy {
  return { explicit: [], docs_hosts: [], registries: [], registries_source: 'default', ...p };
}

/** A marker unique to one test run, so parallel test files never see each other's processes. */
export function marker(label: string): string {
  return `qs-${label}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * Writes the built library into `dir` as one file (`sandbox.mjs`): an unprivileged user may not be
 * able to read the checkout (a clone under a 0700 folder), but it can read what it is given.
 */
export async function bundleLibraryInto(dir: string): Promise<void> {
  const bundle = await rolldown({ input: fileURLToPath(new URL('../dist/index.js', import.meta.url)), platform: 'node', logLevel: 'silent' });
  await bundle.write({ dir, entryFileNames: 'sandbox.mjs', format: 'esm', codeSplitting: false });
  await bundle.close();
}

/** Runs a harness script with node, as `uid` when the test runs as root; resolves with its exit code and output. */
export function runHarness(script: string, args: string[], opts: { cwd: string; uid?: number; env?: Record<string, string> }): Promise<{ code: number | null; out: string; err: string }> {
  const node = ['node', script, ...args];
  const argv = opts.uid !== undefined && process.getuid?.() === 0 ? ['setpriv', `--reuid=${opts.uid}`, `--regid=${opts.uid}`, '--clear-groups', '--', ...node] : node;
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] as string, argv.slice(1), { cwd: opts.cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

/**
 * Made in `dir` with openssl (it ships with Debian and Ubuntu): a private CA, a certificate for
 * 127.0.0.1 it signed with that key, and a second CA that signed nothing here.
 */
export function testCertificates(dir: string): { ca: string; key: Buffer; cert: Buffer; otherCa: string } {
  const ssl = (...args: string[]) => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl ${args[0]}: ${r.stderr}`);
  };
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=quickloop test CA');
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'host.key', '-out', 'host.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  ssl('x509', '-req', '-in', 'host.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'host.pem', '-days', '2', '-extfile', 'ext.cnf');
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'other.key', '-out', 'other.pem', '-days', '2', '-subj', '/CN=another CA');
  return { ca: readFileSync(join(dir, 'ca.pem'), 'utf8'), key: readFileSync(join(dir, 'host.key')), cert: readFileSync(join(dir, 'host.pem')), otherCa: readFileSync(join(dir, 'other.pem'), 'utf8') };
}

/** Temp folders named `prefix…` under the temp dir; `cleanup` (for afterEach) removes each one made so far. */
export function tempFolders(prefix: string): { temp: () => string; cleanup: () => void } {
  const made: string[] = [];
  return {
    temp: () => {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    cleanup: () => {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}
