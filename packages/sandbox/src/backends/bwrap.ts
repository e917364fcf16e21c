// The enforced Linux backend: a network layer and a bubblewrap namespace set per stage, commands entered into them with nsenter.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, chownSync, closeSync, constants, copyFileSync, mkdirSync, mkdtempSync, openSync, readFileSync, realpathSync, rmSync, statSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { terminalSafe } from '@quickloop/cli-kit';
import { coverConfigs, type CoveredConfig } from '../config-files.js';
import type { DenialRules } from '../denials.js';
import { childrenOf, namespaceLeftovers } from '../leftovers.js';
import { confine, makeLimits, type LimitInForce, type SandboxLimits } from '../limits.js';
import { isolateProgram, ISOLATE_INSIDE } from '../isolate.js';
import { killGroup, killGroupsAndWait } from '../process.js';
import { outerIds, rootPlan, shownInside } from '../rootfs.js';
import { seccompProgram, seccompUnavailable } from '../seccomp.js';
import { markSupportOwner, removeStaleSupport, SUPPORT_PREFIX } from '../stale-support.js';
import type { ExecResult, WorkspaceLayout } from '../types.js';
import type { BackendSession } from './backend.js';

/**
 * The proxy's port inside the sandbox's own network namespace: nothing else listens there at start,
 * and it is the conventional proxy port, so it is unlikely to be what a quickstart's server wants.
 */
export const INSIDE_PROXY_PORT = 3128;

/** The sandbox user, inside: never root, and the same uid whoever runs the harness. */
export const INSIDE_UID = 1000;
export const INSIDE_USER = 'quickloop';

/** Where the sandbox's own read-only support files (the sudo note, passwd) appear inside. */
export const SUPPORT_INSIDE = '/opt/quickloop';

/**
 * Tools the backend needs besides bwrap: unshare makes the network layer, socat forwards the inside
 * proxy port to the harness's Unix socket, nsenter runs a command in the running namespaces, setpriv
 * drops privileges, ip routes every address to loopback so dials around the proxy reach a recorder.
 */
const TOOLS = ['bwrap', 'socat', 'nsenter', 'setpriv', 'unshare', 'ip'] as const;

/** The harness runs as root: the sandbox then runs as an unprivileged host uid (outerIds), never as root. */
const asRoot = (): boolean => process.getuid?.() === 0;

/** Drops a root harness to the sandbox's host uid before anything of the sandbox runs. */
function dropRoot(): string[] {
  if (!asRoot()) return [];
  const { uid, gid } = outerIds();
  return ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--'];
}

/** Why bwrap cannot run here, or undefined when it can (a real sandbox is made and torn down). */
export function bwrapUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `bubblewrap needs Linux (this is ${process.platform})`;
  for (const tool of TOOLS) {
    if (onPath(tool) === undefined) return `${tool} is not installed (apt-get install bubblewrap socat util-linux iproute2)`;
  }
  const noFilter = seccompUnavailable();
  if (noFilter !== undefined) return noFilter;
  // The probe takes the real path: the network layer's user namespace, then bwrap's own inside it,
  // under the seccomp program (given on stdin): where the kernel cannot install it, the sandbox
  // could not keep one process from tracing another.
  const argv = [...dropRoot(), 'unshare', '--user', '--map-root-user', '--net', '--', 'unshare', '--user', `--map-user=${INSIDE_UID}`, `--map-group=${INSIDE_UID}`, '--', 'bwrap', '--unshare-user', '--unshare-pid', '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', '--seccomp', '0', '--', 'true'];
  const probe = spawnSync(argv[0] as string, argv.slice(1), { encoding: 'utf8', timeout: 10_000, cwd: '/', input: seccompProgram() });
  if (probe.status !== 0) return `bwrap cannot make namespaces here: ${(probe.stderr || probe.error?.message || `exit ${probe.status}`).trim().split('\n')[0]}`;
  return undefined;
}

/**
 * What `command -v` finds for a program, looked up here rather than by a shell: every stage of every
 * attempt probes the same six tools, and a shell apiece was most of what the probe cost.
 */
