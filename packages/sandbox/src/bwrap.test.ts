// Acceptance of the enforced backend: real bubblewrap, real processes, a real registry. Fails (never
// skips) where bwrap is missing: CI installs it, and a silent skip would hide an unenforced sandbox.
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bwrapUnavailable, ENDED_EXIT, ENDED_OUTPUT, endedIfNotEntered } from './backends/bwrap.js';
import { removeLayout } from './layout.js';
import { openSandbox } from './open.js';
import { marker, pidsWith, policy } from './test-helpers.js';
import type { EgressEvent, EgressPolicy, OpenOptions, Sandbox } from './types.js';

const open: Sandbox[] = [];
const events: EgressEvent[] = [];
let registryHost: string;

beforeAll(() => {
  const problem = bwrapUnavailable();
  if (problem) throw new Error(`the enforced backend cannot run here: ${problem}`);
  // The registry is whatever npm is configured with: never a host name written in the repo.
  registryHost = new URL(execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim()).hostname;
});

afterEach(async () => {
  events.length = 0;
  for (const sb of open.splice(0)) {
    await sb.close();
    removeLayout(sb.describe());
  }
});

async function enforced(p: EgressPolicy = policy(), more: Partial<OpenOptions> = {}): Promise<Sandbox> {
  const sb = await openSandbox({ policy: p, backend: 'bwrap', onEgress: (e) => events.push(e), ...more });
  open.push(sb);
  return sb;
}

