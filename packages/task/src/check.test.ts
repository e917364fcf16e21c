// The compiled check runs in real bash: servers started and stopped as a group, waits that report one-line reasons, output asserts.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkPrelude, checkScript, compileSuccess, crc32, jsonPairEre, portBase, shellQuote } from './check.js';

let ws: string;
/**
 * The QS_PORT checks get here: one the kernel just gave out. The prelude's own pick (tested below) is
 * stable per task name and only checks that nothing listens; on the host, beside a whole suite's
 * loopback traffic, such a port can be the local end of another test's connection. A sandbox has
 * its own network, where it cannot.
 */
let port: number;
beforeEach(async () => {
  ws = mkdtempSync(join(tmpdir(), 'qs-check-test-'));
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
});
afterEach(() => rmSync(ws, { recursive: true, force: true }));

/** Runs a check the way qs-check does: bash, in the workspace, output merged. */
function runCheck(script: string, env: Record<string, string> = {}): { code: number; lines: string[]; out: string } {
  // stdin must not be a socket: bash treats a socket stdin as rshd and sources ~/.bashrc.
  const r = spawnSync('bash', ['-c', script], {
    cwd: ws,
    env: { PATH: process.env.PATH ?? '', TMPDIR: ws, HOME: ws, QS_PORT: String(port), ...env },
    encoding: 'utf8',
    timeout: 60_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = `${r.stdout}${r.stderr}`;
  return { code: r.status ?? -1, lines: out.trimEnd().split('\n'), out };
}

/** A tiny HTTP server the check serves: node on $QS_PORT, answering from a table. */
function writeServer(routes: Record<string, [number, string]>): void {
  const src = `
    const http = require('node:http');
    const routes = ${JSON.stringify(routes)};
    http.createServer((req, res) => {
      const r = routes[req.url] ?? [404, 'not found'];
      res.writeHead(r[0], { 'content-type': 'text/plain' });
      res.end(r[1]);
    }).listen(Number(process.env.QS_PORT), '127.0.0.1');`;
  writeFileSync(join(ws, 'server.js'), src);
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the compiled success block', () => {
  it('orders serve, wait_http, expect_output, then the script, with every value single-quoted', () => {
    const body = compileSuccess({
      script: 'test -f a || qs_fail "no a"',
      serve: 'node server.js --port $QS_PORT',
      wait_http: { path: '/health', status: 204, timeout: 5, contains: "it's ok", matches: ['^o'], json: { message: 'Hello World', n: 3 } },
      expect_output: { contains: ['x'], matches: 'y+' },
    });
    expect(body.split('\n')).toEqual([
      `qs_serve bash -c 'node server.js --port $QS_PORT'`,
      `qs_wait_http '/health' --status '204' --timeout '5' --contains 'it'\\''s ok' --matches '^o' --json-ere '"message": "Hello World"' ${shellQuote(jsonPairEre('message', 'Hello World'))} --json-ere '"n": 3' ${shellQuote(jsonPairEre('n', 3))}`,
      `qs_expect_output --contains 'x' --matches 'y+'`,
      'test -f a || qs_fail "no a"',
      '',
    ]);
  });

  it('matches wait_http.json pairs as JSON writes them, with their types kept: no false docs gap, no false pass', () => {
    // As Python's json.dumps writes them (ensure_ascii, `, ` and `: `), and as a hand-written body might.
    const body = '{"price": 9.50, "id": 12345678901234567890, "message": "Gr\\u00fc\\u00df dich, \\"Ada\\"", "path": "a\\/b", "ok": "true", "count": "3", "n": 3.0, "none": null}\n';
    writeServer({ '/a.json': [200, body] });
    const check = (json: Record<string, string | number | boolean | null>): { code: number; lines: string[] } =>
      runCheck(checkScript('json-pairs', compileSuccess({ serve: 'exec node server.js', wait_http: { path: '/a.json', json, timeout: 2 } })));
    // What the body carries, however it is written.
    expect(check({ price: 9.5, id: '12345678901234567890', message: 'Grüß dich, "Ada"', path: 'a/b', ok: 'true', count: '3', n: 3, none: null }).code).toBe(0);
    // A number or true never matches the string "3" or "true": the type is part of the value.
    const typed = check({ ok: true });
    expect(typed.code).toBe(1);
    expect(typed.lines.at(-1)).toBe('check failed: http://127.0.0.1:' + String(port) + '/a.json did not answer as expected within 2s (last: the body has no "ok": true)');
    expect(check({ count: 3 }).code).toBe(1);
    // Neither a near number nor a near string.
    expect(check({ price: 9.55 }).code).toBe(1);
    expect(check({ message: 'Gruss dich, "Ada"' }).code).toBe(1);
  });

  it('uses a port base that is stable per name, as the prior art did (21000 + crc32 % 20000)', () => {
    expect(crc32('The quick brown fox jumps over the lazy dog')).toBe(0x414fa339);
    expect(portBase('vite-build')).toBe(portBase('vite-build'));
    expect(portBase('vite-build')).toBe(21000 + (crc32('vite-build') % 20000));
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
  });

  it('passes when the served app answers, and stops the whole server process group afterwards', () => {
    writeServer({ '/health': [200, '{"status": "ok", "count": 3}\n'] });
    // The served command leaves a grandchild behind, as npm → node does.
    const serve = 'sleep 300 & echo $! > grandchild.pid; exec node server.js';
    const body = compileSuccess({ serve, wait_http: { path: '/health', contains: 'ok', json: { status: 'ok', count: 3 }, timeout: 20 } });
    const r = runCheck(checkScript('serve-pass', body));
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
    const grandchild = Number(readFileSync(join(ws, 'grandchild.pid'), 'utf8'));
    expect(grandchild).toBeGreaterThan(0);
    expect(alive(grandchild)).toBe(false);
  });

  it("fetches as the harness does, never as the run's home says: a ~/.curlrc that sends every connection to another server is not read", async () => {
    writeServer({ '/': [200, 'the real app\n'] });
    // What the run left behind: its own server elsewhere, and a curl start-up file pointing there.
    const other = spawn(process.execPath, ['-e', "require('node:http').createServer((q, r) => r.end('forged\\n')).listen(0, '127.0.0.1', function () { console.log(this.address().port) })"], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const otherPort = await new Promise<string>((resolve) => other.stdout.once('data', (c: Buffer) => resolve(c.toString().trim())));
      writeFileSync(join(ws, '.curlrc'), `connect-to = "::127.0.0.1:${otherPort}"\n`);
      // The file does what it says to a plain curl here.
      expect(spawnSync('curl', ['-sS', `http://127.0.0.1:${port}/`], { env: { PATH: process.env.PATH ?? '', HOME: ws }, encoding: 'utf8' }).stdout).toBe('forged\n');
      const body = compileSuccess({ serve: 'exec node server.js', wait_http: { path: '/', contains: 'forged', timeout: 5 } });
      const r = runCheck(checkScript('curlrc', body));
      expect(r.code).not.toBe(0);
      expect(r.lines.at(-1)).toMatch(/forged/);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('fails with a one-line reason as the last line, never a fragment of the body, and shows the server log above it', () => {
    writeServer({ '/': [500, '<html>\n<body>\nInternal error\n</body>\n</html>\n'] });
    // The wait runs to its deadline (the answer is never the one wanted): long enough for node to start
    // and answer once on a loaded machine, so that there is a body to show.
    const body = compileSuccess({ serve: 'echo starting; exec node server.js', wait_http: { path: '/', timeout: 4 } });
    const r = runCheck(checkScript('serve-fail', body));
    expect(r.code).toBe(1);
    const last = r.lines[r.lines.length - 1]!;
    expect(last).toMatch(/^check failed: http:\/\/127\.0\.0\.1:\d+\/ did not answer as expected within 4s \(last: HTTP 500, wanted 200\)$/);
    expect(r.out).toContain('--- server 1 output (last 20 lines) ---\nstarting');
    expect(r.out).toContain('--- last response body (first 300 bytes) ---');
    expect(last).not.toContain('html');
  });

  it('names what the body lacks, and keeps separate logs for separate servers', () => {
    // As above: the deadline leaves node time to start and answer on a loaded machine.
    writeServer({ '/': [200, '{"message": "Hello"}'] });
    const script = `qs_serve bash -c 'echo first server; sleep 30'\nqs_serve bash -c 'echo second server; exec node server.js'\nqs_wait_http / --timeout 4 --json message="Hello World"`;
    const r = runCheck(checkScript('two-serves', script));
    expect(r.code).toBe(1);
    expect(r.out).toContain('--- server 1 output (last 20 lines) ---\nfirst server');
    expect(r.out).toContain('--- server 2 output (last 20 lines) ---\nsecond server');
    expect(r.lines[r.lines.length - 1]).toMatch(/\(last: the body has no "message": Hello World\)$/);
  });

  it.each(['curl', 'python3', 'node', 'wget'])('qs_wait_http works with %s as the only HTTP client', (client) => {
    // A PATH with the shell tools the prelude needs, node to serve, and one HTTP client.
    const bin = join(ws, 'bin');
    mkdirSync(bin);
    const tools = ['bash', 'sh', 'grep', 'sed', 'mktemp', 'head', 'tail', 'rm', 'sleep', 'cut', 'cat', 'node', client];
    for (const tool of new Set(tools)) {
      // python3 may be a version-manager shim that needs more than this PATH: link the interpreter itself.
      const probe = tool === 'python3' ? `python3 -c 'import sys; print(sys.executable)'` : `command -v ${tool}`;
      const found = spawnSync('bash', ['-c', probe], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).stdout.trim();
      expect(found, `${tool} on this machine`).not.toBe('');
      symlinkSync(found, join(bin, tool));
    }
    writeServer({ '/': [200, '{"message": "Hello World", "count": 3, "ok": true}'], '/missing': [404, 'nope'] });
    const pass = compileSuccess({ serve: 'exec node server.js', wait_http: { path: '/', json: { message: 'Hello World', count: 3, ok: true }, contains: 'Hello', timeout: 20 } });
    const ok = runCheck(checkScript(`client-${client}`, pass), { PATH: bin });
    expect(ok.out).toBe('');
    expect(ok.code).toBe(0);
    const status = compileSuccess({ serve: 'exec node server.js', wait_http: { path: '/missing', status: 200, timeout: 2 } });
    const bad = runCheck(checkScript(`client-${client}`, status), { PATH: bin });
    expect(bad.code).toBe(1);
    expect(bad.lines[bad.lines.length - 1]).toMatch(/\(last: HTTP 404, wanted 200\)$/);
  });

  it('stops waiting as soon as the served process has exited', () => {
    const body = compileSuccess({ serve: 'echo boom >&2; exit 3', wait_http: { path: '/', timeout: 30 } });
    const r = runCheck(checkScript('dies', body));
    expect(r.code).toBe(1);
    expect(r.out).toContain('boom');
    expect(r.lines[r.lines.length - 1]).toMatch(/the server exited with status 3\)$/);
  });

  it('keeps waiting when the served command exits 0 after handing over to a background process', () => {
    writeServer({ '/': [200, 'up'] });
    const body = compileSuccess({ serve: '(sleep 1; exec node server.js) & exit 0', wait_http: { path: '/', contains: 'up', timeout: 30 } });
    const r = runCheck(checkScript('daemon', body));
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
  });

  it('expect_output reads the session log: passes on a match, and on a miss shows the tail and one reason', () => {
    const log = join(ws, 'session.log');
    writeFileSync(log, 'installing\nshape: (4, 4)\nAlice Archer\n');
    const pass = runCheck(checkScript('expect', compileSuccess({ expect_output: { contains: 'Alice Archer', matches: 'shape: \\(4, [0-9]+\\)' } })), { QS_SESSION_LOG: log });
    expect(pass.code).toBe(0);
    const fail = runCheck(checkScript('expect', compileSuccess({ expect_output: { contains: ['Alice Archer', 'Bob'], matches: '^zzz' } })), { QS_SESSION_LOG: log });
    expect(fail.code).toBe(1);
    expect(fail.out).toContain('--- what the run printed (last 20 lines) ---\ninstalling');
    expect(fail.lines[fail.lines.length - 1]).toBe("check failed: nothing the run printed contains 'Bob', nor matches '^zzz'");
    const missing = runCheck(checkScript('expect', compileSuccess({ expect_output: { contains: 'x' } })), { QS_SESSION_LOG: join(ws, 'nope.log') });
    expect(missing.lines[missing.lines.length - 1]).toMatch(/^check failed: there is no session log/);
  });

  it('qs_fail keeps its reason on one line, and a script keeps its own exit code', () => {
    const r = runCheck(checkScript('fail', 'qs_fail "line one\nline two"'));
    expect(r.code).toBe(1);
    expect(r.lines).toEqual(['check failed: line one line two']);
    expect(runCheck(checkScript('exit', 'exit 7')).code).toBe(7);
  });

  it('picks QS_PORT from the base upwards, skipping a port that is taken', async () => {
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const taken = (server.address() as { port: number }).port;
    try {
      const script = `QS_PORT_BASE=${taken}\n${checkPrelude()}\necho "$QS_PORT"`;
      // Empty: the prelude picks it.
      const r = runCheck(script, { QS_PORT: '' });
      const port = Number(r.lines[0]);
      expect(port).not.toBe(taken);
      expect(port).toBeGreaterThan(taken);
      expect(port).toBeLessThan(taken + 20);
    } finally {
      server.close();
    }
  });

  it('cleans up its temporary directory', () => {
    const r = runCheck(checkScript('tmp', 'echo "$QS_TMP"'));
    expect(r.code).toBe(0);
    expect(spawnSync('test', ['-e', r.lines[0]!]).status).toBe(1);
  });
});