export function onPath(name: string, path: string | undefined = process.env.PATH): string | undefined {
  // A shell without PATH searches its own default list; an empty entry means the current folder.
  const dirs = (path ?? DEFAULT_PATH).split(':');
  for (const dir of dirs) {
    const file = join(dir === '' ? '.' : dir, name);
    try {
      if (statSync(file).isFile()) {
        accessSync(file, constants.X_OK);
        return file;
      }
    } catch {
      // not here, or not executable by us: the next folder
    }
  }
  return undefined;
}

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

let version: string | null = null;
/** bwrap's version, asked once a process (a stage opens a sandbox per task, each one reports it). */
export function bwrapVersion(): string {
  if (version === null) {
    const out = spawnSync('bwrap', ['--version'], { encoding: 'utf8' });
    version = (out.stdout || '').trim() || 'bubblewrap';
  }
  return version;
}

/** Where a root harness shows the layout to the sandbox's host uid, inside the support folder. */
const VIEW = 'layout';

/**
 * The layout may sit under folders the sandbox's host uid cannot pass through (a 0700 TMPDIR, a
 * checkout in root's home). A root harness therefore binds it into the support folder in a mount
 * namespace of the sandbox's own, before dropping to that uid: bwrap then reaches it there.
 */
function layoutView(layout: WorkspaceLayout, supportDir: string): string[] {
  if (!asRoot()) return [];
  const view = join(supportDir, VIEW);
  mkdirSync(view, { mode: 0o711 });
  return ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', 'mount --bind "$1" "$2" && shift 2 && exec "$@"', 'quickloop-view', layout.root, view];
}

/** bwrap reports its child's pid on this fd. */
const INFO_FD = 3;

/**
 * bwrap reads the seccomp program (seccomp.ts) from this fd: 4 for the holder's bwrap (3 is its info
 * fd), 3 for the one each command starts under (COMMAND_FILTER).
 */
const SECCOMP_FD = 4;
const COMMAND_SECCOMP_FD = 3;

/** The seccomp program, in the support folder (never shown inside). */
const SECCOMP_FILE = 'seccomp.bpf';

/**
 * bwrap arguments for the stage's namespaces; exported for tests and the README. `configs` are the
 * host config files shown without their credentials (coverConfigs), each copy bound over its file.
 */
export function bwrapArgs(layout: WorkspaceLayout, supportDir: string, limits: SandboxLimits, configs: readonly CoveredConfig[] = []): string[] {
  const args = ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--die-with-parent', '--new-session', '--hostname', 'sandbox'];
  args.push(...rootPlan().args);
  // Generated, never the host's: who the sandbox user is, localhost, and a resolver that only the
  // recorder answers (every address is routed to loopback inside).
  for (const name of ['passwd', 'group', 'hosts', 'resolv.conf', 'hostname']) args.push('--ro-bind', join(supportDir, 'etc', name), `/etc/${name}`);
  // After the root's binds, so each copy is what the path shows; the kernel locks a mount inherited
  // into a namespace the sandbox user does not own, so the original cannot be unmounted back.
  for (const c of configs) args.push('--ro-bind', c.copy, c.path);
  args.push('--ro-bind', join(supportDir, 'bin'), `${SUPPORT_INSIDE}/bin`);
  args.push('--ro-bind', join(supportDir, 'libexec'), `${SUPPORT_INSIDE}/libexec`);
  // No --dev: bwrap would then need uid 0 in a first user namespace and put the sandbox user in a
  // nested one, which nsenter cannot join with the others. The devices a toolchain opens are bound;
  // there is no devpts, so a pseudo-terminal cannot be allocated.
  args.push('--tmpfs', '/dev');
  for (const dev of ['null', 'zero', 'full', 'random', 'urandom', 'tty']) args.push('--dev-bind', `/dev/${dev}`, `/dev/${dev}`);
  args.push('--symlink', '/proc/self/fd', '/dev/fd', '--symlink', '/proc/self/fd/0', '/dev/stdin', '--symlink', '/proc/self/fd/1', '/dev/stdout', '--symlink', '/proc/self/fd/2', '/dev/stderr');
  args.push('--perms', '1777', '--size', String(limits.shmBytes), '--tmpfs', '/dev/shm');
  // /proc is read-only whole: /proc/sys and the rest that change the host or the namespace, and
  // /proc/PID/mem, which the kernel lets any process of the same user open for writing when the
  // target is dumpable (no ptrace call needed, so seccomp.ts cannot refuse it): that is how an agent's
  // program rewrote the check's grep. Opening /proc/self/fd/N (/dev/stdout) is unaffected: it opens
  // the file the fd leads to, on its own mount. /sys is read-only whole too.
  args.push('--proc', '/proc', '--remount-ro', '/proc');
  args.push('--ro-bind', '/sys', '/sys');
  args.push('--perms', '1777', '--size', String(limits.tmpBytes), '--tmpfs', '/tmp');
  args.push('--dir', '/var', '--perms', '1777', '--size', String(limits.tmpBytes), '--tmpfs', '/var/tmp');
  // The layout: its root read-only (so the marker and the folders' parent cannot be changed), the
  // three folders writable over it, all at the same paths as outside.
  // A root harness hands them over through a view (layoutView) the sandbox's host uid can reach.
  const from = asRoot() ? join(supportDir, VIEW) : layout.root;
  args.push('--ro-bind', from, layout.root);
  for (const name of ['workspace', 'home', 'tmp'] as const) args.push('--bind', join(from, name), layout[name]);
  args.push('--remount-ro', '/dev', '--remount-ro', '/');
  args.push('--chdir', layout.workspace, '--info-fd', String(INFO_FD), '--seccomp', String(SECCOMP_FD));
  return args;
}

