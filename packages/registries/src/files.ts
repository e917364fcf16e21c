// Small synchronous file helpers: discovery reads a handful of tiny files, and must never throw on a missing one.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { endpointOfUrl, formatEndpoint, tokenLikeSegment } from '@quickloop/sandbox/hosts';

/** The file's text, or undefined when it is absent or unreadable (config files are optional by nature). */
export function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

export function listDir(path: string): string[] {
  try {
    return readdirSync(path).sort();
  } catch {
    return [];
  }
}

export function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The endpoint (`host:port`) an http(s) URL names: its explicit port, else 443 for https and 80 for http. */
export function endpointOf(url: string): string | undefined {
  const e = endpointOfUrl(url);
  return e ? formatEndpoint(e.host, e.port) : undefined;
}

/**
 * Parses the INI dialect npm and pip share closely enough: `[section]`, `key = value`, `;`/`#`
 * comments, and (pip) indented continuation lines that append to the previous value.
 */
export function parseIni(text: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let current = new Map<string, string>();
  sections.set('', current);
  let lastKey: string | undefined;
  for (const rawLine of text.split(/\r?\n/)) {
    const trimmed = rawLine.trim();
    if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';')) {
      if (trimmed === '') lastKey = undefined;
      continue;
    }
    const section = /^\[([^\]]+)\]$/.exec(trimmed);
    if (section) {
      const name = section[1]!.trim().toLowerCase();
      current = sections.get(name) ?? new Map<string, string>();
      sections.set(name, current);
      lastKey = undefined;
      continue;
    }
    if (/^\s/.test(rawLine) && lastKey !== undefined) {
      current.set(lastKey, `${current.get(lastKey) ?? ''}\n${trimmed}`);
      continue;
    }
    const eq = trimmed.search(/[=:]/);
    // npm keys such as `@scope:registry` contain a colon, so only `=` separates them there.
    const sep = trimmed.indexOf('=') >= 0 ? trimmed.indexOf('=') : eq;
    if (sep <= 0) continue;
    const key = trimmed.slice(0, sep).trim();
    let value = trimmed.slice(sep + 1).trim();
    if (/^(["']).*\1$/.test(value)) value = value.slice(1, -1);
    current.set(key, value);
    lastKey = key;
  }
  return sections;
}

/**
 * An http(s) URL that carries nothing but a place, normalised to end in `/`; undefined for any other:
 * one with a user, a password or a query in it, or a path segment that looks like a token (20 or more
 * letters and digits, both kinds, as some hosted registries put the key in the path).
 */
export function plainUrl(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username !== '' || url.password !== '' || url.search !== '' || /[\s?]/.test(raw.trim())) return undefined;
  if (url.pathname.split('/').some(tokenLikeSegment)) return undefined;
  url.hash = '';
  return url.toString().replace(/\/*$/, '/');
}
