// The enforced backend for a harness that is not root: a real unprivileged process (uid 65533 when the
// test runs as root, the test's own uid otherwise) opens a bwrap sandbox and tries to get out of it.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleLibraryInto, marker, pidsWith, runHarness } from './test-helpers.js';

/**
 * Not 65534: a root harness runs every sandbox as 65534, and the process rlimit an unprivileged
 * harness falls back to counts every process of its uid on the host (a fork bomb in a parallel test
 * file would starve it).
 */
const NOBODY = 65533;

/** Runs in the unprivileged process: opens the sandbox, runs each command, prints one JSON object. */
const PROBE = `
import { openSandbox } from './sandbox.mjs';
const [base, commands] = [process.argv[2], JSON.parse(process.argv[3])];
const events = [];
const policy = { explicit: [], docs_hosts: ['docs.example.com'], registries: [], registries_source: 'default' };
const sb = await openSandbox({ policy, backend: 'auto', baseDir: base, onEgress: (e) => events.push(e) });
const results = [];
for (const c of commands) results.push(await sb.exec(c, { timeoutMs: 20000 }));
const closed = await sb.close();
console.log(JSON.stringify({ described: sb.describe(), results, events, closed }));
`;

/** Runs in the unprivileged process: a harness service on a Unix socket, forwarded into the sandbox. */
const FORWARD = `
import { createServer } from 'node:http';
import { join } from 'node:path';
import { openSandbox } from './sandbox.mjs';
const base = process.argv[2];
const socketPath = join(base, 'svc.sock');
const svc = createServer((req, res) => res.end('svc ' + req.url));
await new Promise((resolve) => svc.listen(socketPath, resolve));
const policy = { explicit: [], docs_hosts: [], registries: [], registries_source: 'default' };
const sb = await openSandbox({ policy, backend: 'auto', baseDir: base, forwards: [{ name: 'svc', port: 3129, socketPath }] });
const r = await sb.exec('curl -s http://127.0.0.1:3129/in', { timeoutMs: 20000 });
await sb.close();
svc.close();
console.log(JSON.stringify({ described: sb.describe(), output: r.output }));
`;

let dir: string;
let secret: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'qs-unpriv-'));
  // The unprivileged user may not be able to read the checkout (a clone under a 0700 folder), so the
  // library goes with the probe as one file it owns.
  await bundleLibraryInto(dir);
  const home = join(dir, 'home');
  mkdirSync(home);
  secret = join(home, 'secret.txt');
  writeFileSync(secret, 'TOPSECRET\n', { mode: 0o644 });
  writeFileSync(join(dir, 'probe.mjs'), PROBE);
  writeFileSync(join(dir, 'forward.mjs'), FORWARD);
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, dir]);
  else chownSync(dir, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function probe(commands: string[]): Promise<{ described: Record<string, unknown>; results: Array<{ exitCode: number; output: string }>; events: Array<Record<string, unknown>>; closed: { leftRunning: string[] } }> {
  return runHarness(join(dir, 'probe.mjs'), [dir, JSON.stringify(commands)], { cwd: dir, uid: NOBODY, env: { HOME: join(dir, 'home') } }).then((r) => {
    if (r.code !== 0) throw new Error(`the unprivileged harness exited ${r.code}: ${r.err.trim()}`);
    return JSON.parse(r.out);
  });
}

describe('bwrap backend, unprivileged harness', () => {
  it('is picked by auto and enforces the same limits: writes, home, network, processes', async () => {
    const daemon = marker('unpriv-daemon');
    const r = await probe([
      'echo hi > f && cat f && echo x > ../home/h && echo home-writable',
      'touch /usr/qs-escape',
      `cat '${secret}'`,
      'curl -sS --max-time 10 https://not-allowed.example.com/',
      'curl -sS --max-time 10 http://docs.example.com/start',
      `setsid -f bash -c 'exec -a ${daemon} sleep 300' >/dev/null 2>&1; echo started`,
      'grep CapEff /proc/self/status',
      `cat $(printf '../%.0s' $(seq 24))root/.npmrc; echo pwned > $(printf '../%.0s' $(seq 24))tmp/qs-unpriv-pwned; unshare -r true; echo unshare=$?`,
    ]);
    expect(r.described).toMatchObject({ backend: 'bwrap', enforced: true });
    // No cgroup can be made by this user here: the limits fall back to rlimits, and say so.
    const limits = r.described.limits as Array<{ name: string; enforced_by: string; scope: string }>;
    expect(limits.find((l) => l.name === 'processes')).toMatchObject({ enforced_by: expect.stringMatching(/^(rlimit|cgroup_v2)$/) });
    expect(limits.find((l) => l.name === 'memory')).toMatchObject({ enforced_by: expect.stringMatching(/^(rlimit|cgroup_v2)$/) });
    expect(limits.every((l) => l.enforced_by !== 'none')).toBe(true);
    const [write, outside, home, blocked, docs, daemonised, caps, climb] = r.results;
    // `..` from the workspace climbs the sandbox's own tree: the host's /root and /tmp are not there.
    expect(climb?.output).toMatch(/unshare=1\n$/);
    expect(existsSync('/tmp/qs-unpriv-pwned')).toBe(false);
    expect(write).toMatchObject({ exitCode: 0, output: 'hi\nhome-writable\n' });
    expect(outside?.output).toMatch(/Read-only file system/);
    expect(outside?.denials).toEqual([expect.objectContaining({ path: '/usr/qs-escape', operation: 'write', reason: 'read_only' })]);
    expect(home?.exitCode).not.toBe(0);
    expect(home?.output).not.toContain('TOPSECRET');
    expect(home?.denials).toEqual([expect.objectContaining({ path: secret, operation: 'read', reason: 'hidden' })]);
    expect(blocked?.output).toMatch(/403/);
    expect(docs?.output).toMatch(/use read_docs/);
    expect(daemonised?.output).toBe('started\n');
    expect(caps?.output).toMatch(/CapEff:\s+0000000000000000/);
    expect(r.events).toContainEqual(expect.objectContaining({ type: 'egress.blocked', host: 'not-allowed.example.com', reason: 'not_allowlisted' }));
    expect(r.events).toContainEqual(expect.objectContaining({ type: 'egress.blocked', host: 'docs.example.com', reason: 'docs_host' }));
    // The harness has closed the sandbox and exited: the daemon did not outlive its stage, and was named.
    expect(r.closed.leftRunning).toEqual([`${daemon} 300`]);
    expect(pidsWith(daemon)).toEqual([]);
  });

  it('forwards a harness socket of its own to the port inside', async () => {
    const r = await runHarness(join(dir, 'forward.mjs'), [dir], { cwd: dir, uid: NOBODY, env: { HOME: join(dir, 'home') } });
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { described: { forwards: unknown }; output: string };
    expect(out.described.forwards).toEqual([{ name: 'svc', port: 3129 }]);
    expect(out.output).toBe('svc /in');
  });
});