/** A bash loop (builtins only) that closes every open fd of the shell except `keep`. */
function closeFdsBut(keep: readonly number[]): string {
  return `for f in /proc/$$/fd/*; do f=\${f##*/}; case $f in ${keep.join('|')}) ;; *) eval "exec $f>&-" 2>/dev/null ;; esac; done`;
}

/**
 * The command's own shell, inside: a copy of bash that the sandbox user may run but not read. The
 * kernel makes a process that runs a binary it cannot read non-dumpable, and a non-dumpable process
 * cannot be traced, nor its memory, fds or environment opened, by a process of the same uid without
 * CAP_SYS_PTRACE. A check's verdict is its shell's exit code, and the programs the check runs (the
 * agent's server, its scripts) run as that same uid: with plain bash one of them attached to its
 * parent (`gdb -p $PPID -ex 'call _exit(0)'`) and a failing check passed. What the shell runs is
 * ordinary (dumpable) again: only the shell is kept out of reach.
 */
export const GUARDED_SHELL = `${SUPPORT_INSIDE}/libexec/bash`;

/**
 * The command's shell first closes every fd but stdio (the harness's own inherited ones, a parent
 * pipeline's pipe), then runs the command exactly as `bash -c` would, in the guarded shell (named
 * `bash`, as $0 always was).
 */
const CLOSE_AND_RUN = `${closeFdsBut([0, 1, 2])}; exec -a bash ${GUARDED_SHELL} -c "$1"`;

/**
 * A command is entered into the namespaces by nsenter, so it is no descendant of the holder and
 * would not inherit the holder's seccomp filter. bwrap is the one tool here that installs a filter
 * from an fd, so each command starts under a bwrap of its own, between the two nsenters: there it
 * runs as root of the network layer's user namespace, makes only a throwaway mount namespace, and
 * shows the host's root as it is only so that the next nsenter is found, which then enters the
 * holder's. A filter cannot be removed, and every process the command starts inherits it, daemons
 * too.
 */
const COMMAND_FILTER = ['bwrap', '--dev-bind', '/', '/', '--seccomp', String(COMMAND_SECCOMP_FD), '--'];

const hex = (port: number): string => port.toString(16).toUpperCase().padStart(4, '0');

/**
 * The network layer's script: it owns the sandbox's network namespace and runs, as root of its own
 * user namespace, outside bwrap's mount and pid namespaces: the proxy forwarder and the recorders of
 * what bypasses the proxy (every address routed to loopback) live here, where no command can see,
 * signal or replace them. It caps user namespaces at the two the sandbox needs, then starts bwrap
 * as the unprivileged sandbox user; bwrap's holder prints `ready` once every mount is in place.
 */
