// The enforced sandbox's root: assembled from an allow-list of what toolchains need, never the host's / minus a hide-list.
import { lstatSync, readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { lchown } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';

/** The system folders, bound read-only (or re-made as the same symlink on merged-/usr systems). */
const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * What of the host's /etc a toolchain reads: the dynamic loader, CA certificates, name-service and
 * locale files, shell start-up files, the alternatives links /usr/bin points through, and the
 * system-wide config of the package managers (their registries and mirrors). Anything else of /etc
 * (password hashes, SSH host keys, sudoers, machine-id, service configs) is absent inside.
 */
const ETC_NAMES = new Set([
  'alternatives', 'ssl', 'ca-certificates', 'ca-certificates.conf', 'pki', 'crypto-policies',
  'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'localtime', 'timezone', 'nsswitch.conf', 'host.conf',
  'gai.conf', 'protocols', 'services', 'mime.types', 'magic', 'magic.mime', 'bash.bashrc', 'profile',
  'profile.d', 'inputrc', 'environment', 'login.defs', 'locale.alias', 'locale.conf', 'os-release',
  'lsb-release', 'debian_version', 'issue', 'gitconfig', 'npmrc', 'pip.conf', 'xdg', 'fonts',
  'terminfo', 'mailcap', 'wgetrc', 'gnutls', 'perl', 'gemrc', 'bindresvport.blacklist',
]);
const ETC_PATTERNS = [/^python\d(\.\d+)?$/, /^java-[\w.-]+$/, /^ruby\d?[\w.-]*$/, /^php\d?[\w.-]*$/];

/** ssh_config is how git reaches a host over ssh; the keys beside it are the host's and stay out. */
const ETC_SSH = ['ssh_config', 'ssh_config.d'];

/** Toolchains whose install prefix is bound when it lives outside the system folders (e.g. /opt/node). */
export const TOOLCHAINS = ['node', 'npm', 'npx', 'corepack', 'pnpm', 'yarn', 'bun', 'deno', 'python3', 'python', 'pip3', 'pip', 'uv', 'go', 'java', 'ruby', 'php', 'claude', 'codex'];

/** Folders a prefix may never be: a toolchain under a home or in a host service folder is not bound. */
const NEVER = ['/root', '/home', '/run', '/var', '/tmp', '/srv', '/mnt', '/media', '/proc', '/sys', '/dev', '/boot', '/etc'];

export interface RootPlan {
  /** bwrap arguments that build the root (before the sandbox's own tmpfs, layout and /proc). */
  args: string[];
  /** Absolute paths visible inside (read-only): a missing file under one is an ordinary missing file. */
  visible: string[];
  /** Toolchain prefixes bound from outside the system folders, with the tool that asked for each. */
  toolchains: Array<{ tool: string; prefix: string }>;
}

/** Whether `path` is `dir` or under it (plain path text: nothing is resolved). */
export const within = (path: string, dir: string): boolean => path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);

function kind(path: string): 'dir' | 'file' | 'link' | undefined {
  try {
    const st = lstatSync(path);
    return st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : undefined;
  } catch {
    return undefined;
  }
}

/** Where a tool on PATH really lives: the folder above its bin/, when that is not a system folder. */
export function toolchainPrefix(binary: string): string | undefined {
  let real: string;
  try {
    real = realpathSync(binary);
  } catch {
    return undefined;
  }
  if (SYSTEM.some((s) => within(real, s))) return undefined;
  if (NEVER.some((n) => within(real, n))) return undefined;
  // /opt/node-v20/bin/node → /opt/node-v20; /opt/tool/node (no bin/) → /opt/tool.
  const dir = dirname(real);
  const prefix = dir.endsWith(`${sep}bin`) ? dirname(dir) : dir;
  return prefix === '/' || prefix === '/opt' ? undefined : prefix;
}

