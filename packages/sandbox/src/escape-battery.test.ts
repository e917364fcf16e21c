// The second red-team battery: an attacker who controls every command a run executes tries the ways
// out that the first one (escape.test.ts) did not: what rides inside an allowed connection, what the
// harness hands a command while it enters the sandbox, what a flood of refusals costs the host, what
// a command leaves for the harness to walk, and what outlives it. Each outcome is judged from the
// host (what its servers saw, its files, its processes, the record), never from what a command says.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapUnavailable } from './backends/bwrap.js';
import { removeLayout } from './layout.js';
import { openSandbox } from './open.js';
import { bundleLibraryInto, policy, testCertificates } from './test-helpers.js';
import type { EgressEvent, Sandbox } from './types.js';

const LIMITS = { processes: 128, memoryBytes: 512 * 1024 * 1024, tmpBytes: 16 * 1024 * 1024, shmBytes: 16 * 1024 * 1024 };
/** The proxy inside, dialled explicitly (NO_PROXY would send localhost around it). */
const PROXY = "--noproxy '' -x http://127.0.0.1:3128";

/**
 * The next request at the start of `buffer`, read as an HTTP/1.1 server that serves pipelined
 * requests reads it (framed by Content-Length or chunked, no body otherwise): `METHOD PATH HOST`,
 * where the next one starts, and whether it asked to close. Undefined until a whole one is there.
 */