function layerScript(socketDir: string, bwrap: string[], mirrorPorts: readonly number[], inotify: InotifyShare | undefined = inotifyShare()): string {
  const sock = (name: keyof typeof SOCKETS): string => join(socketDir, SOCKETS[name]);
  const catcher = `EXEC:'sh ${sock('catcher')}'`;
  // Only bwrap gets the info fd (a forwarder holding it would keep the harness waiting for its end) and the seccomp program's.
  const bg = `${INFO_FD}>&- ${SECCOMP_FD}<&- &`;
  const q = (a: string): string => `'${a.replace(/'/g, `'\\''`)}'`;
  return [
    // Nothing the harness inherited (a parent's pipe, a terminal) may reach the holder, whose fds a
    // command could open through /proc: every fd but stdio, the info fd and the seccomp program's is closed first.
    closeFdsBut([0, 1, 2, INFO_FD, SECCOMP_FD]),
    // The harness gone (killed, crashed), nothing of the sandbox may stay: the kernel sends TERM
    // (setpriv --pdeathsig) and the layer kills its group, bwrap's init with it, so every process of
    // the namespace ends too.
    // bwrap's init is in a session of its own: it is killed by name as well (pkill, where procps is).
    "trap 'pkill -KILL -P \"$b\" 2>/dev/null; kill -KILL 0' TERM",
    'set -e',
    // The inner user namespace and bwrap's: a command cannot make another (unshare fails).
    'echo 2 > /proc/sys/user/max_user_namespaces',
    'ip link set lo up',
    'ip route add local 0.0.0.0/0 dev lo',
    // The sandbox user may serve on any port, as a user on their own machine may.
    'echo 0 > /proc/sys/net/ipv4/ip_unprivileged_port_start',
    'set +e',
    // The sandbox's share of the inotify instances and watches the kernel counts per host uid (see
    // inotifyShare); where the kernel has no such limit there is nothing to share out.
    ...(inotify === undefined ? [] : [`echo ${inotify.instances} > /proc/sys/user/max_inotify_instances 2>/dev/null`, `echo ${inotify.watches} > /proc/sys/user/max_inotify_watches 2>/dev/null`]),
    `socat -b 65536 TCP-LISTEN:${INSIDE_PROXY_PORT},bind=127.0.0.1,fork,reuseaddr,nodelay UNIX-CONNECT:${sock('proxy')} ${bg}`,
    `for p in 80 443; do socat TCP4-LISTEN:$p,fork,reuseaddr ${catcher} ${bg} done`,
    `if ip -6 route add local ::/0 dev lo 2>/dev/null; then for p in 80 443; do socat TCP6-LISTEN:$p,ipv6only=1,fork,reuseaddr ${catcher} ${bg} done; socat -T2 UDP6-RECVFROM:53,ipv6only=1,fork UNIX-CONNECT:${sock('dns')} ${bg} fi`,
    `socat -T2 UDP4-RECVFROM:53,fork UNIX-CONNECT:${sock('dns')} ${bg}`,
    // A registry on the host's loopback answers at the same port on the sandbox's (see mirrors.ts).
    ...mirrorPorts.map((p) => `socat -b 65536 TCP4-LISTEN:${p},bind=127.0.0.1,fork,reuseaddr,nodelay UNIX-CONNECT:${join(socketDir, mirrorSocket(p))} ${bg}`),
    `want="0100007F:${hex(INSIDE_PROXY_PORT)} 00000000:${hex(80)} 00000000:${hex(443)}${mirrorPorts.map((p) => ` 0100007F:${hex(p)}`).join('')}"`,
    // Builtins only: forking a probe per turn would slow down the very listeners it waits for.
    `up() { local n=0 a st; while read -r _ a _ st _; do [ "$st" = 0A ] && case " $want " in *" $a "*) n=$((n+1));; esac; done < /proc/net/tcp; while read -r _ a _; do [ "$a" = 00000000:0035 ] && n=$((n+1)); done < /proc/net/udp; [ $n -ge ${4 + mirrorPorts.length} ]; }`,
    // The same for what the kernel counts per host uid against an rlimit: POSIX message-queue bytes
    // (-q) and queued signals (-i). A user namespace's part of the count is bounded by the limit of
    // the process that made it, so the sandbox's namespace is made under a quarter of the harness's
    // (queues outlive their process, blocked realtime signals stay queued: one sandbox held all of
    // them and the one beside it could open no queue, queue no signal, arm no POSIX timer).
    `for l in q i; do v=$(ulimit -S -$l); [ "$v" = unlimited ] || ulimit -S -$l $((v / ${PER_USER_SHARE} > 0 ? v / ${PER_USER_SHARE} : 1)); done`,
    'exec 8<> <(:)',
    'until up; do read -r -t 0.002 -u 8; done',
    `unshare --user --map-user=${INSIDE_UID} --map-group=${INSIDE_UID} -- bwrap ${bwrap.map(q).join(' ')} -- sh -c 'echo ready; exec sleep infinity' 8>&- &`,
    'b=$!',
    `exec ${INFO_FD}>&- ${SECCOMP_FD}<&- 8>&-`,
    // Not `wait` for all: a forwarder that dies must not end the layer while bwrap runs.
    'wait $b',
  ].join('\n');
}

/** How many inotify instances and watches one sandbox may hold. */
export interface InotifyShare {
  instances: number;
  watches: number;
}

/** A sandbox's share of what the host allows one user: at most this part of it. */
const PER_USER_SHARE = 4;

/**
 * The kernel counts inotify instances and watches per host uid, across every namespace, against
 * the host's `/proc/sys/user/max_inotify_*` (128 instances by default), and every sandbox of a
 * harness is the same host uid (the harness's own, or QUICKLOOP_SANDBOX_UID for a root harness). So
 * one command that held them all left the sandboxes beside it (`qs run --workers N`), and the host
 * user's own watchers, none: their dev servers' file watchers failed with EMFILE. The network layer
 * owns the sandbox's user namespace, where the same limits apply to the sandbox alone: each sandbox
 * may hold a quarter of the host's (never fewer than 8 instances and 1024 watches, nor more than
 * the host allows), enough for a dev server and its test watcher. Undefined where the host has no
 * such limit.
 */
export function inotifyShare(read: (name: string) => string = (name) => readFileSync(`/proc/sys/user/${name}`, 'utf8')): InotifyShare | undefined {
  const share = (name: string, floor: number): number | undefined => {
    try {
      const host = Number.parseInt(read(name).trim(), 10);
      return Number.isSafeInteger(host) && host > 0 ? Math.min(host, Math.max(floor, Math.floor(host / PER_USER_SHARE))) : undefined;
    } catch {
      return undefined;
    }
  };
  const instances = share('max_inotify_instances', 8);
  const watches = share('max_inotify_watches', 1024);
  return instances === undefined || watches === undefined ? undefined : { instances, watches };
}

/** The socket a loopback registry port is forwarded to. */
export const mirrorSocket = (port: number): string => `mirror-${port}.sock`;

/** The files of the socket folder: on the host only, never inside the sandbox. */
export const SOCKETS = { proxy: 'proxy.sock', direct: 'direct.sock', dns: 'dns.sock', catcher: 'catch-direct.sh' } as const;

// Under /tmp for a root harness: the sandbox's host uid must pass through its parents (TMPDIR may be 0700).
const supportParent = (): string => (asRoot() ? '/tmp' : tmpdir());

/** Removes the support folders this user's killed harnesses left (stale-support.ts); how many. */
export function removeStaleSessions(): number {
  return removeStaleSupport(supportParent());
}

let staleSwept = false;

/** A fresh folder for the proxy sockets and support files, outside every folder the sandbox shows. */
export function proxySocketDir(): string {
  // Once a process, before its first session.
  if (!staleSwept) {
    staleSwept = true;
    removeStaleSessions();
  }
  const dir = mkdtempSync(join(supportParent(), SUPPORT_PREFIX));
  try {
    markSupportOwner(dir);
    // The network layer connects to the sockets, and bwrap binds the support files, as the sandbox's
    // host uid: it may pass through, and only root may list or change the folder.
    if (asRoot()) chmodSync(dir, 0o711);
  } catch (error) {
    // Unnamed (a full disk), no later harness would ever judge it.
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return dir;
}

/** sudo inside: there is no privilege to give, so it says so and runs the command as the sandbox user. */
const SUDO = `#!/bin/sh
# The sandbox has no root: sudo runs its command unprivileged, as the sandbox user.
while [ $# -gt 0 ]; do
  case "$1" in
    -u|-g|-p|-C|-h|-r|-t|-U|-D) shift 2 ;;
    --) shift; break ;;
    -*) shift ;;
    *) break ;;
  esac