describe('bwrap backend', () => {
  it('describes itself as enforced', async () => {
    const d = (await enforced()).describe();
    expect(d).toMatchObject({ backend: 'bwrap', enforced: true });
    expect(d.reason).toMatch(/bwrap|bubblewrap/);
  });

  it('auto picks bwrap here and says why', async () => {
    const sb = await openSandbox({ policy: policy(), backend: 'auto' });
    open.push(sb);
    expect(sb.describe()).toMatchObject({ backend: 'bwrap', enforced: true });
    expect(sb.describe().reason).toMatch(/^auto: /);
  });

  it('cuts long output between characters, never inside one: what a model is sent is text', async () => {
    const r = await (await enforced()).exec(`for i in $(seq 1 300); do printf '\\360\\237\\214\\215'; done; echo; echo done`, { maxOutputChars: 101 });
    expect(r.truncated).toBe(true);
    expect(r.output.isWellFormed(), JSON.stringify(r.output)).toBe(true);
    expect(r.output.endsWith('🌍\ndone\n')).toBe(true);
  });

  it('gives a command real pipes: /dev/stdout and /dev/stderr open, as under any shell, and no denial is recorded', async () => {
    const sb = await enforced();
    const r = await sb.exec('echo one > /dev/stdout; echo two > /dev/stderr; echo three | tee /dev/stderr > /dev/null; [ -p /dev/stdout ] && echo pipe');
    expect(r).toMatchObject({ exitCode: 0, denials: [] });
    // Two pipes: each keeps its own order, but which one is read first when both have data is the scheduler's.
    const lines = r.output.split('\n').filter(Boolean);
    expect([...lines].sort()).toEqual(['one', 'pipe', 'three', 'two']);
    expect(lines.filter((l) => l === 'one' || l === 'pipe')).toEqual(['one', 'pipe']);
    expect(lines.filter((l) => l === 'two' || l === 'three')).toEqual(['two', 'three']);
  });

  it('lets commands write in the workspace, home and tmp, and the host sees it', async () => {
    const sb = await enforced();
    const d = sb.describe();
    const r = await sb.exec('echo w > w.txt && echo h > "$HOME/h.txt" && echo t > "$TMPDIR/t.txt" && pwd');
    expect(r).toMatchObject({ exitCode: 0, output: `${d.workspace}\n` });
    expect(readFileSync(join(d.workspace, 'w.txt'), 'utf8')).toBe('w\n');
    expect(readFileSync(join(d.home, 'h.txt'), 'utf8')).toBe('h\n');
    expect(readFileSync(join(d.tmp, 't.txt'), 'utf8')).toBe('t\n');
  });

  it('blocks a write outside the workspace, and records it with the path', async () => {
    const sb = await enforced();
    const name = marker('write');
    // System folders are there, read-only: the write fails with EROFS.
    for (const target of [join('/usr/local', name), join('/usr/bin', name)]) {
      const r = await sb.exec(`echo x > '${target}'`);
      expect(r.exitCode).toBe(1);
      expect(r.output).toMatch(/Read-only file system/);
      expect(r.denials).toEqual([{ path: target, operation: 'write', reason: 'read_only', detected_from: 'stderr', line: `bash: line 1: ${target}: Read-only file system` }]);
      expect(existsSync(target)).toBe(false);
    }
    // Every other host folder (the checkout, /srv, /etc's own files) is absent: nothing to write into.
    for (const target of [join(process.cwd(), name), join('/srv', name), join('/etc', name)]) {
      const r = await sb.exec(`echo x > '${target}'`);
      expect(r.exitCode).toBe(1);
      expect(existsSync(target)).toBe(false);
      if (target.startsWith('/etc/')) expect(r.denials).toEqual([expect.objectContaining({ path: target, operation: 'write', reason: 'read_only' })]);
      else expect(r.denials).toEqual([expect.objectContaining({ path: target, reason: 'hidden' })]);
    }
  });

  it('records a write outside the workspace by touch, mkdir and node, each once with its path', async () => {
    const sb = await enforced();
    const t = join('/etc', marker('touch'));
    const d = join('/usr/local', marker('mkdir'));
    const n = join('/usr', marker('node'));
    const r = await sb.exec(`touch '${t}'; mkdir -p '${d}'; mkdir '${d}'; node -e "require('fs').writeFileSync('${n}', 'x')"`);
    expect(r.exitCode).not.toBe(0);
    expect(r.denials.map(({ path, operation, reason }) => ({ path, operation, reason }))).toEqual([
      { path: t, operation: 'write', reason: 'read_only' },
      { path: d, operation: 'write', reason: 'read_only' },
      { path: n, operation: 'write', reason: 'read_only' },
    ]);
    expect(r.denials[2]?.line).toBe(`Error: EROFS: read-only file system, open '${n}'`);
    for (const p of [t, d, n]) expect(existsSync(p)).toBe(false);
  });

  it('records no denial for a missing file in the workspace, nor for writes where writing is allowed', async () => {
    const sb = await enforced();
    const r = await sb.exec('cat missing.txt; cat "$PWD/missing.txt"; ls "$HOME/nothing"; echo x > "$TMPDIR/ok"; touch /tmp/ok');
    expect(r.output).toMatch(/No such file or directory/);
    expect(r.denials).toEqual([]);
  });

  it('records no denial for an error-shaped line about a writable folder, but does for one about a read-only path', async () => {
    const sb = await enforced();
    // The kernel says nothing of a refused open, so a printed line is all there is: a line naming a
    // writable folder cannot be true and is dropped; one naming a read-only path is taken at its word
    // (a documented limit), and says it came on stdout.
    const r = await sb.exec('echo "$PWD/x: Read-only file system"; echo "/etc/qs-mention: Read-only file system"');
    expect(r.denials).toEqual([{ path: '/etc/qs-mention', operation: 'write', reason: 'read_only', detected_from: 'stdout', line: '/etc/qs-mention: Read-only file system' }]);
  });

  it('gives /tmp as a private scratch that never reaches the host', async () => {
    const sb = await enforced();
    const target = join(sb.describe().root, '..', marker('scratch'));
    const r = await sb.exec(`echo x > '${target}' && ls /tmp | wc -l`);
    expect(r.exitCode).toBe(0);
    expect(existsSync(target)).toBe(false);
    const again = await openSandbox({ policy: policy(), backend: 'bwrap', workspace: sb.describe() });
    open.push(again);
    expect((await again.exec(`test -e '${target}'`)).exitCode).toBe(1);
  });

  it('hides the host home: a file there cannot be read', async () => {
    const secret = join(homedir(), `.${marker('home')}`);
    writeFileSync(secret, 'TOPSECRET\n', { mode: 0o644 });
    try {
      const sb = await enforced();
      const r = await sb.exec(`cat '${secret}'; ls -A '${homedir()}' 2>/dev/null | wc -l`);
      expect(r.output).not.toContain('TOPSECRET');
      expect(r.output).toMatch(/No such file or directory\n0\n$/);
      expect(r.denials).toEqual([{ path: secret, operation: 'read', reason: 'hidden', detected_from: 'stderr', line: `cat: ${secret}: No such file or directory` }]);
    } finally {
      rmSync(secret, { force: true });
    }
  });

  it('hides password hashes and SSH host keys', async () => {
    const sb = await enforced();
    const r = await sb.exec('cat /etc/shadow /etc/gshadow 2>/dev/null | wc -c; cat /etc/passwd | wc -l');
    expect(r.output).toMatch(/^0\n[1-9]\d*\n$/);
    // Silenced with 2>/dev/null: a swallowed error is not seen (a documented limit)…
    expect(r.denials).toEqual([]);
    // …a printed one is.
    const shown = await sb.exec('cat /etc/shadow');
    expect(shown.denials).toEqual([expect.objectContaining({ path: '/etc/shadow', operation: 'read', reason: 'hidden' })]);
  });

  it('runs a documented `sudo` as the sandbox user, saying so, and refuses a global install with a recorded denial', async () => {
    const sb = await enforced();
    const sudo = await sb.exec('sudo -E id -un; sudo tee ./note.txt <<< noted >/dev/null; cat note.txt');
    expect(sudo.exitCode).toBe(0);
    expect(sudo.output).toContain('sudo: no privilege in the quickloop sandbox; running as quickloop: id -un');
    expect(sudo.output).toMatch(/^quickloop$/m);
    expect(sudo.output).toMatch(/^noted$/m);
    // A global install writes under /usr, which is read-only: the step fails and the denial is on record.
    const global = await sb.exec('mkdir -p pkg && printf \'{"name":"qs-global-probe","version":"1.0.0"}\' > pkg/package.json && npm install -g ./pkg --no-audit --no-fund --offline');
    expect(global.exitCode).not.toBe(0);
    expect(global.denials).toEqual(expect.arrayContaining([expect.objectContaining({ operation: 'write', reason: 'read_only', path: expect.stringMatching(/^\/usr\//) })]));
    expect(existsSync('/usr/lib/node_modules/qs-global-probe')).toBe(false);
    expect(existsSync('/usr/local/lib/node_modules/qs-global-probe')).toBe(false);
  });

  it('reaches a registry on the host\'s loopback at its configured port only, recorded, while package managers dial it directly', async () => {
    const hits: string[] = [];
    const server = createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      res.end('mirror-ok\n');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    try {
      const sb = await enforced(policy({ registries: [`localhost:${port}`] }));
      // NO_PROXY lists localhost: curl (like npm and pip) dials the sandbox's own loopback.
      const r = await sb.exec(`curl -sS --max-time 5 http://localhost:${port}/pkg; curl -sS --max-time 5 http://127.0.0.1:${port}/pkg2; curl -sS --max-time 5 http://127.0.0.1:${port + 1}/other; echo other=$?`);
      expect(r.output).toMatch(/^mirror-ok\nmirror-ok\n/);
      expect(r.output).toMatch(/other=7\n$/);
      expect(hits).toEqual(['GET /pkg', 'GET /pkg2']);
      await sb.close();
      expect(events.filter((e) => e.type === 'egress.allowed')).toEqual([
        expect.objectContaining({ host: 'localhost', port, method: 'TCP', reason: 'registry' }),
        expect.objectContaining({ host: 'localhost', port, method: 'TCP', reason: 'registry' }),
      ]);
    } finally {
      server.close();
    }
  });

  it('gives a result, never a throw, for what bash cannot be given, and carries on', async () => {
    const sb = await enforced();
    for (const [command, why] of [
      ['echo a\0b', /NUL byte \(at character 7\)/],
      ['echo \uD800', /lone UTF-16 surrogate/],
      [`echo ${'x'.repeat(140_000)}`, /bytes long, over the \d+ bytes/],
    ] as const) {
      const r = await sb.exec(command);
      expect(r.exitCode).toBe(126);
      expect(r.output).toMatch(why);
    }
    // A value Node refuses to spawn at all (a NUL in the environment) is a result too.
    const env = await sb.exec('true', { env: { QS_X: 'a\0b' } });
    expect(env.exitCode).toBe(127);
    expect((await sb.exec('echo still-here')).output).toBe('still-here\n');
  });

  it('passes no key into the sandbox and drops every capability', async () => {
    const sb = await enforced(policy(), { env: { ...process.env, ANTHROPIC_API_KEY: 'sk-ant-test-secret', OPENAI_API_KEY: 'sk-test-secret' } });
    const r = await sb.exec('env; cat /proc/1/environ 2>/dev/null | tr "\\0" "\\n"; grep CapEff /proc/self/status');
    expect(r.output).not.toContain('test-secret');
    expect(r.output).toMatch(/CapEff:\s+0000000000000000/);
  });

  it('cannot see or signal host processes', async () => {
    const sb = await enforced();
    const r = await sb.exec(`kill -0 ${process.pid}`);
    expect(r.exitCode).not.toBe(0);
  });

  it('blocks and records a connection to a host that is not allowed', async () => {
    const sb = await enforced(policy({ registries: [`${registryHost}:443`] }));
    const r = await sb.exec('curl -sS --max-time 10 https://not-allowed.example.com/');
    expect(r.exitCode).not.toBe(0);
    expect(r.output).toMatch(/403/);
    expect(events).toContainEqual(expect.objectContaining({ type: 'egress.blocked', host: 'not-allowed.example.com', port: 443, method: 'CONNECT', reason: 'not_allowlisted' }));
  });

  it('blocks and records a docs host reached from the shell, pointing at read_docs', async () => {
    const sb = await enforced(policy({ docs_hosts: ['docs.example.com'] }));
    const r = await sb.exec('curl -sS --max-time 10 http://docs.example.com/quickstart');
    expect(r.output).toMatch(/use read_docs/);
    expect(events).toEqual([expect.objectContaining({ type: 'egress.blocked', host: 'docs.example.com', path: '/quickstart', reason: 'docs_host' })]);
  });

  it('blocks and records a dial to a raw IP, through the proxy and around it', async () => {
    const sb = await enforced(policy({ registries: [`${registryHost}:443`] }));
    const viaProxy = await sb.exec('curl -sS --max-time 10 http://192.0.2.1/');
    expect(viaProxy.output).toMatch(/raw IP address/);
    expect(events).toEqual([expect.objectContaining({ type: 'egress.blocked', host: '192.0.2.1', port: 80, method: 'GET', reason: 'ip_literal' })]);
    events.length = 0;
    const direct = await sb.exec("curl -sS --noproxy '*' --max-time 10 https://192.0.2.2/; curl -sS --noproxy '*' --max-time 10 http://[2001:db8::3]/");
    expect(direct.exitCode).not.toBe(0);
    expect(events).toEqual([
      expect.objectContaining({ type: 'egress.blocked', host: '192.0.2.2', port: 443, method: 'TCP', reason: 'bypassed_proxy' }),
      expect.objectContaining({ type: 'egress.blocked', host: '2001:db8::3', port: 80, method: 'TCP', reason: 'bypassed_proxy' }),
    ]);
    // Other ports are refused at once (every address is local inside, and nothing listens there).
    const other = await sb.exec('echo > /dev/tcp/192.0.2.4/5432');
    expect(other.output).toMatch(/Connection refused/);
  });

  it('blocks and records a lookup by a tool that ignores the proxy, and answers it at once', async () => {
    const sb = await enforced(policy({ registries: [`${registryHost}:443`], docs_hosts: ['docs.example.com'] }));
    const r = await sb.exec(`getent hosts ${registryHost}; echo "rc=$?"; node -e "fetch('https://docs.example.com/').catch((e) => console.log(e.cause.code))"`);
    expect(r.output).toBe('rc=2\nEAI_AGAIN\n');
    expect(events).toEqual([
      expect.objectContaining({ type: 'egress.blocked', host: registryHost, port: 53, method: 'DNS', reason: 'bypassed_proxy' }),
      expect.objectContaining({ type: 'egress.blocked', host: 'docs.example.com', port: 53, method: 'DNS', reason: 'docs_host' }),
    ]);
  });

  it('kills background processes, daemonised ones too, when the stage closes', async () => {
    const sb = await enforced();
    const plain = marker('bg');
    const daemon = marker('daemon');
    const r = await sb.exec(
      `bash -c 'exec -a ${plain} sleep 300' >/dev/null 2>&1 & setsid -f bash -c 'exec -a ${daemon} sleep 300' >/dev/null 2>&1; echo started`,
    );
    expect(r.output).toBe('started\n');
    // `setsid -f` returns before its child has exec'd under the marker name: wait for both to show.
    for (let i = 0; i < 200 && (pidsWith(plain).length === 0 || pidsWith(daemon).length === 0); i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    // They outlive their command (a server started by one command serves the next)…
    expect(pidsWith(plain)).toHaveLength(1);
    expect(pidsWith(daemon)).toHaveLength(1);
    const next = await sb.exec(`ps -eo args | grep -c '^${plain}'`);
    expect(next.output).toBe('1\n');
    // …but not their stage, and the close report names them.
    const report = await sb.close();
    expect([...report.leftRunning].sort()).toEqual([`${daemon} 300`, `${plain} 300`].sort());
    expect(pidsWith(plain)).toEqual([]);
    expect(pidsWith(daemon)).toEqual([]);
  });

  it('lets a server started by one command answer the next one on loopback, without egress events', async () => {
    const sb = await enforced();
    const port = 20000 + (process.pid % 10000);
    // Its output is not redirected: it keeps the command's pipes, and logs to them on every request.
    const start = await sb.exec(`node -e "require('http').createServer((q, s) => { console.log('got', q.url); s.end('hello from ' + q.url); }).listen(${port}, '127.0.0.1')" & echo ok`);
    expect(start.output).toBe('ok\n');
    const r = await sb.exec(`for i in $(seq 200); do curl -s http://localhost:${port}/x && break; sleep 0.05; done`);
    expect(r.output).toBe('hello from /x');
    const again = await sb.exec(`curl -sS http://localhost:${port}/y`);
    expect(again.output).toBe('hello from /y');
    expect(events).toEqual([]);
  });

  it('kills a command and its children on timeout, with exit code 124', async () => {
    const sb = await enforced();
    const m = marker('timeout');
    const r = await sb.exec(`bash -c 'exec -a ${m} sleep 300' & wait`, { timeoutMs: 300 });
    expect(r).toMatchObject({ exitCode: 124, timedOut: true });
    expect(pidsWith(m)).toEqual([]);
  });

  it('is re-opened from its description by a later stage, with the files in place', async () => {
    const first = await enforced();
    await first.exec('echo kept > kept.txt');
    // Nothing was left running, and the sandbox's own forwarders are not counted as leftovers.
    expect(await first.close()).toEqual({ leftRunning: [], egressUnrecorded: 0 });
    const second = await enforced(policy(), { workspace: first.describe() });
    expect(second.describe().workspace).toBe(first.describe().workspace);
    const r = await second.exec('cat kept.txt');
    expect(r.output).toBe('kept\n');
  });
});

describe('bwrap backend with the real registry', () => {
  let sb: Sandbox | undefined;
  afterAll(async () => {
    if (sb) {
      await sb.close();
      removeLayout(sb.describe());
    }
  });

  it('npm view succeeds with the registry allowed', async () => {
    const s = await enforced(policy({ registries: [`${registryHost}:443`] }));
    const r = await s.exec('npm view is-number version', { timeoutMs: 60_000 });
    expect(r.output).toMatch(/^\d+\.\d+\.\d+$/m);
    expect(r.exitCode).toBe(0);
    expect(events).toContainEqual(expect.objectContaining({ type: 'egress.allowed', host: registryHost, reason: 'registry' }));
    expect(events.filter((e) => e.type !== 'egress.allowed')).toEqual([]);
  });

  it('npm install of a small package succeeds with the registry allowed', async () => {
    const s = await enforced(policy({ registries: [`${registryHost}:443`] }));
    const r = await s.exec('npm install --no-audit --no-fund is-number && node -e "console.log(typeof require(\'is-number\'))"', { timeoutMs: 120_000 });
    expect(r.exitCode).toBe(0);
    expect(r.output).toMatch(/function\n$/);
  });

  it('npm init in a fresh home asks the registry nothing (its update check is off)', async () => {
    const s = await enforced(policy({ registries: [`${registryHost}:443`] }));
    const r = await s.exec('npm init -y > /dev/null && cat package.json | head -2', { timeoutMs: 60_000 });
    expect(r.exitCode).toBe(0);
    expect(events.filter((e) => e.type.startsWith('egress.'))).toEqual([]);
  });

  it('npm view is blocked and recorded when the registry is off the allow list', async () => {
    const s = await enforced(policy({ registries: [] }));
    const r = await s.exec('npm view is-number version --fetch-retries=0', { timeoutMs: 60_000 });
    expect(r.exitCode).not.toBe(0);
    expect(r.output).toMatch(/403/);
    expect(events).toContainEqual(expect.objectContaining({ type: 'egress.blocked', host: registryHost, reason: 'not_allowlisted' }));
  });
});

describe('a command that meets an ended sandbox', () => {
  const result = (exitCode: number, output: string) => ({ exitCode, output, originalChars: output.length, truncated: false, timedOut: false, durationMs: 3, denials: [] });

  it('is reported as not run when nsenter found the holder gone (it was still dying when the command started)', () => {
    const r = endedIfNotEntered(result(1, 'nsenter: cannot open /proc/4242/ns/user: No such file or directory\n'), true);
    expect(r).toMatchObject({ exitCode: ENDED_EXIT, output: ENDED_OUTPUT, originalChars: ENDED_OUTPUT.length, denials: [] });
  });

  it('keeps its own result when it entered, or when the sandbox is still there', () => {
    const ran = result(137, 'half of the output\n');
    expect(endedIfNotEntered(ran, true)).toBe(ran);
    const failed = result(1, 'nsenter: something else\n');
    expect(endedIfNotEntered(failed, false)).toBe(failed);
    const ok = result(0, 'nsenter: printed by the command itself\n');
    expect(endedIfNotEntered(ok, true)).toBe(ok);
  });
});
