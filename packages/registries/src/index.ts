// discoverRegistries: the hosts the host's package managers are configured to install from, read from their own config.
import { aptRegistries } from './apt.js';
import { formatEndpoint, registryEndpoint } from '@quickloop/sandbox/hosts';
import { npmForwardable, npmRegistries } from './npm.js';
import { pipForwardable, pipRegistries } from './pip.js';
import type { InstallSources } from '@quickloop/sandbox';
import type { Found, SystemPaths } from './types.js';

export type { Found, SystemPaths } from './types.js';
export type { InstallSources } from '@quickloop/sandbox';
export { builtinNpmRegistry, findNpmRoot } from './npm.js';
export { builtinPipIndex, pipIndexes } from './pip.js';
export { endpointOf } from './files.js';

export interface DiscoverOptions {
  env: Record<string, string | undefined>;
  home: string;
  cwd: string;
  /** More registries to allow (`--allow-registry`: a URL, host:port, or a host meaning 443), added after the discovered ones. */
  extra?: readonly string[];
  /** Moves the absolute system locations (tests); defaults to `/` and this node. */
  paths?: Partial<SystemPaths>;
  /** Run `npm config get registry` when npm's own files could not be read. Default true. */
  spawnFallback?: boolean;
}

export interface Registries {
  /** Unique endpoints (`host:port`) in discovery order: npm, pip, apt, then the extra ones. */
  endpoints: string[];
  /** Every finding, duplicates included, so people can see why a host is there. */
  sources: Found[];
}

/**
 * Reads npm, pip and apt configuration the way those tools do and returns the registry hosts they
 * would use. Nothing is spawned unless npm's own files cannot be read, so it is cheap enough to
 * run on every qs-validate start. No host name is built in: the defaults come from the installed tools.
 */
export async function discoverRegistries(opts: DiscoverOptions): Promise<Registries> {
  return discoverRegistriesSync(opts);
}

export function discoverRegistriesSync(opts: DiscoverOptions): Registries {
  const paths = systemPaths(opts.paths);
  const sources: Found[] = [
    ...npmRegistries({ env: opts.env, home: opts.home, cwd: opts.cwd, paths, spawnFallback: opts.spawnFallback ?? true }),
    ...pipRegistries({ env: opts.env, home: opts.home, paths }),
    ...aptRegistries(paths.root),
  ];
  for (const value of opts.extra ?? []) {
    const e = registryEndpoint(value);
    if (e) sources.push({ endpoint: formatEndpoint(e.host, e.port), from: 'option --allow-registry' });
  }
  return { endpoints: [...new Set(sources.map((s) => s.endpoint))], sources };
}

/**
 * The registries configured here that a sandbox's npm and pip should be pointed at, because a
 * sandbox's home is new and its environment is an allowlist: a registry set only in this user's
 * npmrc or pip.conf, or in NPM_CONFIG_REGISTRY or PIP_INDEX_URL, is otherwise not seen inside it.
 * Nothing is spawned; a URL that needs credentials is left out (npmForwardable, pipForwardable).
 */
export function installSources(opts: Omit<DiscoverOptions, 'extra' | 'spawnFallback'>): InstallSources {
  const paths = systemPaths(opts.paths);
  return { npm: npmForwardable({ env: opts.env, home: opts.home, cwd: opts.cwd, paths }), pip: pipForwardable({ env: opts.env, home: opts.home, paths }) };
}

function systemPaths(given: Partial<SystemPaths> | undefined): SystemPaths {
  return { root: given?.root ?? '/', execPath: given?.execPath ?? process.execPath, ...(given?.npmRoot ? { npmRoot: given.npmRoot } : {}) };
}