done
echo "sudo: no privilege in the quickloop sandbox; running as $(id -un 2>/dev/null || echo the sandbox user): $*" >&2
[ $# -eq 0 ] && exit 0
exec "$@"
`;

/** Writes the support files; returns the host config files shown inside as copies without their credentials. */
function writeSupport(supportDir: string, layout: WorkspaceLayout): CoveredConfig[] {
  mkdirSync(join(supportDir, 'etc'), { mode: 0o755 });
  mkdirSync(join(supportDir, 'bin'), { mode: 0o755 });
  const etc = (name: string, text: string): void => writeFileSync(join(supportDir, 'etc', name), text, { mode: 0o644 });
  etc('passwd', `root:x:0:0:root:/root:/usr/sbin/nologin\n${INSIDE_USER}:x:${INSIDE_UID}:${INSIDE_UID}:quickloop sandbox:${layout.home}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`);
  etc('group', `root:x:0:\n${INSIDE_USER}:x:${INSIDE_UID}:\nnogroup:x:65534:\n`);
  etc('hosts', '127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n');
  etc('resolv.conf', 'nameserver 127.0.0.1\n');
  etc('hostname', 'sandbox\n');
  writeFileSync(join(supportDir, 'bin', 'sudo'), SUDO, { mode: 0o755 });
  // Execute-only: see GUARDED_SHELL. A copy, not a bind of the host's bash, whose mode is not ours to
  // change; the folder is read-only inside, so the mode cannot be changed back there either.
  mkdirSync(join(supportDir, 'libexec'), { mode: 0o755 });
  const shell = join(supportDir, 'libexec', 'bash');
  copyFileSync(insideBash(), shell);
  chmodSync(shell, 0o111);
  // What a check serves runs in a Landlock domain of its own (isolate.ts), where this host has the wrapper.
  const isolate = isolateProgram();
  if (isolate !== undefined) writeFileSync(join(supportDir, 'libexec', basename(ISOLATE_INSIDE)), isolate, { mode: 0o555 });
  writeFileSync(join(supportDir, SECCOMP_FILE), seccompProgram() as Buffer, { mode: 0o644 });
  // Secrets never enter a sandbox: the package managers' system config and the shell's start-up files are shown without their tokens.
  return coverConfigs(supportDir, rootPlan());
}

/**
 * The bash a command's shell is copied from: the one the harness's PATH finds when the sandbox shows
 * it (a system folder, a bound toolchain prefix), else the system's.
 */
function insideBash(): string {
  const found = onPath('bash');
  if (found !== undefined && shownInside(found)) return realpathSync(found);
  return realpathSync('/bin/bash');
}

export interface BwrapSession extends BackendSession {
  readonly limits: LimitInForce[];
}

export async function startBwrap(layout: WorkspaceLayout, socketDir: string, limits: SandboxLimits, mirrorPorts: readonly number[] = []): Promise<BwrapSession> {
  // socat EXECs this for each dial it catches: SOCAT_SOCKADDR is the address the tool dialled.
  writeFileSync(join(socketDir, SOCKETS.catcher), `echo "$SOCAT_SOCKADDR $SOCAT_SOCKPORT" | socat -t1 - UNIX-CONNECT:${join(socketDir, SOCKETS.direct)}\n`, { mode: 0o644 });
  const configs = writeSupport(socketDir, layout);
  const { cgroups, rlimits } = makeLimits(limits);
  const prefix = confine(cgroups, rlimits);
  const argv = [...prefix, ...layoutView(layout, socketDir), ...dropRoot(), 'unshare', '--user', '--map-root-user', '--net', '--', 'setpriv', '--pdeathsig', 'TERM', '--', 'bash', '-c', layerScript(socketDir, bwrapArgs(layout, socketDir, limits, configs), mirrorPorts)];
  const program = join(socketDir, SECCOMP_FILE);
  const programFd = openSync(program, 'r');
  let child: ChildProcess;
  try {
    child = spawn(argv[0] as string, argv.slice(1), {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', programFd],
      detached: true,
      cwd: '/',
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin' },
    });
  } finally {
    closeSync(programFd);
  }
  const info = childPid(child.stdio[3] as NodeJS.ReadableStream);
  // What comes on the holder's stdout and stderr may be the sandbox's, not bwrap's: no command can
  // take them now (pidfd_getfd is refused, a socket cannot be opened through /proc), but they are
  // the sandbox user's, so only the first few KiB are kept, the rest drained.
  // QUICKLOOP_DEBUG=1 shows what the network layer and bwrap say while they come up.
  const debug = process.env.QUICKLOOP_DEBUG === '1' ? (text: string) => process.stderr.write(`quickloop-debug: bwrap: ${terminalSafe(text)}\n`) : undefined;
  const stderr = collect(child.stderr as NodeJS.ReadableStream, debug);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const ready = new Promise<void>((resolve, reject) => {
    let out = '';
    const onData = (c: Buffer): void => {
      out = (out + c.toString()).slice(-64);
      if (!out.includes('ready\n')) return;
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      resolve();
    };
    child.stdout?.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bwrap exited ${code ?? 'by signal'} before the sandbox was ready: ${stderr().trim().split('\n')[0] ?? ''}`)));
  });
  let pid: number;
  try {
    [pid] = await Promise.all([info, ready]);
  } catch (error) {
    if (child.pid !== undefined) killGroup(child.pid);
    await exited;
    await cgroups.remove();
    rmSync(socketDir, { recursive: true, force: true });
    throw error;
  }
  // The network layer's process: commands join its user and network namespaces first.
  const layer = child.pid as number;
  const groups = new Set<number>();
  const baseline = new Set(childrenOf(pid));
  const plan = rootPlan();
  // nsenter names the namespaces by pid. Once the holder or the layer is gone (a command may kill
  // its own holder) the pid may be another process's, another sandbox's even: the start times
  // taken now tell them apart, and a command then runs nowhere.
  const identity = [startTime(layer), startTime(pid)];
  const gone = (): boolean => startTime(layer) !== identity[0] || startTime(pid) !== identity[1] || identity.includes(undefined);
  return {
    name: 'bwrap',
    enforced: true,
    proxyUrl: `http://127.0.0.1:${INSIDE_PROXY_PORT}`,
    limits: cgroups.inForce,
    denialRules: denialRules(layout, plan.visible),
    limitWitness: { limits: cgroups.inForce, layout: [layout.root, layout.workspace, layout.home, layout.tmp], tmpfsFull: (mount) => tmpfsFull(pid, mount, gone), disk: () => layoutDisk(layout.workspace) },
    limitCounters: () => cgroups.counters(),
    argv: (command) => {
      if (gone()) return { file: 'sh', args: ['-c', `echo "${ENDED_OUTPUT.trimEnd()}" >&2; exit ${ENDED_EXIT}`] };
      const args = [
        ...prefix,
        ...dropRoot(),
        // As root of the network layer's user namespace, which owns the network namespace…
        'nsenter', `--target=${layer}`, '--user', '--net', '--preserve-credentials', '--',
        // …under the seccomp program (COMMAND_FILTER)…
        ...COMMAND_FILTER,
        // …then bwrap's namespaces, as the sandbox user; the working directory is the holder's,
        // a path of the sandbox's own mount tree, so `..` from it never reaches a host folder.
        'nsenter', `--target=${pid}`, '--user', '--preserve-credentials', '--mount', '--pid', '--uts', '--ipc', '--cgroup', '--root', '--wd',
        '--', 'setpriv', '--inh-caps=-all', '--no-new-privs', '--', 'bash', '-c', CLOSE_AND_RUN, 'bash', command,
      ];
      return { file: args[0] as string, args: args.slice(1), fd3: program };
    },
    ended: gone,
    adopt: (pgid) => {
      groups.add(pgid);
    },
    close: async () => {
      // The holder's init is pid 1 of the namespace: when it dies the kernel kills every process in
      // it, daemonised or not. The command groups are killed too, for the nsenter processes outside,
      // and the network layer's group ends its forwarders.
      const left = namespaceLeftovers(pid, baseline);
      // The holder first, by its pid: bwrap puts it in a session of its own (--new-session), so the
      // layer's group does not hold it, and on a loaded machine it was seen to outlive bwrap's
      // monitor despite --die-with-parent: orphaned, it kept the stage's pipes open and the stage
      // alive for good. Killing it kills its whole namespace; its start time says it is still the
      // same process.
      if (identity[1] !== undefined && startTime(pid) === identity[1]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      killGroup(layer);
      await killGroupsAndWait(groups);
      await exited;
      for (let i = 0; i < 400 && alive(pid); i++) await new Promise((r) => setTimeout(r, 5));
      await cgroups.remove();
      rmSync(socketDir, { recursive: true, force: true });
      return left;
    },
  };
}

