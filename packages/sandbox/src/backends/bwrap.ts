// The enforced Linux backend: one bubblewrap namespace set per stage, commands entered into it with nsenter.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DenialRules } from '../denials.js';
import { childrenOf, namespaceLeftovers } from '../leftovers.js';
import { killGroup, killGroupsAndWait } from '../process.js';
import type { WorkspaceLayout } from '../types.js';
import type { BackendSession } from './backend.js';

/**
 * The proxy's port inside the sandbox's own network namespace: nothing else listens there at start,
 * and it is the conventional proxy port, so it is unlikely to be what a quickstart's server wants.
 */
export const INSIDE_PROXY_PORT = 3128;

/** Host paths hidden behind an empty tmpfs: people's homes (keys, tokens, configs) and runtime sockets. */
export function hiddenPaths(): string[] {
  const paths = [homedir(), '/root', '/home', '/run', '/var/run', '/tmp', '/var/tmp', '/dev/shm'];
  // Symlinks (/var/run → /run) are skipped: their target is hidden already, and bwrap cannot mount over a link.
  return [...new Set(paths)].filter((p) => p !== '/' && existsSync(p) && lstatSync(p).isDirectory());
}

/** Private scratch folders: replaced like the hidden ones, but a missing file there is ordinary, not a host file hidden. */
const SCRATCH = ['/tmp', '/var/tmp', '/dev/shm'];

/**
 * What a refused access can be in this sandbox: an EROFS is real only outside the writable folders
 * (the layout's and every tmpfs), a missing file is the sandbox's doing only under a hidden host folder.
 */
export function denialRules(layout: WorkspaceLayout): DenialRules {
  const tmpfs = hiddenPaths();
  const hidden = tmpfs.filter((p) => !SCRATCH.includes(p));
  // /var/run is a link to /run on most systems: a path printed through the link is hidden as well.
  if (hidden.includes('/run') && !hidden.includes('/var/run')) hidden.push('/var/run');
  const own = [layout.workspace, layout.home, layout.tmp];
  return { writable: [...own, ...tmpfs, '/dev'], hidden, masked: secretFiles(), own };
}

/** Host files outside the homes that hold secrets: password hashes and SSH host keys. */
export function secretFiles(): string[] {
  const files = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-'];
  try {
    for (const name of readdirSync('/etc/ssh')) if (/^ssh_host_.*_key$/.test(name)) files.push(`/etc/ssh/${name}`);
  } catch {
    // No /etc/ssh: nothing to hide there.
  }
  return files.filter((f) => existsSync(f) && lstatSync(f).isFile());
}

/**
 * Tools the backend needs besides bwrap: socat forwards the inside proxy port to the harness's Unix
 * socket, nsenter runs a command in the running namespaces, setpriv drops every capability first,
 * ip routes every address to loopback inside so that dials around the proxy reach a recorder.
 */
const TOOLS = ['bwrap', 'socat', 'nsenter', 'setpriv', 'ip'] as const;

