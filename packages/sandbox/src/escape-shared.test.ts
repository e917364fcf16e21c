// The third red-team battery: what a sandbox shares, by the kernel's own bookkeeping, with the
// harness that opened it and with the other sandboxes running beside it (qs run --workers N): state
// the kernel keeps per process tree or per user rather than per namespace. Each outcome is judged
// from the host (what the harness's keyring holds afterwards, what another sandbox could still do).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapUnavailable, inotifyShare } from './backends/bwrap.js';
import { removeLayout } from './layout.js';
import { openSandbox } from './open.js';
import { bundleLibraryInto, policy } from './test-helpers.js';
import type { Sandbox } from './types.js';

const LIMITS = { processes: 128, memoryBytes: 512 * 1024 * 1024, tmpBytes: 16 * 1024 * 1024, shmBytes: 16 * 1024 * 1024 };

/** Runs a python program given as text (no shell quoting to get wrong). */
const python = (program: string): string => `python3 - <<'PY'\n${program}\nPY`;

beforeAll(() => {
  const problem = bwrapUnavailable();
  if (problem) throw new Error(`the enforced backend cannot run here: ${problem}`);
});

/** A harness of its own: opens a sandbox, runs each command, prints one JSON line of outputs. */
const HARNESS = `
import { openSandbox, removeLayout } from './sandbox.mjs';
const commands = JSON.parse(process.argv[2]);
const policy = { explicit: [], docs_hosts: [], registries: [], registries_source: 'default' };
const sb = await openSandbox({ policy, backend: 'bwrap', installHosts: false, limits: ${JSON.stringify(LIMITS)} });
const outputs = [];
for (const c of commands) outputs.push((await sb.exec(c, { timeoutMs: 30000 })).output);
await sb.close();
removeLayout(sb.describe());
console.log(JSON.stringify(outputs));
`;

/** The kernel's key calls, by number (x86_64, the ABI these tests run under). */
const KEYS = `
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(name, n, *a):
    r = libc.syscall(ctypes.c_long(n), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    if r < 0: print(name, errno.errorcode.get(ctypes.get_errno(), '?')); return None
    print(name, 'ok'); return r
SESSION = -3
# KEYCTL_SEARCH the session keyring for the harness's key, then KEYCTL_READ it.
found = call('search', 250, 10, SESSION, b'user', b'qs-harness-secret', 0)
if found is not None:
    buf = ctypes.create_string_buffer(64)
    n = libc.syscall(ctypes.c_long(250), ctypes.c_long(11), ctypes.c_long(found), buf, ctypes.c_long(64))
    print('stolen', buf.raw[:max(n, 0)].decode())
call('session_id', 250, 0, SESSION, 0)
call('add_key', 248, b'user', b'qs-planted-by-sandbox', b'x', 1, SESSION)
call('request_key', 249, b'user', b'qs-upcall', b'callout', SESSION)
call('join_session', 250, 1, b'qs-own')
`;

/**
 * On the host: gives the harness a session keyring of its own holding a secret, as a login session
 * (pam_keyinit) or a CI runner's keyring would, runs the harness in it, then says what the keyring
 * holds once it is done.
 */
const WITH_KEYRING = `
import ctypes, json, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def keyctl(*a): return libc.syscall(ctypes.c_long(250), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
assert keyctl(1, b'qs-harness-session') > 0
assert libc.syscall(ctypes.c_long(248), b'user', b'qs-harness-secret', b'harness-secret-value', ctypes.c_size_t(20), ctypes.c_long(-3)) > 0
run = subprocess.run(sys.argv[1:], capture_output=True, text=True)
planted = keyctl(10, -3, b'user', b'qs-planted-by-sandbox', 0) > 0
print(json.dumps({'code': run.returncode, 'out': run.stdout, 'err': run.stderr, 'planted': planted}))
`;

