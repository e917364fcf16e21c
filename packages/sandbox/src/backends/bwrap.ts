// The enforced Linux backend: one bubblewrap namespace set per stage, commands entered into it with nsenter.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
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

/**
 * Tools the backend needs besides bwrap: socat forwards the inside proxy port to the harness's Unix
 * socket, nsenter runs a command in the running namespaces, setpriv drops every capability first.
 */
const TOOLS = ['bwrap', 'socat', 'nsenter', 'setpriv'] as const;

/** Why bwrap cannot run here, or undefined when it can (a real sandbox is made and torn down). */
export function bwrapUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `bubblewrap needs Linux (this is ${process.platform})`;
  // nsenter into the namespaces needs CAP_SYS_ADMIN over them; entering an unprivileged user
  // namespace instead is not done yet.
  if (process.getuid?.() !== 0) return 'the bwrap backend runs as root for now (nsenter into its namespaces)';
  for (const tool of TOOLS) {
    const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
    if (found.status !== 0) return `${tool} is not installed (apt-get install bubblewrap socat util-linux)`;
  }
  const probe = spawnSync('bwrap', ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--cap-drop', 'ALL', '--', 'true'], {
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

/** bwrap arguments for the stage's namespaces; exported for tests and the README. */
export function bwrapArgs(layout: WorkspaceLayout, socketDir: string, socketPath: string, infoFd: number): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const p of hiddenPaths()) args.push('--tmpfs', p);
  // After the tmpfs layers, so a workspace under /tmp or a home shows through again.
  for (const dir of [layout.workspace, layout.home, layout.tmp]) args.push('--bind', dir, dir);
  args.push('--ro-bind', socketDir, socketDir, '--cap-drop', 'ALL', '--info-fd', String(infoFd), '--chdir', layout.workspace);
  // The init: the forwarder, then a line on stdout once it listens (read from /proc so that no probe
  // connection reaches the proxy). When it dies, the namespace and everything in it die with it.
  const port = `0100007F:${INSIDE_PROXY_PORT.toString(16).toUpperCase().padStart(4, '0')}`;
  const init = [
    `socat TCP-LISTEN:${INSIDE_PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${socketPath} &`,
    `listening() { while read -r _ a _ st _; do [ "$a" = ${port} ] && [ "$st" = 0A ] && return 0; done < /proc/net/tcp; return 1; }`,
    'until listening; do :; done',
    'echo ready',
    'wait',
  ].join('\n');
  args.push('--', 'bash', '-c', init);
  return args;
}

/** A fresh folder for the proxy socket, outside the sandbox's writable folders (bound read-only inside). */
export function proxySocketDir(): string {
  return mkdtempSync(join(tmpdir(), 'quickloop-proxy-'));
}

export async function startBwrap(layout: WorkspaceLayout, socketDir: string, socketPath: string): Promise<BackendSession> {
  const infoFd = 3;
  const child: ChildProcess = spawn('bwrap', bwrapArgs(layout, socketDir, socketPath, infoFd), {
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
  return {
    name: 'bwrap',
    enforced: true,
    proxyUrl: `http://127.0.0.1:${INSIDE_PROXY_PORT}`,
    argv: (command) => ({
      file: 'nsenter',
      args: [
        `--target=${pid}`, '--mount', '--net', '--pid', '--uts', '--ipc', '--cgroup', '--root', `--wd=${layout.workspace}`,
        '--', 'setpriv', '--bounding-set=-all', '--inh-caps=-all', '--no-new-privs', '--', 'bash', '-c', command,
      ],
    }),
    adopt: (pgid) => {
      groups.add(pgid);
    },
    close: async () => {
      // The init is pid 1 of the namespace: when it dies the kernel kills every process in it,
      // daemonised or not. The command groups are killed too, for the nsenter processes outside.
      if (child.pid !== undefined) killGroup(child.pid);
      await killGroupsAndWait(groups);
      await exited;
      // SIGKILL is asynchronous: wait (bounded) until pid 1 is gone or a zombie, so no command of
      // this stage can still be running when close() resolves.
      for (let i = 0; i < 400 && alive(pid); i++) await new Promise((r) => setTimeout(r, 5));
      rmSync(socketDir, { recursive: true, force: true });
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
