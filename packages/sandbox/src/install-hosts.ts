// Hosts that ordinary installs reach besides the registries themselves, each with the reason it is here.
import { UsageError } from '@quickloop/cli-kit';
import { formatEndpoint, normalizeHost, registryEndpoint } from './hosts.js';
import type { EgressPolicy } from './types.js';

/**
 * None of these is a package registry (those come from the package managers' own configuration, at
 * run time). They are where installers fetch what the registry only points at. The prior art's
 * default list had the GitHub hosts and forgot the rest, so a native Node module, a Prisma client or
 * `go get` failed as `not_allowlisted` for reasons the docs had nothing to do with.
 * raw.githubusercontent.com stays out on purpose: docs are hosted there, and reading docs through
 * the shell would escape read_docs.
 */
export const INSTALL_HOSTS: readonly { host: string; why: string }[] = [
  { host: 'github.com', why: 'git dependencies and release downloads (`npm install user/repo`, `pip install git+https://…`)' },
  { host: 'codeload.github.com', why: 'tarballs of git dependencies' },
  { host: 'objects.githubusercontent.com', why: 'release assets behind github.com redirects (prebuilt binaries)' },
  { host: 'release-assets.githubusercontent.com', why: 'release assets behind github.com redirects (newer host)' },
  { host: 'nodejs.org', why: 'node-gyp downloads Node headers to build native modules (better-sqlite3, bcrypt …)' },
  { host: 'binaries.prisma.sh', why: 'Prisma downloads its query engine on install' },
  { host: 'sum.golang.org', why: 'the Go checksum database that `go get` verifies every module against' },
  { host: 'astral.sh', why: 'the uv and ruff install scripts many Python quickstarts start with' },
];

/**
 * One `--allow-registry` value as every stage reads it: a registry URL (its host and port),
 * `host:port`, or a bare host meaning 443; the endpoint `host:port`. Anything else is a UsageError,
 * because a flag that silently did nothing is worse than one that stops the run.
 */
export function allowRegistry(value: string): string {
  const e = registryEndpoint(value);
  if (!e) throw new UsageError(`--allow-registry: '${value}' is not a registry URL, host:port or host name (e.g. https://mirror.example.com or localhost:4873)`);
  return formatEndpoint(e.host, e.port);
}

export interface PolicyExtras {
  /** `--allow-registry` values (a registry URL, `host:port`, or a host meaning 443): added to the registries whatever the source. */
  allowRegistries?: readonly string[];
  /** Add INSTALL_HOSTS (default true). Never added when the task said network.only. */
  installHosts?: boolean;
}

/**
 * The policy a sandbox enforces: the task's, plus the --allow-registry endpoints, plus the install
 * hosts unless the author replaced the defaults with network.only (their list is then the whole
 * list). The order of decisions is unchanged, so a docs host still loses to nothing but `explicit`.
 */
export function effectivePolicy(policy: EgressPolicy, extras: PolicyExtras = {}): EgressPolicy {
  const registries = [...policy.registries, ...(extras.allowRegistries ?? []).map(allowRegistry)];
  const install = [...(policy.install_hosts ?? [])];
  if (extras.installHosts !== false && policy.registries_source !== 'only') install.push(...INSTALL_HOSTS.map((h) => h.host));
  const clean = (list: readonly string[]): string[] => [...new Set(list.filter((h) => h !== ''))];
  return { ...policy, registries: clean(registries), install_hosts: clean(install.map(normalizeHost)) };
}