function onPath(tool: string, path: string): string | undefined {
  for (const dir of path.split(':')) {
    if (dir === '' || !dir.startsWith('/')) continue;
    const candidate = join(dir, tool);
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

let cached: { key: string; plan: RootPlan } | undefined;

/** The root of every enforced sandbox of this process (the host's layout does not change under it). */
export function rootPlan(hostPath: string = process.env.PATH ?? ''): RootPlan {
  if (cached?.key === hostPath) return cached.plan;
  const args: string[] = ['--tmpfs', '/'];
  const visible: string[] = [];
  for (const p of SYSTEM) {
    const k = kind(p);
    if (k === 'link') args.push('--symlink', readlinkSync(p), p);
    else if (k === 'dir') {
      args.push('--ro-bind', p, p);
      visible.push(p);
    }
  }
  args.push('--dir', '/etc');
  const etc = (name: string): void => {
    const p = join('/etc', name);
    const k = kind(p);
    if (k === 'link') args.push('--symlink', readlinkSync(p), p);
    else if (k) {
      args.push('--ro-bind', p, p);
      visible.push(p);
    }
  };
  let names: string[] = [];
  try {
    names = readdirSync('/etc');
  } catch {
    // No /etc: the generated files below are all there is.
  }
  for (const name of names.sort()) if (ETC_NAMES.has(name) || ETC_PATTERNS.some((re) => re.test(name))) etc(name);
  if (kind('/etc/ssh') === 'dir') {
    args.push('--dir', '/etc/ssh');
    for (const name of ETC_SSH) etc(join('ssh', name));
  }
  const toolchains: RootPlan['toolchains'] = [];
  for (const tool of TOOLCHAINS) {
    const found = onPath(tool, hostPath);
    const prefix = found ? toolchainPrefix(found) : undefined;
    if (!prefix || toolchains.some((t) => within(prefix, t.prefix)) || visible.some((v) => within(prefix, v))) continue;
    toolchains.push({ tool, prefix });
    args.push('--ro-bind', prefix, prefix);
    visible.push(prefix);
  }
  const plan = { args, visible, toolchains };
  cached = { key: hostPath, plan };
  return plan;
}

/**
 * Whether a host file is visible inside the enforced sandbox (read-only) as it is on the host: its
 * real path lies under a system folder, a shown part of /etc or a bound toolchain prefix. A program
 * installed under a home (a user npm prefix, nvm) is not, and cannot run inside.
 */
export function shownInside(file: string, hostPath: string = process.env.PATH ?? ''): boolean {
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    return false;
  }
  return rootPlan(hostPath).visible.some((v) => within(real, v));
}

/** Made inside the sandbox itself: a missing file under them is never a host file hidden. */
const GENERATED = ['/proc', '/dev', '/sys', '/etc/passwd', '/etc/group', '/etc/hosts', '/etc/hostname', '/etc/resolv.conf'];
/** Shown with only some of their host entries, or as private scratch (/tmp): a file the host lacks there too is ordinary. */
const SHOWN = ['/', '/etc', '/var', '/opt', '/tmp', '/var/tmp'];

/**
 * True when a path printed by a command names something of the host the sandbox does not show: the
 * deepest part of it the host has (`/root` for `/root/nope/x`) is neither shown inside nor one of the
 * folders the sandbox makes itself. A path under a shown folder that the host lacks too is ordinary.
 */
export function hiddenFromSandbox(path: string, visible: readonly string[], own: readonly string[], exists: (p: string) => boolean = (p) => kind(p) !== undefined): boolean {
  if (!path.startsWith('/')) return false;
  if ([...visible, ...own, ...GENERATED].some((v) => within(path, v))) return false;
  let deepest = path;
  while (deepest !== '/' && !exists(deepest)) deepest = dirname(deepest);
  return !SHOWN.includes(deepest);
}

/** The host's uid and gid for the sandbox user when the harness is root: never root itself. */
export function outerIds(): { uid: number; gid: number } {
  const fromEnv = (name: string): number | undefined => {
    const v = process.env[name];
    return v !== undefined && /^[1-9]\d{0,9}$/.test(v) ? Number(v) : undefined;
  };
  const uid = fromEnv('QUICKLOOP_SANDBOX_UID') ?? 65534;
  return { uid, gid: fromEnv('QUICKLOOP_SANDBOX_GID') ?? uid };
}

/**
 * Gives what the harness makes in a sandbox's home to the sandbox's user: a root harness runs the
 * sandbox as another uid (outerIds), whose npm and pip must be able to add to their own files. A
 * no-op for any other harness, whose files are already the sandbox user's.
 */
export function sandboxOwner(): (path: string) => Promise<void> {
  const ids = process.getuid?.() === 0 ? outerIds() : undefined;
  return async (path) => {
    if (ids) await lchown(path, ids.uid, ids.gid);
  };
}

/** Whether a command is on this machine (without a shell per check). */
export function hasCommand(tool: string): boolean {
  return onPath(tool, process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin') !== undefined;
}