/** Why bwrap cannot run here, or undefined when it can (a real sandbox is made and torn down). */
export function bwrapUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `bubblewrap needs Linux (this is ${process.platform})`;
  for (const tool of TOOLS) {
    const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
    if (found.status !== 0) return `${tool} is not installed (apt-get install bubblewrap socat util-linux iproute2)`;
  }
  // The probe asks for what the real init needs: its user mapping and the two capabilities it keeps.
  const probe = spawnSync('bwrap', ['--unshare-all', ...userArgs(), '--die-with-parent', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--cap-drop', 'ALL', ...INIT_CAPS, '--', 'true'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (probe.status !== 0) return `bwrap cannot make namespaces here: ${(probe.stderr || probe.error?.message || `exit ${probe.status}`).trim().split('\n')[0]}`;
  return undefined;
}

export function bwrapVersion(): string {
  const out = spawnSync('bwrap', ['--version'], { encoding: 'utf8' });
  return (out.stdout || '').trim() || 'bubblewrap';
}

/** The harness runs unprivileged: the namespaces then belong to a user namespace of its own. */
const unprivileged = (): boolean => process.getuid?.() !== 0;

/**
 * Unprivileged, bwrap makes a user namespace; the harness's uid is mapped to 0 inside so that the
 * init keeps its two capabilities there (a non-zero uid loses them on exec) and commands entering
 * later are root of the namespace only, capabilities dropped — as when the harness is real root.
 */
function userArgs(): string[] {
  return unprivileged() ? ['--unshare-user', '--uid', '0', '--gid', '0'] : [];
}

const INIT_CAPS = ['--cap-add', 'CAP_NET_ADMIN', '--cap-add', 'CAP_NET_BIND_SERVICE'];

/** bwrap arguments for the stage's namespaces; exported for tests and the README. */
export function bwrapArgs(layout: WorkspaceLayout, socketDir: string, infoFd: number): string[] {
  const args = ['--unshare-all', ...userArgs(), '--die-with-parent', '--new-session', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const p of hiddenPaths()) args.push('--tmpfs', p);
  // Commands run as uid 0 without capabilities, which still reads root-owned 0600/0640 files.
  for (const file of secretFiles()) args.push('--ro-bind', '/dev/null', file);
  // After the tmpfs layers, so a workspace under /tmp or a home shows through again.
  for (const dir of [layout.workspace, layout.home, layout.tmp]) args.push('--bind', dir, dir);
  // The init keeps two capabilities, inside its own namespaces only: to route every address to
  // loopback and to listen on 53, 80 and 443. Commands never descend from it: they enter with
  // nsenter from outside and setpriv drops everything.
  args.push('--ro-bind', socketDir, socketDir, '--cap-drop', 'ALL', ...INIT_CAPS);
  args.push('--info-fd', String(infoFd), '--chdir', layout.workspace, '--', 'bash', '-c', initScript(socketDir));
  return args;
}

const hex = (port: number): string => port.toString(16).toUpperCase().padStart(4, '0');

/**
 * pid 1's script: the proxy forwarder, then the recorders of what bypasses it (every IPv4/IPv6
 * address routed to loopback, so a DNS query to any resolver and a dial to any address on 80/443
 * lands on a listener that tells the harness), then `ready` once all listen (read from /proc, so
 * no probe connection is ever recorded). When it dies, the namespace and everything in it die.
 */
function initScript(socketDir: string): string {
  const sock = (name: keyof typeof SOCKETS): string => join(socketDir, SOCKETS[name]);
  const catcher = `EXEC:'sh ${sock('catcher')}'`;
  return [
    `socat TCP-LISTEN:${INSIDE_PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${sock('proxy')} &`,
    'ip route add local 0.0.0.0/0 dev lo',
    `for p in 80 443; do socat TCP4-LISTEN:$p,fork,reuseaddr ${catcher} & done`,
    `if ip -6 route add local ::/0 dev lo 2>/dev/null; then for p in 80 443; do socat TCP6-LISTEN:$p,ipv6only=1,fork,reuseaddr ${catcher} & done; socat -T2 UDP6-RECVFROM:53,ipv6only=1,fork UNIX-CONNECT:${sock('dns')} & fi`,
    `socat -T2 UDP4-RECVFROM:53,fork UNIX-CONNECT:${sock('dns')} &`,
    `want="0100007F:${hex(INSIDE_PROXY_PORT)} 00000000:${hex(80)} 00000000:${hex(443)}"`,
    // Builtins only: forking a probe per turn would slow down the very listeners it waits for.
    'up() { local n=0 a st; while read -r _ a _ st _; do [ "$st" = 0A ] && case " $want " in *" $a "*) n=$((n+1));; esac; done < /proc/net/tcp; while read -r _ a _; do [ "$a" = 00000000:0035 ] && n=$((n+1)); done < /proc/net/udp; [ $n -ge 4 ]; }',
    'exec 9<> <(:)',
    'until up; do read -r -t 0.002 -u 9; done',
    'echo ready',
    // Not `wait`: a command that kills a forwarder must not end the namespace for the commands after it.
    'exec sleep infinity',
  ].join('\n');
}

/** The files of the socket folder, bound read-only inside. */
export const SOCKETS = { proxy: 'proxy.sock', direct: 'direct.sock', dns: 'dns.sock', catcher: 'catch-direct.sh' } as const;

/** A fresh folder for the proxy socket, outside the sandbox's writable folders (bound read-only inside). */
export function proxySocketDir(): string {
  return mkdtempSync(join(tmpdir(), 'quickloop-proxy-'));
}

export async function startBwrap(layout: WorkspaceLayout, socketDir: string): Promise<BackendSession> {
  const infoFd = 3;
  // socat EXECs this for each dial it catches: SOCAT_SOCKADDR is the address the tool dialled.
  writeFileSync(join(socketDir, SOCKETS.catcher), `echo "$SOCAT_SOCKADDR $SOCAT_SOCKPORT" | socat -t1 - UNIX-CONNECT:${join(socketDir, SOCKETS.direct)}\n`, { mode: 0o644 });
  const child: ChildProcess = spawn('bwrap', bwrapArgs(layout, socketDir, infoFd), {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    detached: true,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  const info = childPid(child.stdio[3] as NodeJS.ReadableStream);
  const stderr = collect(child.stderr as NodeJS.ReadableStream);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const ready = new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('ready\n')) resolve();
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bwrap exited ${code ?? 'by signal'} before the sandbox was ready: ${stderr().trim().split('\n')[0] ?? ''}`)));
  });
  let pid: number;
  try {
    [pid] = await Promise.all([info, ready]);
  } catch (error) {
    if (child.pid !== undefined) killGroup(child.pid);
    rmSync(socketDir, { recursive: true, force: true });
    throw error;
  }
  const groups = new Set<number>();
  // The init's own helpers (the forwarders and recorders), so that only what commands left is named at close.
  const baseline = new Set(childrenOf(pid));
  return {
    name: 'bwrap',
    enforced: true,
    proxyUrl: `http://127.0.0.1:${INSIDE_PROXY_PORT}`,
    denialRules: denialRules(layout),
    argv: (command) => ({
      file: 'nsenter',
      args: [
        // Unprivileged, joining the user namespace first is what gives nsenter the right to join the
        // others; the harness's own uid is kept (it is 0 in there).
        `--target=${pid}`, ...(unprivileged() ? ['--user', '--preserve-credentials'] : []),
        '--mount', '--net', '--pid', '--uts', '--ipc', '--cgroup', '--root', `--wd=${layout.workspace}`,
        '--', 'setpriv', '--bounding-set=-all', '--inh-caps=-all', '--no-new-privs', '--', 'bash', '-c', command,
      ],
    }),
    adopt: (pgid) => {
      groups.add(pgid);
    },
    close: async () => {
      // The init is pid 1 of the namespace: when it dies the kernel kills every process in it,
      // daemonised or not. The command groups are killed too, for the nsenter processes outside.
      const left = namespaceLeftovers(pid, baseline);
      if (child.pid !== undefined) killGroup(child.pid);
      await killGroupsAndWait(groups);
      await exited;
      // SIGKILL is asynchronous: wait (bounded) until pid 1 is gone or a zombie, so no command of
      // this stage can still be running when close() resolves.
      for (let i = 0; i < 400 && alive(pid); i++) await new Promise((r) => setTimeout(r, 5));
      rmSync(socketDir, { recursive: true, force: true });
      return left;
    },
  };
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

function alive(pid: number): boolean {
  try {
    return !/^State:\s+[ZX]/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

function collect(stream: NodeJS.ReadableStream | null | undefined): () => string {
  let text = '';
  stream?.on('data', (c: Buffer) => (text += c.toString()));
  return () => text;
}