describe('what a sandbox shares with the harness that opened it', () => {
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'qs-shared-'));
    await bundleLibraryInto(dir);
    writeFileSync(join(dir, 'harness.mjs'), HARNESS);
    writeFileSync(join(dir, 'keyring.py'), WITH_KEYRING);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("the harness's session keyring is out of reach: its keys cannot be read, nor keys planted in it, nor an upcall asked for", async () => {
    const r = spawnSync('python3', [join(dir, 'keyring.py'), process.execPath, join(dir, 'harness.mjs'), JSON.stringify([python(KEYS)])], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const got = JSON.parse(r.stdout) as { code: number; out: string; err: string; planted: boolean };
    expect(got.code, got.err).toBe(0);
    const [output] = JSON.parse(got.out.trim().split('\n').at(-1) ?? '[]') as string[];
    expect(output).not.toContain('harness-secret-value');
    expect(Object.fromEntries((output ?? '').trim().split('\n').map((l) => l.split(' ') as [string, string]))).toEqual({
      search: 'EPERM',
      session_id: 'EPERM',
      add_key: 'EPERM',
      request_key: 'EPERM',
      join_session: 'EPERM',
    });
    expect(got.planted).toBe(false);
  });
});

/** Makes inotify instances (or watches, on one instance) until the kernel refuses: how many, and why it stopped. */
const HOG = (what: 'instances' | 'watches'): string => `
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
n = 0
if '${what}' == 'instances':
    while n < 100000 and libc.inotify_init1(0) >= 0: n += 1
else:
    fd = libc.inotify_init1(0)
    # In the private /tmp: a tmpfs that dies with the sandbox, never walked on the host.
    base = '/tmp/w'
    os.mkdir(base)
    while n < 300000:
        d = '%s/%d' % (base, n)
        os.mkdir(d)
        if libc.inotify_add_watch(fd, d.encode(), 2) < 0: break
        n += 1
print(n, errno.errorcode.get(ctypes.get_errno(), 'none'))
`;