function pipelined(buffer: Buffer): { request: string; end: number; close: boolean } | undefined {
  const headEnd = buffer.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const lines = buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
  const header = (name: string): string | undefined => lines.find((l) => l.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim();
  let end = headEnd + 4;
  if (header('transfer-encoding')?.toLowerCase() === 'chunked') {
    for (;;) {
      const sizeEnd = buffer.indexOf('\r\n', end);
      if (sizeEnd < 0) return undefined;
      const size = parseInt(buffer.subarray(end, sizeEnd).toString('latin1'), 16);
      end = sizeEnd + 2 + size + 2;
      if (end > buffer.length) return undefined;
      if (size === 0) break;
    }
  } else end += Number(header('content-length') ?? 0);
  if (end > buffer.length) return undefined;
  const [method, path] = (lines[0] ?? '').split(' ');
  return { request: `${method} ${path} ${header('host')}`, end, close: header('connection')?.toLowerCase() === 'close' };
}

/** Runs a python program given as text (no shell quoting to get wrong). */
const python = (program: string): string => `python3 - <<'PY'\n${program}\nPY`;

const open: Sandbox[] = [];
afterAll(async () => {
  for (const sb of open.splice(0)) {
    await sb.close();
    removeLayout(sb.describe());
  }
});

beforeAll(() => {
  const problem = bwrapUnavailable();
  if (problem) throw new Error(`the enforced backend cannot run here: ${problem}`);
});

describe('what rides inside an allowed connection', () => {
  // Two servers on the host's loopback stand for a registry (or an install host) on a shared front
  // end: a CDN routes a connection by the TLS server name, and plain HTTP by its Host header, so
  // whatever reaches either with another name reaches another site. A configured registry endpoint
  // (localhost:PORT) is the one kind of allowed host the proxy may dial on loopback.
  let dir: string;
  let tlsServer: tls.Server;
  let tlsPort: number;
  let plain: net.Server;
  let plainPort: number;
  /** Every TLS server name the host's server was asked for. */
  const names: string[] = [];
  /** Every request the host's plain server got: method, path and Host. */
  const requests: string[] = [];
  const events: EgressEvent[] = [];
  let sb: Sandbox;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'qs-battery-tls-'));
    const { key, cert } = testCertificates(dir);
    const context = tls.createSecureContext({ key, cert });
    tlsServer = tls.createServer({ key, cert, SNICallback: (name, cb) => {
      names.push(name);
      cb(null, context);
    } }, (s) => {
      s.on('error', () => undefined);
      s.end('HTTP/1.1 200 OK\r\ncontent-length: 3\r\nconnection: close\r\n\r\nok\n');
    });
    tlsServer.on('tlsClientError', () => undefined);
    tlsServer.listen(0, '127.0.0.1');
    await once(tlsServer, 'listening');
    tlsPort = (tlsServer.address() as AddressInfo).port;
    plain = net.createServer((socket) => {
      socket.on('error', () => undefined);
      let buffer = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk]);
        for (let next = pipelined(buffer); next !== undefined; next = pipelined(buffer)) {
          requests.push(next.request);
          buffer = buffer.subarray(next.end);
          const body = `served ${next.request.split(' ')[1]}\n`;
          socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
          if (next.close) socket.end();
        }
      });
    });
    plain.listen(0, '127.0.0.1');
    await once(plain, 'listening');
    plainPort = (plain.address() as AddressInfo).port;
    sb = await openSandbox({
      policy: policy({ registries: [`localhost:${tlsPort}`, `localhost:${plainPort}`], docs_hosts: ['docs.example.com'] }),
      backend: 'bwrap',
      installHosts: false,
      limits: LIMITS,
      onEgress: (e) => events.push(e),
    });
    open.push(sb);
  });

  afterAll(async () => {
    await new Promise<void>((r) => tlsServer.close(() => r()));
    await new Promise<void>((r) => plain.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('TLS in a tunnel to an allowed host cannot name another server, and a docs host named so is a recorded bypass', async () => {
    names.length = 0;
    events.length = 0;
    const r = await sb.exec(python(`
import socket, ssl
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
for name in ['localhost', 'evil.example', 'docs.example.com']:
    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
    s.sendall(b'CONNECT localhost:${tlsPort} HTTP/1.1\\r\\nHost: localhost:${tlsPort}\\r\\n\\r\\n')
    head = b''
    while b'\\r\\n\\r\\n' not in head:
        head += s.recv(1)
    try:
        t = ctx.wrap_socket(s, server_hostname=name)
        t.sendall(b'GET / HTTP/1.1\\r\\nHost: ' + name.encode() + b'\\r\\n\\r\\n')
        print(name, 'answered', t.recv(100).split(b'\\r\\n')[0].decode())
    except (OSError, ssl.SSLError) as e:
        print(name, 'refused', type(e).__name__)
`));
    // The host's server saw only the name the tunnel was opened to.
    expect(names).toEqual(['localhost']);
    expect(r.output).toMatch(/^localhost answered HTTP\/1\.1 200 OK$/m);
    expect(r.output).toMatch(/^evil\.example refused /m);
    expect(r.output).toMatch(/^docs\.example\.com refused /m);
    expect(events).toContainEqual(expect.objectContaining({ type: 'egress.blocked', host: 'evil.example', port: tlsPort, method: 'CONNECT', reason: 'not_allowlisted' }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'egress.blocked', host: 'docs.example.com', port: tlsPort, method: 'CONNECT', reason: 'docs_host' }));
  });

  it('plain HTTP in a tunnel reaches the host only as the proxy decided: its Host, and each request recorded', async () => {
    requests.length = 0;
    events.length = 0;
    const r = await sb.exec(python(`
import socket
s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
s.sendall(b'CONNECT localhost:${plainPort} HTTP/1.1\\r\\nHost: localhost:${plainPort}\\r\\n\\r\\n')
s.sendall(b'GET /first HTTP/1.1\\r\\nHost: evil.example\\r\\n\\r\\nGET /second HTTP/1.1\\r\\nHost: docs.example.com\\r\\nConnection: close\\r\\n\\r\\n')
got = b''
while True:
    c = s.recv(65536)
    if not c: break
    got += c
print(got.count(b'\\r\\n\\r\\nserved '), 'answers')
`));
    expect(r.output).toBe('2 answers\n');
    expect(requests).toEqual([`GET /first localhost:${plainPort}`, `GET /second localhost:${plainPort}`]);
    const paths = events.filter((e) => e.type === 'egress.allowed' && e.port === plainPort).map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['/first', '/second']));
  });

  it('a chunked body on a GET cannot smuggle a second request, with a Host of its own, past the one the proxy decided', async () => {
    requests.length = 0;
    const r = await sb.exec(python(`
import socket
smuggled = b'GET /smuggled HTTP/1.1\\r\\nHost: evil.example\\r\\n\\r\\n'
s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
s.sendall(b'GET http://localhost:${plainPort}/front HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n' + b'%x\\r\\n' % len(smuggled) + smuggled + b'\\r\\n0\\r\\n\\r\\n')
print(s.recv(4096).split(b'\\r\\n')[0].decode())
`));
    expect(r.output).toMatch(/^HTTP\/1\.1 200/);
    expect(requests).toEqual([`GET /front localhost:${plainPort}`]);
  });

  it('curl itself, pointed at another name over an allowed tunnel (--connect-to), is refused', async () => {
    names.length = 0;
    const r = await sb.exec(`curl -sS -k --max-time 10 ${PROXY} --connect-to evil.example:${tlsPort}:localhost:${tlsPort} https://evil.example:${tlsPort}/; echo "curl=$?"`);
    expect(names).toEqual([]);
    expect(r.output).not.toContain('ok');
    expect(r.output).toMatch(/curl=(35|56)\n$/);
  });
});

