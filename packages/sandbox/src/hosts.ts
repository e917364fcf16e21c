// The one host matcher: how every package normalises host names, matches them against lists, spells
// endpoints (host:port) and classifies addresses. Builtins only, so light entries can import it
// (`@quickloop/sandbox/hosts`).
import { isIP as netIsIP, isIPv4 } from 'node:net';

/**
 * node:net's isIP, without its IPv6 pattern for a string with no colon (every IPv6 form has one): the
 * pattern's first use is compiled, 5-7 ms of every process that spells an endpoint or matches a host.
 */
export function isIP(text: string): 0 | 4 | 6 {
  if (!text.includes(':')) return isIPv4(text) ? 4 : 0;
  return netIsIP(text) as 0 | 4 | 6;
}

/** What may not appear in a host name: anything that would make a URL parser read a different host. */
const NOT_IN_A_HOST = /[\s/\\?#@%[\]<>^|"'`{}]/;

/**
 * The canonical spelling of a host: lower-cased, trailing dots and IPv6 brackets removed, IDN to
 * punycode, IPv4 in dotted-quad form (`0x7f.1` → `127.0.0.1`), IPv6 compressed (`0:0::1` → `::1`).
 * '' when it is not a host at all (empty, or has characters that would change what a URL means).
 */
export function normalizeHost(host: string): string {
  let h = host.trim();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  h = h.replace(/\.+$/, '');
  if (h === '') return '';
  if (h.includes(':')) {
    const zoneless = h.replace(/%.*$/, '');
    if (isIP(zoneless) !== 6) return '';
    try {
      return new URL(`http://[${zoneless}]/`).hostname.slice(1, -1);
    } catch {
      return '';
    }
  }
  if (NOT_IN_A_HOST.test(h)) return '';
  try {
    const parsed = new URL(`http://${h}/`).hostname.replace(/\.+$/, '');
    return parsed;
  } catch {
    return '';
  }
}

export function isIpLiteral(host: string): boolean {
  const h = normalizeHost(host);
  return h !== '' && isIP(h) !== 0;
}

/**
 * `pattern` covers `host` when both normalise to the same name, or — with `subdomains` — host ends
 * in `.pattern`. IP literals only ever match exactly: `0.0.1` must never cover `10.0.0.1`.
 */
export function hostMatches(host: string, pattern: string, subdomains = true): boolean {
  const h = normalizeHost(host);
  const p = normalizeHost(pattern);
  if (p === '' || h === '') return false;
  if (h === p) return true;
  if (!subdomains || isIP(h) !== 0 || isIP(p) !== 0) return false;
  return h.endsWith(`.${p}`);
}

/** The first entry of `list` that covers `host`, if any. */
export function firstMatch(host: string, list: readonly string[], subdomains = true): string | undefined {
  return list.find((p) => hostMatches(host, p, subdomains));
}

/**
 * A URL path segment that looks like a key rather than a place: 20 or more letters, digits and
 * underscores, with both letters and digits in it (some hosted registries put the key in the path).
 */
export function tokenLikeSegment(segment: string): boolean {
  return /^[A-Za-z0-9_]{20,}$/.test(segment) && /\d/.test(segment) && /[A-Za-z]/.test(segment);
}

export interface Endpoint {
  host: string;
  port: number;
}

const validPort = (n: number): boolean => Number.isInteger(n) && n >= 1 && n <= 65535;

/** `host:port`, with brackets around an IPv6 address. */
export function formatEndpoint(host: string, port: number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

/**
 * `host:port` or `[v6]:port` → its parts, normalised; a bare host has no port (older streams listed
 * registries that way). Undefined when the host is not one or the port cannot exist.
 */
export function parseEndpoint(text: string): { host: string; port?: number } | undefined {
  const t = text.trim();
  const m = /^\[([^\]]*)\](?::(\d{1,5}))?$/.exec(t) ?? /^([^:[\]]*)(?::(\d{1,5}))?$/.exec(t);
  const raw = m ? m[1]! : isIP(t) === 6 ? t : undefined;
  if (raw === undefined) return undefined;
  const host = normalizeHost(raw);
  if (host === '') return undefined;
  if (!m || m[2] === undefined) return { host };
  const port = Number(m[2]);
  return validPort(port) ? { host, port } : undefined;
}

/** The endpoint an http(s) URL names: its explicit port, else 443 for https and 80 for http. */
export function endpointOfUrl(url: string): Endpoint | undefined {
  // apt's mirror+http:// and mirror+https:// name the host that serves the mirror list.
  const plain = url.trim().replace(/^mirror\+/i, '');
  if (!/^https?:\/\//i.test(plain)) return undefined;
  try {
    const u = new URL(plain);
    const host = normalizeHost(u.hostname);
    if (host === '') return undefined;
    return { host, port: u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80 };
  } catch {
    return undefined;
  }
}

/**
 * What `--allow-registry VALUE` names, the same for every stage: a registry URL (its host and port),
 * `host:port`, or a bare host, which means HTTPS on 443 (the scheme registries use by default).
 */
export function registryEndpoint(value: string): Endpoint | undefined {
  const text = value.trim();
  const e = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? endpointOfUrl(text) : parseEndpoint(text);
  if (!e || !/^[a-z0-9.-]+$|^[0-9a-f:.]+$/.test(e.host) || e.host.startsWith('.') || e.host.includes('..')) return undefined;
  return { host: e.host, port: e.port ?? 443 };
}

// ---- addresses ------------------------------------------------------------------------------

/** The 16 bytes of an IPv6 address (dotted-quad tail and `::` included), or undefined. */
function ipv6Bytes(text: string): number[] | undefined {
  let t = text.replace(/%.*$/, '');
  if (isIP(t) !== 6) return undefined;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(t);
  if (v4) {
    const b = v4[1]!.split('.').map(Number);
    t = `${t.slice(0, -v4[1]!.length)}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  }
  const [head = '', tail] = t.split('::');
  const parts = (s: string): string[] => (s === '' ? [] : s.split(':'));
  const h = parts(head);
  const tl = tail === undefined ? [] : parts(tail);
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - tl.length).fill('0'), ...tl];
  if (groups.length !== 8) return undefined;
  return groups.flatMap((g) => {
    const n = Number.parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
}

function ipv4Class(b: readonly number[]): string | undefined {
  const [a = 0, c = 0] = b;
  if (a === 0) return 'unspecified or "this network" (0.0.0.0/8)';
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && c >= 16 && c <= 31) || (a === 192 && c === 168)) return 'private';
  if (a === 169 && c === 254) return 'link-local';
  if (a === 100 && c >= 64 && c <= 127) return 'carrier-grade NAT (100.64.0.0/10)';
  if (a === 192 && c === 0 && b[2] === 0) return 'IETF protocol assignments (192.0.0.0/24)';
  // Documentation, benchmarking and reserved ranges are not refused: they are not the host's or its
  // network's own, and some closed networks answer public names with them.
  if (a >= 224 && a <= 239) return 'multicast';
  if (a === 255 && c === 255 && b[2] === 255 && b[3] === 255) return 'broadcast';
  return undefined;
}

/**
 * Why an address must not be reached from the sandbox (loopback, private, link-local, unspecified,
 * multicast, CGNAT, or an IPv6 form embedding one of those), or undefined for a public
 * address. Anything that is not an address at all is refused too: the proxy only asks about what a
 * resolver returned.
 */
export function addressClass(address: string): string | undefined {
  const t = address.trim().replace(/^\[|\]$/g, '');
  if (isIPv4(t)) return ipv4Class(t.split('.').map(Number));
  const b = ipv6Bytes(t);
  if (!b) return 'not an IP address';
  const zero = (from: number, to: number): boolean => b.slice(from, to).every((x) => x === 0);
  if (zero(0, 16)) return 'unspecified (::)';
  if (zero(0, 15) && b[15] === 1) return 'loopback';
  // Forms that carry an IPv4 address: mapped (::ffff:a.b.c.d), translated (::ffff:0:a.b.c.d),
  // compatible (::a.b.c.d), NAT64 (64:ff9b::/96 and 64:ff9b:1::/48) and 6to4 (2002:AABB:CCDD::).
  const v4 = (at: number): string | undefined => {
    const c = ipv4Class(b.slice(at, at + 4));
    return c === undefined ? undefined : `${c} (IPv4 ${b.slice(at, at + 4).join('.')} inside IPv6)`;
  };
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(12);
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) return v4(12);
  if (zero(0, 12)) return v4(12) ?? 'deprecated IPv4-compatible (::/96)';
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) return v4(12) ?? (zero(4, 12) ? undefined : 'local-use NAT64 (64:ff9b:1::/48)');
  if (b[0] === 0x20 && b[1] === 0x02) return v4(2);
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x00 && b[3] === 0x00) return 'Teredo (2001::/32)';
  if (b[0] === 0x01 && zero(1, 8)) return 'discard-only (100::/64)';
  if ((b[0]! & 0xfe) === 0xfc) return 'unique local (fc00::/7)';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return 'link-local (fe80::/10)';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return 'site-local (fec0::/10)';
  if (b[0] === 0xff) return 'multicast';
  return undefined;
}
