// Reads one docs page for an agent: the allow list first, then a --docs-map folder or a plain HTTP fetch.
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { hostMatches } from '@quickloop/sandbox/hosts';
import { htmlToText } from './html-text.js';
import { mappedFile, type DocsMapping } from './docs-map.js';

/** The most text an agent is given from one page; the rest is cut from the middle. */
export const MAX_PAGE_CHARS = 60_000;
/** Bodies larger than this are cut before decoding: docs pages are not downloads. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
export const FETCH_TIMEOUT_MS = 30_000;
export const MAX_REDIRECTS = 5;
export const USER_AGENT = 'quickloop (documentation agent-readiness testing)';

export type DocsSource = 'fetch' | 'map';

export type DocsResult =
  | { ok: true; url: string; resolvedTo?: string; status: number; from: DocsSource; text: string; originalChars: number; truncated: boolean; sha256: string }
  | { ok: false; url: string; error: string; status?: number; from: DocsSource | 'policy' };

export interface DocsOptions {
  maps: readonly DocsMapping[];
  /** Docs hosts the task allows (exact or subdomain match). */
  allow: readonly string[];
  signal?: AbortSignal;
}

/** Keeps the first and last half of `limit` characters around a marker. */
export function headTail(text: string, limit: number, marker = '\n[... truncated by quickloop ...]\n'): { text: string; truncated: boolean } {
  if (text.length <= limit) return { text, truncated: false };
  const half = Math.floor(limit / 2);
  return { text: text.slice(0, half) + marker + text.slice(text.length - half), truncated: true };
}

function looksHtml(contentType: string, body: string): boolean {
  return /html/i.test(contentType) || /^\s*(<!doctype html|<html)/i.test(body);
}

function finish(url: string, from: DocsSource, status: number, raw: string, contentType: string, resolvedTo?: string): DocsResult {
  const text = looksHtml(contentType, raw) ? htmlToText(raw) : raw;
  const cut = headTail(text, MAX_PAGE_CHARS);
  return {
    ok: true,
    url,
    ...(resolvedTo !== undefined && resolvedTo !== url ? { resolvedTo } : {}),
    status,
    from,
    text: cut.text,
    originalChars: text.length,
    truncated: cut.truncated,
    sha256: createHash('sha256').update(text, 'utf8').digest('hex'),
  };
}

async function readMapped(url: string, file: string): Promise<DocsResult> {
  let path = file;
  try {
    if ((await stat(path)).isDirectory()) path = join(path, 'index.html');
    const raw = await readFile(path, 'utf8');
    return finish(url, 'map', 200, raw, path.endsWith('.html') || path.endsWith('.htm') ? 'text/html' : '');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, url, from: 'map', status: 404, error: code === 'ENOENT' ? `not in the mapped folder: ${path}` : `cannot read ${path}: ${(error as Error).message}` };
  }
}

async function fetchPage(url: string, options: DocsOptions): Promise<DocsResult> {
  const timeout = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let response: Response | undefined;
  let current = url;
  // Redirects are followed by hand so that every hop is checked against the allow list before it
  // is requested: an automatic follow would already have reached a host the task never allowed.
  for (let hop = 0; ; hop += 1) {
    try {
      response = await fetch(current, { redirect: 'manual', signal, headers: { 'user-agent': USER_AGENT, accept: 'text/html, text/markdown, text/plain;q=0.9, */*;q=0.5' } });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (error as Error).message;
      return { ok: false, url, from: 'fetch', error: `fetch failed: ${why}` };
    }
    const location = response.headers.get('location');
    if (response.status < 300 || response.status > 399 || location === null) break;
    await response.body?.cancel().catch(() => undefined);
    if (hop >= MAX_REDIRECTS) return { ok: false, url, from: 'fetch', status: response.status, error: `more than ${MAX_REDIRECTS} redirects` };
    const next = new URL(location, current);
    if (!options.allow.some((h) => hostMatches(next.hostname, h))) {
      return { ok: false, url, from: 'policy', status: response.status, error: `redirected to ${next.href}, outside the docs allow list` };
    }
    current = next.href;
  }
  const finalUrl = current;
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return { ok: false, url, from: 'fetch', status: response.status, error: `HTTP ${response.status} ${response.statusText}`.trim() };
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body ?? []) {
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size >= MAX_BODY_BYTES) break;
    }
  } catch (error) {
    return { ok: false, url, from: 'fetch', status: response.status, error: `reading the body failed: ${(error as Error).message}` };
  }
  const raw = Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8');
  return finish(url, 'fetch', response.status, raw, response.headers.get('content-type') ?? '', finalUrl);
}

/** Never throws: every failure is a result the caller records as `docs.error`. */
export async function readDocsPage(url: string, options: DocsOptions): Promise<DocsResult> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, url, from: 'policy', error: 'not an absolute URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { ok: false, url, from: 'policy', error: 'only http(s) pages can be read' };
  if (!options.allow.some((h) => hostMatches(parsed.hostname, h))) {
    return { ok: false, url, from: 'policy', error: `outside this task's documentation allow list (${options.allow.join(', ')})` };
  }
  const mapped = mappedFile(url, options.maps);
  if (mapped) return readMapped(url, mapped.file);
  return fetchPage(url, options);
}