/** Below this many free bytes a tmpfs is full: a write fills it to its last page before ENOSPC. */
const TMPFS_FULL_BYTES = 64 * 1024;

/**
 * Whether a private tmpfs is full now, read from outside through the holder's root (its mount
 * namespace): the workspace is the host's disk, so a full tmpfs is what tells the two apart.
 */
function tmpfsFull(holder: number, mount: string, gone: () => boolean): boolean | undefined {
  if (gone()) return undefined;
  try {
    const s = statfsSync(`/proc/${holder}/root${mount}`);
    return s.bavail * s.bsize < TMPFS_FULL_BYTES;
  } catch {
    return undefined;
  }
}

/**
 * Below this many free bytes (or free inodes) the host disk holding the layout is full: the command
 * that ran out may have removed what it was writing, and others share the disk.
 */
const DISK_FULL_BYTES = 1024 * 1024;
const DISK_FULL_INODES = 16;

/** The host disk that holds the layout, read from outside: its size, and whether the sandbox user can write no more to it. */
function layoutDisk(workspace: string): { bytes: number; full: boolean } | undefined {
  try {
    const s = statfsSync(workspace);
    return { bytes: s.blocks * s.bsize, full: s.bavail * s.bsize < DISK_FULL_BYTES || (s.files > 0 && s.ffree < DISK_FULL_INODES) };
  } catch {
    return undefined;
  }
}

