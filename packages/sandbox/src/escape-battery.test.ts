// The second red-team battery: an attacker who controls every command a run executes tries the ways
// out that the first one (escape.test.ts) did not: what rides inside an allowed connection, what the
// harness hands a command while it enters the sandbox, what a flood of refusals costs the host, what
// a command leaves for the harness to walk, and what outlives it. Each outcome is judged from the
// host (what its servers saw, its files, its processes, the record), never from what a command says.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapUnavailable } from './backends/bwrap.js';
import { harvestInstallCache, npmCacheOf, seedInstallCache } from './install-cache.js';
import { installedDists } from './install-pip.js';
import { createLayout, removeLayout } from './layout.js';
import { openSandbox } from './open.js';
import { bundleLibraryInto, marker, pidsWith, policy, testCertificates } from './test-helpers.js';
import { diskUsage } from './usage.js';
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
  /** What the host's servers accepted, ended at the end whatever state a probe left it in. */
  const connections = new Set<net.Socket>();
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
    tlsServer.on('connection', (c: net.Socket) => {
      connections.add(c);
      c.once('close', () => connections.delete(c));
    });
    tlsServer.listen(0, '127.0.0.1');
    await once(tlsServer, 'listening');
    tlsPort = (tlsServer.address() as AddressInfo).port;
    plain = net.createServer((socket) => {
      connections.add(socket);
      socket.once('close', () => connections.delete(socket));
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
    for (const c of connections) c.destroy();
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

  it('request targets that name a socket, a user, another scheme or no host reach nothing on the host', async () => {
    requests.length = 0;
    events.length = 0;
    const targets = [
      'GET unix:///run/docker.sock/info',
      'GET http+unix://%2Frun%2Fdocker.sock/info',
      `GET http://localhost:${plainPort}@evil.example/ HTTP`,
      `GET http://evil.example#@localhost:${plainPort}/`,
      `GET http://evil.example\\@localhost:${plainPort}/`,
      'GET //evil.example/',
      'GET *',
      `CONNECT localhost:${plainPort}@evil.example:443`,
      `CONNECT evil.example:443#localhost:${plainPort}`,
      `CONNECT [::ffff:127.0.0.1]:${plainPort}`,
    ];
    const r = await sb.exec(python(`
import socket
for line in ${JSON.stringify(targets)}:
    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
    s.sendall(line.split(' HTTP')[0].encode() + b' HTTP/1.1\\r\\nHost: localhost:${plainPort}\\r\\n\\r\\n')
    print(s.recv(200).split(b'\\r\\n')[0].decode())
`));
    expect(requests).toEqual([]);
    // Every one is refused: 400 for what names no host, 403 for the rest.
    expect(r.output.trim().split('\n').map((l) => l.split(' ')[1])).toEqual(targets.map(() => expect.stringMatching(/^40[03]$/)));
    expect(events.filter((e) => e.type === 'egress.allowed')).toEqual([]);
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
import { existsSync } from 'node:fs';
import { openSandbox, removeLayout } from './sandbox.mjs';
const commands = JSON.parse(process.argv[2]);
const policy = { explicit: [], docs_hosts: [], registries: [], registries_source: 'default' };
const sb = await openSandbox({ policy, backend: 'bwrap', baseDir: process.argv[3], installHosts: false, limits: ${JSON.stringify(LIMITS)} });
const results = [];
for (const c of commands) results.push(await sb.exec(c, { timeoutMs: 30000 }));
await sb.close();
let removed;
if (process.argv[4] === 'remove') {
  try {
    removeLayout(sb.describe());
    removed = !existsSync(sb.describe().root);
  } catch (error) {
    removed = error.message;
  }
}
console.log(JSON.stringify({ described: sb.describe(), results, removed }));
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

  it('a harness of the sandbox\'s own uid removes a folder a command locked, whatever bytes its name is made of', async () => {
    const commands = [`mkdir -p $'\\xff/in' plain/in && touch $'\\xff/in/f' plain/in/f && head -c 65536 /dev/zero > $'\\xff/in/data' && chmod 000 $'\\xff' plain && (cd "$HOME" && mkdir -p $'\\xfe\\n/x' && chmod 000 $'\\xfe\\n') && echo locked`];
    const node = ['node', join(dir, 'harness.mjs'), JSON.stringify(commands), dir, 'remove'];
    const argv = asRoot ? ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', ...node] : node;
    const child = spawn(argv[0] as string, argv.slice(1), { cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    await once(child, 'close');
    const result = JSON.parse(out.trim().split('\n').at(-1) ?? '') as { described: { root: string }; results: Array<{ output: string }>; removed: boolean | string };
    try {
      expect(result.results[0]?.output).toBe('locked\n');
      // Left behind, the layout would hold the host's disk for good: no later run removes it.
      expect(result.removed).toBe(true);
      expect(existsSync(result.described.root)).toBe(false);
    } finally {
      if (existsSync(result.described.root)) {
        execFileSync('chmod', ['-R', 'u+rwX', result.described.root]);
        rmSync(result.described.root, { recursive: true, force: true });
      }
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

/** Each kernel interface a command might turn against the host, tried once: `name result`, one a line. */
const KERNEL = `
import ctypes, errno, os, struct
libc = ctypes.CDLL(None, use_errno=True)
def call(n, *a):
    r = libc.syscall(ctypes.c_long(n), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    return 'ok' if r >= 0 else errno.errorcode.get(ctypes.get_errno(), '?')
def tried(name, f):
    try: print(name, f())
    except OSError as e: print(name, errno.errorcode.get(e.errno, '?'))
tried('setns_user', lambda: call(308, os.open('/proc/1/ns/user', os.O_RDONLY), 0))
tried('setns_mnt', lambda: call(308, os.open('/proc/1/ns/mnt', os.O_RDONLY), 0))
tried('setns_net', lambda: call(308, os.open('/proc/1/ns/net', os.O_RDONLY), 0))
tried('unshare_user', lambda: call(272, 0x10000000))
tried('unshare_mount', lambda: call(272, 0x00020000))
tried('chroot', lambda: call(161, b'/tmp'))
tried('mknod', lambda: call(133, b'/tmp/null2', 0o20666, os.makedev(1, 3)))
tried('open_by_handle_at', lambda: call(304, -100, ctypes.create_string_buffer(b'\\x08\\0\\0\\0\\x01\\0\\0\\0' + b'\\x02' + b'\\0' * 7), 0))
tried('bpf', lambda: call(321, 0, ctypes.create_string_buffer(struct.pack('IIII', 1, 4, 4, 1) + bytes(100)), 120))
tried('userfaultfd_kernel', lambda: call(323, 0))
tried('fanotify', lambda: call(300, 0, 0))
tried('acct', lambda: call(163, b'/tmp/acct'))
tried('perf_guarded_shell', lambda: call(298, ctypes.create_string_buffer(struct.pack('IIQ', 1, 128, 1) + bytes(112)), os.getppid(), -1, -1, 0))
tried('proc1_root', lambda: sorted(os.listdir('/proc/1/root/')) == sorted(os.listdir('/')))
tried('proc1_root_up', lambda: os.path.exists('/proc/1/root/../../root') or os.path.exists('/proc/1/root/../../home'))
tried('proc1_environ', lambda: ','.join(sorted(v.split(b'=')[0].decode() for v in open('/proc/1/environ', 'rb').read().split(b'\\0') if v)))
tried('proc_self_exe_up', lambda: os.path.realpath('/proc/self/root/..'))
tried('tty', lambda: os.open('/dev/tty', os.O_RDWR))
tried('sysrq', lambda: open('/proc/sysrq-trigger', 'w').write('h'))
tried('core_pattern', lambda: open('/proc/sys/kernel/core_pattern', 'w').write('|/tmp/x'))
tried('cgroup_release', lambda: open('/sys/fs/cgroup/cgroup.procs', 'a').write('1'))
tried('run', lambda: os.listdir('/run'))
tried('var_run', lambda: os.listdir('/var/run'))
tried('x11_dir', lambda: os.listdir('/tmp/.X11-unix'))
`;

describe('the kernel and the host around it', () => {
  let sb: Sandbox;
  let server: net.Server;
  let port: number;
  const hits: string[] = [];
  beforeAll(async () => {
    // What a developer's machine offers around a sandbox: an X11 display's abstract socket and a
    // service on loopback, each answering with a secret.
    server = net.createServer((s) => {
      hits.push('tcp');
      s.end('HOSTSECRET\n');
    });
    server.listen(0, '0.0.0.0');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
    sb = await openSandbox({ policy: policy(), backend: 'bwrap', installHosts: false, limits: LIMITS, env: { ...process.env, ANTHROPIC_API_KEY: 'sk-battery-secret', NPM_TOKEN: 'npm_battery_secret' } });
    open.push(sb);
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('namespaces, privileges, /proc and the devices give nothing: each call is refused or shows only the sandbox', async () => {
    const r = await sb.exec(python(KERNEL));
    const got = Object.fromEntries(r.output.trim().split('\n').map((l) => l.split(' ') as [string, string]));
    expect(got).toEqual({
      // Joining the holder's namespaces needs a capability the sandbox user never has in them.
      setns_user: 'EINVAL',
      setns_mnt: 'EPERM',
      setns_net: 'EPERM',
      // User namespaces are capped at the two the sandbox needs; the rest need a capability.
      unshare_user: 'ENOSPC',
      unshare_mount: 'EPERM',
      chroot: 'EPERM',
      mknod: 'EPERM',
      open_by_handle_at: 'EPERM',
      bpf: 'EPERM',
      userfaultfd_kernel: 'EPERM',
      fanotify: 'EPERM',
      acct: 'EPERM',
      // The command's own shell runs a binary it may not read: not even sampled.
      perf_guarded_shell: 'EACCES',
      proc1_root: 'True',
      proc1_root_up: 'False',
      // The holder's own environment is readable, and is the network layer's: PATH and what bash adds.
      proc1_environ: 'PATH,PWD,SHLVL,_',
      proc_self_exe_up: '/',
      tty: 'ENXIO',
      sysrq: expect.stringMatching(/^(EROFS|ENOENT)$/),
      core_pattern: 'EROFS',
      cgroup_release: expect.stringMatching(/^(EROFS|EACCES|ENOENT)$/),
      run: 'ENOENT',
      var_run: 'ENOENT',
      x11_dir: 'ENOENT',
    });
  });

  it("the host's loopback, by any address a dial can name, and its abstract sockets are unreachable", async () => {
    const name = `@/tmp/.X11-unix/X${port}`;
    const x11 = net.createServer((s) => {
      hits.push('x11');
      s.end('HOSTSECRET\n');
    });
    x11.listen(`\0${name.slice(1)}`);
    await once(x11, 'listening');
    try {
      const r = await sb.exec(python(`
import socket
for family, address in [(socket.AF_INET, ('127.0.0.1', ${port})), (socket.AF_INET, ('0.0.0.0', ${port})), (socket.AF_INET, ('127.1.2.3', ${port})), (socket.AF_INET6, ('::1', ${port})), (socket.AF_INET6, ('::ffff:127.0.0.1', ${port})), (socket.AF_INET6, ('::', ${port})), (socket.AF_UNIX, '\\0${name.slice(1)}')]:
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(address); print('REACHED', address, s.recv(64))
    except OSError as e:
        print('refused', e.errno)
`));
      expect(r.output).not.toMatch(/REACHED|HOSTSECRET/);
      expect(r.output.match(/^refused/gm)).toHaveLength(7);
      expect(hits).toEqual([]);
    } finally {
      await new Promise<void>((r) => x11.close(() => r()));
    }
  });

  it("no key of the harness's environment is in any process inside, even one caught while it enters", async () => {
    const started = await sb.exec(`cat > "$TMPDIR/env.py" <<'PY'
import os, time
names = set()
while not os.path.exists(os.environ['TMPDIR'] + '/stop'):
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        try: env = open('/proc/%s/environ' % pid, 'rb').read()
        except OSError: continue
        names.update(part.split(b'=')[0].decode() for part in env.split(b'\\0') if part)
        if b'battery' in env: names.add('SECRET-SEEN')
open(os.environ['TMPDIR'] + '/names.part', 'w').write(' '.join(sorted(names)))
os.rename(os.environ['TMPDIR'] + '/names.part', os.environ['TMPDIR'] + '/names')
PY
setsid python3 "$TMPDIR/env.py" >/dev/null 2>&1 < /dev/null & sleep 0.3; echo watching`);
    expect(started.output).toBe('watching\n');
    for (let i = 0; i < 30; i++) await sb.exec('true');
    const r = await sb.exec('touch "$TMPDIR/stop"; while [ ! -e "$TMPDIR/names" ]; do sleep 0.05; done; cat "$TMPDIR/names"');
    expect(r.output).not.toMatch(/ANTHROPIC_API_KEY|NPM_TOKEN|SECRET-SEEN/);
    // What a command gets is the sandbox's own short list.
    expect(r.output.trim().split(' ')).toEqual(expect.arrayContaining(['HOME', 'PATH', 'TMPDIR', 'HTTPS_PROXY']));
  });
});

/** Every file under a folder, relative to it (links as links, never followed). */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(join(d, e.name), join(rel, e.name)) : out.push(join(rel, e.name));
  };
  if (existsSync(dir)) walk(dir, '');
  return out.sort();
}

describe('what a command leaves for the harness to walk', () => {
  let hostDir: string;
  beforeAll(() => {
    hostDir = mkdtempSync(join(tmpdir(), 'qs-battery-walk-'));
    chmodSync(hostDir, 0o755);
  });
  afterAll(() => rmSync(hostDir, { recursive: true, force: true }));

  it('links, FIFOs, odd names and forged cache entries lead the usage walk, the cache harvest and the removal nowhere', async () => {
    // Host files a link from inside could name: a large one, and one whose SHA-512 is the name of
    // the blob that links to it, so a harvest that followed the link would find it valid.
    const big = join(hostDir, 'big.bin');
    writeFileSync(big, Buffer.alloc(8 * 1024 * 1024, 1), { mode: 0o644 });
    const lure = 'HOST-FILE whose hash names the blob linking to it';
    const lureHash = createHash('sha512').update(lure).digest('hex');
    const lurePath = join(hostDir, 'lure');
    writeFileSync(lurePath, lure, { mode: 0o644 });
    const hostDist = join(hostDir, 'site', 'evil-1.0.dist-info');
    mkdirSync(hostDist, { recursive: true });
    writeFileSync(join(hostDist, 'INSTALLER'), 'pip\n');
    chmodSync(join(hostDir, 'site'), 0o755);
    const good = 'a real tarball the run downloaded';
    const goodHash = createHash('sha512').update(good).digest('hex');
    const blob = (h: string): string => `.npm/_cacache/content-v2/sha512/${h.slice(0, 2)}/${h.slice(2, 4)}/${h.slice(4)}`;
    const fifoHash = 'ab'.repeat(64);
    const layout = createLayout();
    const store = mkdtempSync(join(tmpdir(), 'qs-battery-store-'));
    const next = mkdtempSync(join(tmpdir(), 'qs-battery-next-home-'));
    try {
      const sb = await openSandbox({ policy: policy(), backend: 'bwrap', workspace: layout, limits: LIMITS });
      const r = await sb.exec([
        // Odd names: a newline, `..` after one, bytes that are no UTF-8, the longest a name can be.
        `touch $'a\\nb' $'..\\n' $'\\xff\\xfe' -- -rf '...' "$(printf 'n%.0s' $(seq 255))"; mkdir $'d\\n..' && touch $'d\\n../f'`,
        // What a folder whose name is no UTF-8 holds is disk the run used all the same.
        `mkdir $'\\xff' && head -c 1048576 /dev/zero > $'\\xff/hidden'`,
        `ln -s '${big}' big; ln -s '${hostDir}' hostdir; ln '${big}' hard 2>/dev/null || echo no-hardlink`,
        `cd "$HOME" && mkdir -p $(dirname ${blob(lureHash)}) $(dirname ${blob(goodHash)}) $(dirname ${blob(fifoHash)})`,
        `ln -s '${lurePath}' ${blob(lureHash)}; mkfifo ${blob(fifoHash)}; printf '%s' '${good}' > ${blob(goodHash)}`,
        // A forged index entry: the next attempt would take this content for a package's metadata.
        `mkdir -p .npm/_cacache/index-v5/aa/bb && printf '\\n%s\\t{"key":"make-fetch-happen:request-cache:https://registry.invalid/lodash","integrity":"sha512-forged","time":99999999999999}' x > .npm/_cacache/index-v5/aa/bb/${'c'.repeat(60)}`,
        `mkdir -p .local/lib/python3/site-packages/good-2.0.dist-info && echo pip > .local/lib/python3/site-packages/good-2.0.dist-info/INSTALLER`,
        `ln -s '${hostDist}' .local/lib/python3/site-packages/evil-1.0.dist-info; echo planted`,
      ].join('; '));
      await sb.close();
      expect(r.output).toBe('no-hardlink\nplanted\n');
      // The usage walk counts the links, not what they lead to.
      const usage = diskUsage(layout);
      expect(usage.complete).toBe(true);
      expect(usage.workspace_bytes).toBeGreaterThanOrEqual(1024 * 1024);
      expect(usage.workspace_bytes + usage.home_bytes).toBeLessThan(1024 * 1024 + 64 * 1024);
      // The harvest takes the real blob alone; the link and the FIFO are refused, the index never read.
      const harvested = harvestInstallCache(store, layout.home);
      expect(harvested.added).toBe(1);
      expect(harvested.refused.not_regular).toBe(2);
      expect(filesUnder(store).filter((f) => !f.startsWith('npm/tmp'))).toEqual([join('npm', 'content-v2', 'sha512', goodHash.slice(0, 2), goodHash.slice(2, 4), goodHash.slice(4))]);
      expect(installedDists([layout.workspace, layout.home]).map((d) => d.name)).toEqual(['good']);
      // The next attempt's home gets the real blob, and no index entry the attempt made.
      expect(await seedInstallCache(store, next)).toBe(1);
      expect(filesUnder(npmCacheOf(next))).toEqual([join('content-v2', 'sha512', goodHash.slice(0, 2), goodHash.slice(2, 4), goodHash.slice(4))]);
      expect(removeLayout(layout)).toBe(true);
      expect(existsSync(layout.root)).toBe(false);
      // The host's files are as they were.
      expect(statSync(big).size).toBe(8 * 1024 * 1024);
      expect(readFileSync(lurePath, 'utf8')).toBe(lure);
      expect(readFileSync(join(hostDist, 'INSTALLER'), 'utf8')).toBe('pip\n');
    } finally {
      if (existsSync(layout.root)) removeLayout(layout);
      rmSync(store, { recursive: true, force: true });
      rmSync(next, { recursive: true, force: true });
    }
  });
});

describe('what outlives a command', () => {
  it('nothing the sandbox started runs after close(): daemons, double forks, stopped, re-forking and signal-deaf processes', async () => {
    const m = marker('outlive');
    const sb = await openSandbox({ policy: policy(), backend: 'bwrap', installHosts: false, limits: LIMITS });
    open.push(sb);
    const r = await sb.exec([
      `setsid -f bash -c 'exec -a ${m}-setsid sleep 300' >/dev/null 2>&1`,
      `nohup bash -c 'trap "" TERM HUP INT; (exec -a ${m}-deaf sleep 300) & exit' >/dev/null 2>&1 &`,
      `bash -c 'exec -a ${m}-stopped sleep 300' & kill -STOP $!`,
      `(while :; do bash -c 'exec -a ${m}-refork sleep 1' & wait; done) >/dev/null 2>&1 &`,
      python(`import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.execvp('sleep', ['${m}-double', '300'])`),
      'echo started',
    ].join('\n'));
    expect(r.output).toBe('started\n');
    expect(pidsWith(m).length).toBeGreaterThanOrEqual(5);
    const closed = await sb.close();
    expect(closed.leftRunning.length).toBeGreaterThanOrEqual(4);
    expect(pidsWith(m)).toEqual([]);
  });
});