/**
 * A harness of its own, given the descriptors its own parent left open (a CI runner's, a shell's
 * `40<file`): it runs each command in turn and prints one JSON line.
 */
const HARNESS = `
import { openSandbox } from './sandbox.mjs';
const commands = JSON.parse(process.argv[2]);
const policy = { explicit: [], docs_hosts: [], registries: [], registries_source: 'default' };
const sb = await openSandbox({ policy, backend: 'bwrap', baseDir: process.argv[3], installHosts: false, limits: ${JSON.stringify(LIMITS)} });
const results = [];
for (const c of commands) results.push(await sb.exec(c, { timeoutMs: 30000 }));
await sb.close();
console.log(JSON.stringify({ described: sb.describe(), results }));
`;

/**
 * Watches every process of the sandbox for descriptors it did not open itself (what a command is
 * handed while it enters), and takes what it can through /proc: reads one, writes into another.
 */
const WATCHER = `
import os, time
out = os.environ['TMPDIR']
end = time.time() + 30
seen = set()
while time.time() < end and not os.path.exists(out + '/stop'):
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        try: fds = os.listdir('/proc/%s/fd' % pid)
        except OSError: continue
        for fd in fds:
            path = '/proc/%s/fd/%s' % (pid, fd)
            try: target = os.readlink(path)
            except OSError: continue
            if 'inherited-' not in target: continue
            if target not in seen:
                seen.add(target)
                open(out + '/seen', 'a').write(target + '\\n')
            try:
                if 'secret' in target:
                    f = os.open(path, os.O_RDONLY); open(out + '/stolen', 'a').write(os.read(f, 64).decode()); os.close(f)
                else:
                    f = os.open(path, os.O_WRONLY | os.O_APPEND); os.write(f, b'written from the sandbox\\n'); os.close(f)
            except OSError:
                pass
`;