/**
 * What a refused access can be in this sandbox: an EROFS is real only outside the writable folders
 * (the layout's and every tmpfs); a missing absolute path is the sandbox's doing when the host has
 * it but the sandbox does not show it.
 */
export function denialRules(layout: WorkspaceLayout, visible: readonly string[]): DenialRules {
  const own = [layout.workspace, layout.home, layout.tmp, layout.root];
  return { writable: [layout.workspace, layout.home, layout.tmp, '/tmp', '/var/tmp', '/dev/shm', '/dev/null', '/dev/zero', '/dev/full'], visible, own };
}

/** bwrap writes `{"child-pid": N, …}` to --info-fd and closes it: N is the namespace's pid 1, seen from outside. */
function childPid(stream: NodeJS.ReadableStream): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    stream.on('data', (c: Buffer) => (text += c.toString()));
    stream.on('error', reject);
    stream.on('end', () => {
      try {
        const pid = (JSON.parse(text) as { 'child-pid'?: unknown })['child-pid'];
        if (typeof pid === 'number') resolve(pid);
        else reject(new Error(`bwrap reported no child pid: ${text.trim()}`));
      } catch {
        reject(new Error(`bwrap reported no child pid: ${text.trim() || '(nothing)'}`));
      }
    });
  });
}

/** What a command gets once its sandbox has ended: it ran nowhere. */
export const ENDED_EXIT = 125;
export const ENDED_OUTPUT = 'quickloop: not run: this sandbox has ended (a command killed its holder)\n';