describe('what a sandbox shares with the sandbox beside it', () => {
  it("inotifyShare gives each sandbox a quarter of the host's per-user inotify limits, with a floor no higher than the host's own", () => {
    const host = (values: Record<string, string>) => (name: string): string => {
      if (values[name] === undefined) throw new Error('ENOENT');
      return values[name];
    };
    expect(inotifyShare(host({ max_inotify_instances: '128\n', max_inotify_watches: '192530\n' }))).toEqual({ instances: 32, watches: 48132 });
    expect(inotifyShare(host({ max_inotify_instances: '16', max_inotify_watches: '2000' }))).toEqual({ instances: 8, watches: 1024 });
    expect(inotifyShare(host({ max_inotify_instances: '4', max_inotify_watches: '100' }))).toEqual({ instances: 4, watches: 100 });
    expect(inotifyShare(host({ max_inotify_instances: '128' }))).toBeUndefined();
    expect(inotifyShare(host({ max_inotify_instances: 'x', max_inotify_watches: '100' }))).toBeUndefined();
  });

  const open: Sandbox[] = [];
  afterAll(async () => {
    for (const sb of open.splice(0)) {
      await sb.close();
      removeLayout(sb.describe());
    }
  });
  const hostLimit = (name: string): number => Number(readFileSync(`/proc/sys/user/${name}`, 'utf8'));

  it("one sandbox cannot take the inotify instances and watches the kernel counts per user, which the one beside it (and the host user's own watchers) need", async () => {
    // Both sandboxes are the same host uid, and the kernel counts inotify per uid across every
    // namespace: the first one's hog left the second none (EMFILE), so its dev server's watcher failed.
    const [a, b] = [await openSandbox({ policy: policy(), backend: 'bwrap', installHosts: false, limits: LIMITS }), await openSandbox({ policy: policy(), backend: 'bwrap', installHosts: false, limits: LIMITS })];
    open.push(a as Sandbox, b as Sandbox);
    const hold = (what: 'instances' | 'watches'): string =>
      `(python3 -c "$(cat <<'PY'\n${HOG(what)}\nimport time, sys; sys.stdout.flush(); time.sleep(120)\nPY\n)" > "$TMPDIR/${what}" 2>&1 &) ; while [ ! -s "$TMPDIR/${what}" ]; do sleep 0.05; done; cat "$TMPDIR/${what}"`;
    // Each hog stops where the kernel refuses (ENOSPC: no watch left; EMFILE: no instance left).
    const watches = (await (a as Sandbox).exec(hold('watches'), { timeoutMs: 120_000 })).output.trim().split(' ');
    expect(watches[1]).toBe('ENOSPC');
    expect(Number(watches[0])).toBeLessThan(hostLimit('max_inotify_watches') / 2);
    expect(Number(watches[0])).toBeGreaterThanOrEqual(1024);
    const instances = (await (a as Sandbox).exec(hold('instances'), { timeoutMs: 60_000 })).output.trim().split(' ');
    expect(instances[1]).toBe('EMFILE');
    expect(Number(instances[0])).toBeLessThan(hostLimit('max_inotify_instances') / 2);
    expect(Number(instances[0])).toBeGreaterThanOrEqual(7);
    // The sandbox beside it still watches, with instances and watches of its own.
    const r = await (b as Sandbox).exec(python(`import ctypes, errno, os\nlibc = ctypes.CDLL(None, use_errno=True)\nfds = [libc.inotify_init1(0) for _ in range(4)]\nprint('instances', all(f >= 0 for f in fds))\nprint('watch', libc.inotify_add_watch(fds[0], os.environ['HOME'].encode(), 2) >= 0)`));
    expect(r.output).toBe('instances True\nwatch True\n');
  });

  it('one sandbox cannot take the message-queue bytes and queued signals the kernel counts per user either', async () => {
    // The same host uid again: what one sandbox's queues (they outlive their process) and blocked
    // realtime signals held, the kernel refused to the other (mq_open EMFILE, sigqueue EAGAIN).
    const [a, b] = [await openSandbox({ policy: policy(), backend: 'bwrap', installHosts: false, limits: LIMITS }), await openSandbox({ policy: policy(), backend: 'bwrap', installHosts: false, limits: LIMITS })];
    open.push(a as Sandbox, b as Sandbox);
    const hogs = (max: number): string => `
import ctypes, errno, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
rt = ctypes.CDLL('librt.so.1', use_errno=True)
class Attr(ctypes.Structure): _fields_ = [('flags', ctypes.c_long), ('maxmsg', ctypes.c_long), ('msgsize', ctypes.c_long), ('cur', ctypes.c_long), ('pad', ctypes.c_long * 4)]
class Val(ctypes.Union): _fields_ = [('i', ctypes.c_int)]
def count(make):
    n = 0
    while n < ${max} and make(n): n += 1
    return '%d %s' % (n, errno.errorcode.get(ctypes.get_errno(), 'none') if n < ${max} else 'none')
mq = count(lambda n: rt.mq_open(('/qs-%d-%d' % (os.getpid(), n)).encode(), os.O_CREAT | os.O_RDWR, 0o600, ctypes.byref(Attr(0, 10, 8192, 0))) >= 0)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])
sig = count(lambda n: libc.sigqueue(os.getpid(), signal.SIGRTMIN, Val(n)) == 0)
print('mq', mq); print('sig', sig); sys.stdout.flush()
if ${max} > 1: time.sleep(120)
`;
    const held = await (a as Sandbox).exec(`(python3 -c "$(cat <<'PY'\n${hogs(1_000_000)}\nPY\n)" > "$TMPDIR/hog" 2>&1 &) ; while [ "$(cat "$TMPDIR/hog" 2>/dev/null | wc -l)" -lt 2 ]; do sleep 0.05; done; cat "$TMPDIR/hog"`, { timeoutMs: 60_000 });
    // Each hog stopped where its own sandbox's share ran out.
    expect(held.output).toMatch(/^mq \d+ EMFILE\nsig \d+ EAGAIN\n$/);
    const r = await (b as Sandbox).exec(python(hogs(1)));
    expect(r.output).toBe('mq 1 none\nsig 1 none\n');
  });

  it('no core dump leaves a sandbox: the core limit is 1, soft and hard (the one a piped core_pattern honours), and cannot be raised', async () => {
    const sb = await openSandbox({ policy: policy(), backend: 'bwrap', installHosts: false, limits: LIMITS });
    open.push(sb as Sandbox);
    // In bytes, from the kernel (bash's ulimit counts 1024-byte blocks, and shows a 1-byte limit as 0).
    const core = "grep '^Max core file size' /proc/self/limits | tr -s ' '";
    const r = await (sb as Sandbox).exec(`${core}; ulimit -H -c unlimited 2>/dev/null && echo raised || echo kept; sh -c "${core.replace(/"/g, '\\"')}"`);
    expect(r.output).toMatch(/^Max core file size 1 1 bytes ?\nkept\nMax core file size 1 1 bytes ?\n$/);
  });

  it('two sandboxes side by side see, signal and reach nothing of each other: processes, sockets, IPC, memory files, /tmp', async () => {
    const [a, b] = [await openSandbox({ policy: policy(), backend: 'bwrap', installHosts: false, limits: LIMITS }), await openSandbox({ policy: policy(), backend: 'bwrap', installHosts: false, limits: LIMITS })];
    open.push(a as Sandbox, b as Sandbox);
    const mark = `qs-beside-${process.pid}`;
    // A leaves what B might find: a named process, an abstract and a named socket, SysV memory, a
    // POSIX queue, files in /dev/shm, /tmp and /var/tmp, its workspace's path.
    const planted = await (a as Sandbox).exec(`
(exec -a ${mark} sleep 120) >/dev/null 2>&1 &
echo A-SECRET > /dev/shm/${mark}; echo A-SECRET > /tmp/${mark}; echo A-SECRET > /var/tmp/${mark}
(python3 -c "$(cat <<'PY'
import ctypes, os, socket, time
libc = ctypes.CDLL(None, use_errno=True)
s1 = socket.socket(socket.AF_UNIX); s1.bind('\\0${mark}'); s1.listen()
s2 = socket.socket(socket.AF_UNIX); s2.bind(os.environ['TMPDIR'] + '/${mark}.sock'); s2.listen()
libc.shmget(0x5e6, 4096, 0o1666)
open(os.environ['TMPDIR'] + '/ready', 'w').close()
time.sleep(120)
PY
)" >/dev/null 2>&1 &)
while [ ! -e "$TMPDIR/ready" ]; do sleep 0.05; done; echo planted`);
    expect(planted.output).toBe('planted\n');
    const where = (a as Sandbox).describe();
    const r = await (b as Sandbox).exec(python(`
import ctypes, os, signal, socket
libc = ctypes.CDLL(None, use_errno=True)
# A's sleep is named by its argv[0]; B's own shell only mentions the name in its script.
seen = [p for p in os.listdir('/proc') if p.isdigit() and open('/proc/%s/cmdline' % p, errors='replace').read().startswith('${mark}\\0')]
print('process', 'SEEN' if seen else 'none')
for name, addr in [('abstract', '\\0${mark}'), ('named', '${where.tmp}/${mark}.sock')]:
    s = socket.socket(socket.AF_UNIX)
    try: s.connect(addr); print(name, 'REACHED')
    except OSError as e: print(name, 'refused')
print('sysv', 'SEEN' if libc.shmget(0x5e6, 4096, 0o666) >= 0 else 'none')
for f in ['/dev/shm/${mark}', '/tmp/${mark}', '/var/tmp/${mark}', '${where.workspace}', '${where.tmp}']:
    print('file', 'SEEN' if os.path.exists(f) else 'none')
`));
    expect(r.output).toBe(['process none', 'abstract refused', 'named refused', 'sysv none', ...Array(5).fill('file none'), ''].join('\n'));
    // B kills everything it can: A's process goes on.
    await (b as Sandbox).exec('kill -KILL -1 2>/dev/null; true');
    expect((await (a as Sandbox).exec(`pgrep -f ${mark} >/dev/null && echo alive`)).output).toBe('alive\n');
  });

  it('a hard link from the workspace to a file the sandbox shows, or to another of its folders, is refused: nothing on the host gains a name there', async () => {
    const sb = await openSandbox({ policy: policy(), backend: 'bwrap', installHosts: false, limits: LIMITS });
    open.push(sb);
    const r = await sb.exec(`echo x > "$HOME/own" && echo y > "$TMPDIR/own"; for f in /usr/bin/env /etc/hosts /etc/passwd /opt/quickloop/bin/sudo "$HOME/own" "$TMPDIR/own"; do ln "$f" "./l$RANDOM" 2>/dev/null && echo "LINKED $f" || echo refused; done`);
    expect(r.output).toBe('refused\n'.repeat(6));
    expect(readdirSync(sb.describe().workspace)).toEqual([]);
  });
});