describe('what the harness hands a command while it enters the sandbox', () => {
  const asRoot = process.getuid?.() === 0;
  /** Its own uid when the test is root (not another test file's), else the test's own. */
  const uid = asRoot ? 65531 : (process.getuid?.() ?? 0);
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'qs-battery-fds-'));
    await bundleLibraryInto(dir);
    writeFileSync(join(dir, 'harness.mjs'), HARNESS);
    writeFileSync(join(dir, 'inherited-secret'), 'INHERITED-SECRET\n', { mode: 0o600 });
    writeFileSync(join(dir, 'inherited-log'), '', { mode: 0o600 });
    if (asRoot) execFileSync('chown', ['-R', `${uid}:${uid}`, dir]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a descriptor the harness inherited never reaches a process of the sandbox, not even for the moment a command takes to enter", async () => {
    const commands = [
      `cat > "$TMPDIR/watch.py" <<'PY'\n${WATCHER}\nPY\nsetsid python3 "$TMPDIR/watch.py" >/dev/null 2>&1 < /dev/null & sleep 0.3; echo watching`,
      ...Array.from({ length: 40 }, () => 'true'),
      'touch "$TMPDIR/stop"; cat "$TMPDIR/seen" "$TMPDIR/stolen" 2>/dev/null; echo end',
    ];
    const secret = openSync(join(dir, 'inherited-secret'), 'r');
    const log = openSync(join(dir, 'inherited-log'), 'a');
    // Descriptors 40 and 41, past a gap: Node marks its parent's low ones close-on-exec at start, not these.
    const stdio: Array<'ignore' | 'pipe' | number> = ['ignore', 'pipe', 'pipe', ...Array.from({ length: 37 }, () => 'ignore' as const), secret, log];
    const node = ['node', join(dir, 'harness.mjs'), JSON.stringify(commands), dir];
    const argv = asRoot ? ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', ...node] : node;
    const child = spawn(argv[0] as string, argv.slice(1), { cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir }, stdio });
    closeSync(secret);
    closeSync(log);
    let out = '';
    let err = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    expect(err).toBe('');
    expect(code).toBe(0);
    const result = JSON.parse(out.trim().split('\n').at(-1) ?? '') as { described: { root: string }; results: Array<{ output: string }> };
    try {
      expect(result.results[0]?.output).toBe('watching\n');
      // Judged from the host: its file was neither read nor written, nor even named inside.
      expect(readFileSync(join(dir, 'inherited-log'), 'utf8')).toBe('');
      expect(result.results.at(-1)?.output).toBe('end\n');
    } finally {
      removeLayout({ root: result.described.root });
    }
  });
});

describe('what a flood of refusals costs the host', () => {
  it('the record of egress decisions stays bounded, however many a command makes, and says how many it left out', async () => {
    let count = 0;
    let bytes = 0;
    let longest = 0;
    const sb = await openSandbox({
      policy: policy(),
      backend: 'bwrap',
      installHosts: false,
      limits: LIMITS,
      onEgress: (e) => {
        count += 1;
        const size = JSON.stringify(e).length;
        bytes += size;
        longest = Math.max(longest, size);
      },
    });
    open.push(sb);
    // 5200 refusals of one host with 8 KiB paths, then 1500 of as many hosts with 4 KiB names: each
    // is a decision, and each used to be an event of its full size in every stage's stream.
    const r = await sb.exec(python(`
import socket, threading
def ask(n, host, path):
    for i in range(n):
        s = socket.create_connection(('127.0.0.1', 3128), timeout=30)
        s.sendall(b'GET http://' + host(i) + b'/' + path + b' HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')
        while s.recv(65536): pass
        s.close()
jobs = [threading.Thread(target=ask, args=(650, lambda i: b'flood.test', b'p' * 8192)) for _ in range(8)]
jobs += [threading.Thread(target=ask, args=(300, lambda i, t=t: b'h%d-%d.' % (t, i) + b'a' * 60 + (b'.' + b'b' * 60) * 60 + b'.test', b'')) for t in range(5)]
[j.start() for j in jobs]; [j.join() for j in jobs]
print('asked')
`), { timeoutMs: 300_000 });
    expect(r.output).toBe('asked\n');
    const closed = await sb.close();
    const decisions = 5200 + 1500;
    expect(count + closed.egressUnrecorded).toBe(decisions);
    expect(count).toBeLessThanOrEqual(6000);
    expect(longest).toBeLessThan(3000);
    expect(bytes).toBeLessThan(6000 * 3000);
  });
});
