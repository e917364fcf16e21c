// The environment commands get: a short allowlist, never inherited wholesale, so no key or host config leaks in.
import { within } from './rootfs.js';
import type { WorkspaceLayout } from './types.js';

/** Host variables copied as they are; everything else of the host is left behind. */
export const COPIED_VARS = ['PATH', 'LANG', 'LC_ALL'] as const;

const FALLBACK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Loopback stays direct: a command's own server (`npm start`, then `curl localhost`) is not egress. */
export const NO_PROXY = 'localhost,127.0.0.1,::1';

/** Folders a command may write that a host PATH could name: the private tmpfs folders inside. */
const WRITABLE_INSIDE = ['/tmp', '/var/tmp', '/dev/shm'];

/**
 * The host's PATH without the entries that would let a command put programs on it: an empty or
 * relative entry means the current folder, inside the workspace (`PATH=$EXTRA:$PATH` with EXTRA
 * unset starts with one), and an entry under the layout or a writable tmpfs is the sandbox's own. The
 * check runs `grep`, `curl`, `test`… by this PATH after the agent: a planted `grep` in the workspace
 * once answered for qs_expect_output. For the harness such entries meant its own folders, not these.
 */
function safePath(path: string | undefined, layout: WorkspaceLayout): string | undefined {
  if (path === undefined) return undefined;
  const kept = path.split(':').filter((dir) => dir.startsWith('/') && ![layout.root, ...WRITABLE_INSIDE].some((w) => within(dir, w)));
  return kept.join(':');
}

/**
 * Builds the scrubbed environment. HOME and TMPDIR are the workspace's siblings; the proxy variables
 * are set in both cases because tools disagree on which they read (curl only the lower-case
 * http_proxy, npm either). `extra` is added last; it carries harness values such as QS_PORT.
 */
export function sandboxEnv(
  layout: WorkspaceLayout,
  hostEnv: Record<string, string | undefined>,
  proxyUrl: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of COPIED_VARS) {
    const value = name === 'PATH' ? safePath(hostEnv.PATH, layout) : hostEnv[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  env.PATH ??= FALLBACK_PATH;
  env.LANG ??= 'C.UTF-8';
  Object.assign(env, {
    HOME: layout.home,
    TMPDIR: layout.tmp,
    PWD: layout.workspace,
    TERM: 'dumb',
    NO_COLOR: '1',
    // A fresh home makes npm (and the CLIs built on the update-notifier package) ask the registry for
    // its own newest version on every run: a request and a wait that no quickstart asked for.
    NO_UPDATE_NOTIFIER: '1',
    npm_config_update_notifier: 'false',
    HTTP_PROXY: proxyUrl,
    HTTPS_PROXY: proxyUrl,
    ALL_PROXY: proxyUrl,
    http_proxy: proxyUrl,
    https_proxy: proxyUrl,
    all_proxy: proxyUrl,
    NO_PROXY,
    no_proxy: NO_PROXY,
  });
  return { ...env, ...extra };
}
