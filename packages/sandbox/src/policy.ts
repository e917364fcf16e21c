// The egress decision by host and port: explicit → docs host (deny) → registry endpoint → install host → IP literal (deny) → deny.
import { firstMatch, formatEndpoint, isIpLiteral, normalizeHost, parseEndpoint } from './hosts.js';
import type { EgressPolicy } from './types.js';

export type Decision =
  | { allow: true; reason: 'explicit' | 'registry' | 'install_host'; rule: string }
  | { allow: false; reason: 'docs_host' | 'not_allowlisted' | 'ip_literal' | 'bad_request'; message: string };

/** The ports a named host (network.allow/only, an install host) is reachable on: HTTPS and HTTP. */
export const WEB_PORTS: readonly number[] = [443, 80];

/**
 * The ports a registry entry opens. `host:port` is what the policy carries now; a bare host comes
 * from a stream written before ports were carried, and meant the web ports.
 */
function registryPorts(entry: string): { host: string; ports: readonly number[] } | undefined {
  const e = parseEndpoint(entry);
  if (!e) return undefined;
  return { host: e.host, ports: e.port === undefined ? WEB_PORTS : [e.port] };
}

/**
 * Decides one host and port. The order is the contract: an explicit entry beats a docs host (the
 * task author asked for it), a docs host beats the registries (docs are read only through
 * read_docs, so the agent's reading is recorded), and an IP literal is allowed only when an entry
 * names exactly that address, because an address says nothing about who is behind it.
 *
 * Explicit entries and docs hosts cover their subdomains (the author named a domain). Registry
 * entries match exactly, host and port, because a registry is one configured URL and nothing
 * beside it; install hosts match exactly on the web ports, because they are a fixed list of hosts
 * whose siblings (raw.githubusercontent.com) may serve docs.
 */
export function decide(policy: EgressPolicy, rawHost: string, port: number): Decision {
  const host = normalizeHost(rawHost);
  if (host === '' || host === '(relative-url)') {
    return { allow: false, reason: 'bad_request', message: 'no host in the request: send absolute URLs or CONNECT host:port' };
  }
  const otherPorts = new Set<number>();
  const explicit = firstMatch(host, policy.explicit);
  if (explicit !== undefined) {
    if (WEB_PORTS.includes(port)) return { allow: true, reason: 'explicit', rule: explicit };
    for (const p of WEB_PORTS) otherPorts.add(p);
  }
  if (firstMatch(host, policy.docs_hosts) !== undefined) {
    return { allow: false, reason: 'docs_host', message: `${host} is a documentation host: use read_docs to read it` };
  }
  for (const entry of policy.registries) {
    const r = registryPorts(entry);
    if (!r || r.host !== host) continue;
    if (r.ports.includes(port)) return { allow: true, reason: 'registry', rule: formatEndpoint(r.host, port) };
    for (const p of r.ports) otherPorts.add(p);
  }
  const install = firstMatch(host, policy.install_hosts ?? [], false);
  if (install !== undefined) {
    if (WEB_PORTS.includes(port)) return { allow: true, reason: 'install_host', rule: install };
    for (const p of WEB_PORTS) otherPorts.add(p);
  }
  const where = formatEndpoint(host, port);
  if (otherPorts.size > 0) {
    const ports = [...otherPorts].sort((a, b) => a - b).join(', ');
    return { allow: false, reason: 'not_allowlisted', message: `${where}: ${host} is allowed only on port ${ports}, not ${port}` };
  }
  if (isIpLiteral(host)) {
    return { allow: false, reason: 'ip_literal', message: `${host} is a raw IP address: only addresses named in network.allow are reachable by address` };
  }
  return { allow: false, reason: 'not_allowlisted', message: `${where} is not on the allowlist (add the host to network.allow, or --allow-registry)` };
}

/**
 * True when `host:port` is exactly a configured registry endpoint (package-manager configuration or
 * --allow-registry): the only destination that may resolve to a loopback or private address, so a
 * company mirror on localhost keeps working on its port and only there.
 */
export function isConfiguredRegistry(policy: EgressPolicy, rawHost: string, port: number): boolean {
  const host = normalizeHost(rawHost);
  return policy.registries.some((entry) => {
    const e = parseEndpoint(entry);
    return e !== undefined && e.port === port && e.host === host;
  });
}
