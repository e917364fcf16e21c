// Host names as the policy compares them: normalised, matched exactly or by dot-suffix, IP literals told apart.
import { isIP } from 'node:net';

/** Lower-cased, brackets of an IPv6 literal and a trailing dot removed. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  while (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

export function isIpLiteral(host: string): boolean {
  return isIP(normalizeHost(host)) !== 0;
}

/**
 * `pattern` covers `host` when they are equal or host ends in `.pattern`. IP literals match only
 * exactly: `1.1` must never cover `10.1.1`.
 */
export function hostMatches(host: string, pattern: string): boolean {
  const h = normalizeHost(host);
  const p = normalizeHost(pattern);
  if (p === '' || h === '') return false;
  if (h === p) return true;
  if (isIP(h) !== 0 || isIP(p) !== 0) return false;
  return h.endsWith(`.${p}`);
}

/** The first entry of `list` that covers `host`, if any. */
export function firstMatch(host: string, list: readonly string[]): string | undefined {
  return list.find((p) => hostMatches(host, p));
}