/**
 * A command started while the holder was still dying (killed by the command before) sees nsenter
 * fail to enter namespaces that are gone by then: that is the ended sandbox, not the command's
 * failure. A command that did enter and then lost its holder keeps its own result.
 */
export function endedIfNotEntered(result: ExecResult, ended: boolean): ExecResult {
  if (!ended || result.exitCode === 0 || !/^nsenter: /.test(result.output)) return result;
  return { ...result, exitCode: ENDED_EXIT, output: ENDED_OUTPUT, originalChars: ENDED_OUTPUT.length, truncated: false, lastLine: ENDED_OUTPUT.trim(), denials: [], limitHits: [] };
}

/** When a process started (clock ticks since boot), or undefined once it is gone or a zombie. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' || fields[0] === 'X' ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    return !/^State:\s+[ZX]/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/** What bwrap says about a failed start fits in this; more is a command writing into the stream. */
const MAX_LAYER_STDERR = 8192;

function collect(stream: NodeJS.ReadableStream | null | undefined, show?: (text: string) => void): () => string {
  let text = '';
  stream?.on('data', (c: Buffer) => {
    if (text.length >= MAX_LAYER_STDERR) return;
    const kept = c.toString().slice(0, MAX_LAYER_STDERR - text.length);
    text += kept;
    show?.(kept);
  });
  return () => text;
}
