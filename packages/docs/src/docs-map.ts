// --docs-map URL_PREFIX=DIR: serve a docs URL prefix from a local folder, so unpublished docs can be tested offline.
import { statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { UsageError } from '@quickloop/cli-kit';

export interface DocsMapping {
  /** Normalised URL prefix, always ending in `/`. */
  prefix: string;
  /** Absolute folder. */
  dir: string;
}

/** Parses one `URL_PREFIX=DIR` flag value; DIR is resolved against cwd and must be a folder. */
export function parseDocsMap(spec: string, cwd: string): DocsMapping {
  const eq = spec.lastIndexOf('=');
  if (eq <= 0 || eq === spec.length - 1) throw new UsageError(`--docs-map ${spec}: expected URL_PREFIX=DIR`);
  const rawPrefix = spec.slice(0, eq);
  const dir = resolve(cwd, spec.slice(eq + 1));
  let url: URL;
  try {
    url = new URL(rawPrefix);
  } catch {
    throw new UsageError(`--docs-map ${spec}: '${rawPrefix}' is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--docs-map ${spec}: only http(s) URLs can be mapped`);
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    /* reported below */
  }
  if (!isDir) throw new UsageError(`--docs-map ${spec}: ${dir} is not a folder`);
  url.search = '';
  url.hash = '';
  const prefix = url.href.endsWith('/') ? url.href : `${url.href}/`;
  return { prefix, dir };
}

/**
 * The file a URL maps to, or undefined when no mapping covers it. A path that would climb out of the
 * folder (`..`, encoded or not) maps to nothing rather than to a file elsewhere on the host.
 */
export function mappedFile(url: string, maps: readonly DocsMapping[]): { file: string; mapping: DocsMapping } | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  parsed.search = '';
  parsed.hash = '';
  const href = parsed.href;
  // The longest prefix wins, so a sub-site can be mapped to a different folder than its parent.
  const mapping = [...maps].sort((a, b) => b.prefix.length - a.prefix.length).find((m) => href === m.prefix.slice(0, -1) || href.startsWith(m.prefix));
  if (!mapping) return undefined;
  let rest: string;
  try {
    rest = decodeURIComponent(href.slice(mapping.prefix.length));
  } catch {
    return undefined;
  }
  const file = resolve(mapping.dir, rest);
  if (file !== mapping.dir && !file.startsWith(mapping.dir + sep)) return undefined;
  return { file, mapping };
}
