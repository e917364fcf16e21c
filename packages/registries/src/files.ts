// Small synchronous file helpers: discovery reads a handful of tiny files, and must never throw on a missing one.
import { readFileSync, readdirSync, statSync } from 'node:fs';

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

/** The host of an http(s) URL (lowercased, without port or trailing dot), or undefined. */
export function hostOf(url: string): string | undefined {
  // apt's mirror+http:// and mirror+https:// name the host that serves the mirror list.
  const plain = url.trim().replace(/^mirror\+/, '');
  if (!/^https?:\/\//i.test(plain)) return undefined;
  try {
    const host = new URL(plain).hostname.toLowerCase().replace(/\.$/, '');
    return host === '' ? undefined : host.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return undefined;
  }
}

/** A bare host name as given on a command line or in a config: lowercased, trailing dot dropped. */
export function normaliseHost(value: string): string | undefined {
  const fromUrl = hostOf(value);
  if (fromUrl) return fromUrl;
  const host = value.trim().toLowerCase().replace(/\.$/, '');
  return /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(host) ? host : undefined;
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
