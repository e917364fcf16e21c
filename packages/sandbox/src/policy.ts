// The egress decision: explicit network.allow/only → allow; docs host → deny; registry → allow; else deny.
import { firstMatch, isIpLiteral, normalizeHost } from './hosts.js';
import type { EgressPolicy } from './types.js';

export type Decision =
  | { allow: true; reason: 'explicit' | 'registry'; rule: string }
  | { allow: false; reason: 'docs_host' | 'not_allowlisted' | 'ip_literal' | 'bad_request'; message: string };

/**
 * Decides one host. The order is the contract: an explicit entry beats a docs host (the task author
 * asked for it), a docs host beats the registries (docs are read only through read_docs, so the
 * agent's reading is recorded), and an IP literal is allowed only when listed explicitly, because an
 * address says nothing about who is behind it.
 */
export function decide(policy: EgressPolicy, rawHost: string): Decision {
  const host = normalizeHost(rawHost);
  if (host === '' || host === '(relative-url)') {
    return { allow: false, reason: 'bad_request', message: 'no host in the request: send absolute URLs or CONNECT host:port' };
  }
  const explicit = firstMatch(host, policy.explicit);
  if (explicit !== undefined) return { allow: true, reason: 'explicit', rule: explicit };
  if (firstMatch(host, policy.docs_hosts) !== undefined) {
    return { allow: false, reason: 'docs_host', message: `${host} is a documentation host: use read_docs to read it` };
  }
  if (isIpLiteral(host)) {
    return { allow: false, reason: 'ip_literal', message: `${host} is a raw IP address: only hosts named in network.allow are reachable by address` };
  }
  const registry = firstMatch(host, policy.registries);
  if (registry !== undefined) return { allow: true, reason: 'registry', rule: registry };
  return { allow: false, reason: 'not_allowlisted', message: `${host} is not on the allowlist (add it to network.allow, or --allow-registry)` };
}
