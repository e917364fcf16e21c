// discoverRegistries: the hosts the host's package managers are configured to install from, read from their own config.
import { aptRegistries } from './apt.js';
import { formatEndpoint, registryEndpoint } from '@quickloop/sandbox/hosts';
import { npmRegistries } from './npm.js';
import { pipRegistries } from './pip.js';
import type { Found, SystemPaths } from './types.js';

export type { Found, SystemPaths } from './types.js';
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
  const paths: SystemPaths = { root: opts.paths?.root ?? '/', execPath: opts.paths?.execPath ?? process.execPath, ...(opts.paths?.npmRoot ? { npmRoot: opts.paths.npmRoot } : {}) };
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
