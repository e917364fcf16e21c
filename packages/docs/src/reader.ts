// The docs reader: every URL checked (allow list, credentials, affordances, robots.txt) before it is requested, redirects followed by hand, pages in Markdown and in parts.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import robotsParserModule from 'robots-parser';
import { hostMatches } from '@quickloop/sandbox/hosts';
import { isAffordance, routeKey, affordanceCandidates, type Affordances } from './affordances.js';
import { cacheGet, cachePut, sha256 } from './cache.js';
import { mappedFile, type DocsMapping } from './docs-map.js';
import { decodeBody, looksHtml, metaRefresh, notText, request, MAX_BODY_BYTES } from './http.js';
import { htmlToMarkdown } from './markdown.js';
import { pageFooter, splitPages, PAGE_CHARS } from './paging.js';
import { createRateLimiter, realClock, type Clock } from './rate-limit.js';
import { ROBOTS_TOKEN, USER_AGENT } from './version.js';

/** Hops after the first request: HTTP and meta-refresh redirects together. */
export const MAX_REDIRECTS = 5;
/** RFC 9309 asks a parser to read at least 500 KiB; the rest of a larger robots.txt is ignored. */
export const MAX_ROBOTS_BYTES = 500 * 1024;

export type DocsFrom = 'fetch' | 'map' | 'cache';

/** Why a read failed, for events and classification; the one-line `error` is what people and models read. */
export type FailReason =
  | 'invalid_url'
  | 'allow_list'
  | 'credentials'
  | 'robots'
  | 'affordance_withheld'
  | 'offline_miss'
  | 'redirect_loop'
  | 'too_many_redirects'
  | 'bad_redirect'
  | 'http_status'
  | 'network'
  | 'too_large'
  | 'not_text'
  | 'not_found'
  | 'no_such_page'
  | 'convert';

/** One redirect followed: from `url` (which answered `status`) to `to`. */
export interface Hop {
  url: string;
  status: number;
  to: string;
  kind: 'http' | 'meta';
}

export interface ReadOk {
  ok: true;
  /** The URL asked for. */
  url: string;
  /** Where redirects ended (the URL itself when there were none). */
  finalUrl: string;
  status: number;
  from: DocsFrom;
  /** What the model sees: this part's Markdown and, for a page in parts, the footer. */
  text: string;
  /** The whole page's text, before paging. */
  markdown: string;
  sha256: string;
  page: number;
  pages: number;
  hops: Hop[];
  robotsIgnored: boolean;
  /** Set under --refresh when the cached copy's text differed. */
  changed?: { previousSha256: string; previousFetchedAt: string };
}

export interface ReadFailure {
  ok: false;
  url: string;
  /** One line, what the model sees. */
  error: string;
  status?: number;
  from: DocsFrom | 'policy';
  reason: FailReason;
  hops: Hop[];
}

export type ReadResult = ReadOk | ReadFailure;

export interface ProbeResult {
  kind: 'llms.txt' | 'llms-full.txt' | 'md';
  url: string;
  present: boolean;
  status?: number;
  bytes?: number;
  note?: string;
}

export interface ReaderOptions {
  /** Docs hosts (exact or subdomain match); every URL and every hop must be on it. */
  allow: readonly string[];
  /** The task's docs.path: never withheld as an affordance. */
  route?: readonly string[];
  maps?: readonly DocsMapping[];
  cacheDir?: string;
  refresh?: boolean;
  offline?: boolean;
  ignoreRobots?: boolean;
  /** Minimum seconds between requests to one host (default 1). */
  rateLimitSeconds?: number;
  affordances?: Affordances;
  clock?: Clock;
  fetch?: typeof fetch;
  signal?: AbortSignal;
  pageChars?: number;
  maxBodyBytes?: number;
  timeoutMs?: number;
  now?: () => Date;
}

export interface DocsReader {
  /** `signal` cuts this read (a run's deadline) as well as the reader's own signal. */
  read(url: string, page?: number, signal?: AbortSignal): Promise<ReadResult>;
  probe(entrypoint: string): Promise<ProbeResult[]>;
}

/** A URL fit for events and messages: credentials removed. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username === '' && u.password === '') return url;
    u.username = '';
    u.password = '';
    return u.href;
  } catch {
    // Not a URL, but it may still hold "user:secret@": keep only what cannot be a credential.
    return url.replace(/\/\/[^/@\s]*@/, '//');
  }
}

type Raw =
  | { kind: 'page'; status: number; statusText: string; contentType: string; bytes: Buffer; from: 'fetch' | 'map' }
  | { kind: 'redirect'; status: number; location: string }
  | { kind: 'fail'; reason: FailReason; error: string; status?: number; from: DocsFrom | 'policy' };

type Resolved = { kind: 'page'; url: string; status: number; contentType: string; bytes: Buffer; body: string; html: boolean; from: 'fetch' | 'map'; hops: Hop[] } | (ReadFailure & { kind: 'fail' });

// robots-parser is CommonJS (module.exports = fn) behind an ES-style declaration: Node hands over the function itself.
const robotsParser = robotsParserModule as unknown as (url: string, text: string) => { isAllowed(url: string, ua?: string): boolean | undefined };

type Robots = { allows(url: string): boolean; why?: string };

/** Waits for `p` unless `signal` aborts first (a shared robots.txt fetch is not cancelled, only no longer waited for). */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

export function createDocsReader(o: ReaderOptions): DocsReader {
  const clock = o.clock ?? realClock;
  const limiter = createRateLimiter(o.rateLimitSeconds ?? 1, clock);
  const robots = new Map<string, Promise<Robots>>();
  const maps = o.maps ?? [];
  const route = new Set((o.route ?? []).flatMap((r) => (URL.canParse(r) ? [routeKey(new URL(r))] : [])));
  const http = (url: string, maxBytes = o.maxBodyBytes ?? MAX_BODY_BYTES, truncate = false, signal = o.signal) =>
    request(url, { userAgent: USER_AGENT, maxBytes, truncate, ...(signal ? { signal } : {}), ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}), ...(o.fetch ? { fetch: o.fetch } : {}) });

  const allowed = (u: URL): boolean => o.allow.some((h) => hostMatches(u.hostname, h));

  const rulesFor = (u: URL): Promise<Robots> => {
    let rules = robots.get(u.origin);
    if (!rules) {
      const robotsUrl = `${u.origin}/robots.txt`;
      rules = (async (): Promise<Robots> => {
        await limiter.acquire(u.host, o.signal);
        const answer = await http(robotsUrl, MAX_ROBOTS_BYTES, true);
        // RFC 9309: an unreachable robots.txt (4xx) allows everything, a server error (5xx) disallows everything.
        if (answer.kind !== 'answer') return { allows: () => true };
        if (answer.status >= 500) return { allows: () => false, why: `${robotsUrl} answered HTTP ${answer.status}, which robots.txt rules read as "disallow everything"` };
        if (answer.status < 200 || answer.status > 299) return { allows: () => true };
        const text = decodeBody(answer.bytes, answer.contentType);
        // A site that serves its app shell for every path serves HTML here: that is no robots.txt at all.
        if (looksHtml(answer.contentType, text)) return { allows: () => true };
        const parsed = robotsParser(robotsUrl, text);
        return { allows: (url) => parsed.isAllowed(url, ROBOTS_TOKEN) !== false };
      })();
      robots.set(u.origin, rules);
    }
    return rules;
  };

  /** One request (or one mapped file), no redirect followed. */
  const loadOnce = async (u: URL, signal: AbortSignal | undefined): Promise<Raw> => {
    const mapped = mappedFile(u.href, maps);
    if (mapped) {
      let path = mapped.file;
      try {
        if ((await stat(path)).isDirectory()) path = join(path, 'index.html');
        const bytes = await readFile(path);
        return { kind: 'page', status: 200, statusText: 'OK', contentType: /\.html?$/i.test(path) ? 'text/html' : '', bytes, from: 'map' };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        return { kind: 'fail', reason: 'not_found', from: 'map', status: 404, error: code === 'ENOENT' ? `not in the mapped folder: ${path}` : `cannot read ${path}: ${(error as Error).message}` };
      }
    }
    if (o.offline) return { kind: 'fail', reason: 'offline_miss', from: 'cache', error: `not in the docs cache, and --offline reads nothing over the network: ${u.href}` };
    if (!o.ignoreRobots) {
      const rules = await abortable(rulesFor(u), signal);
      if (!rules.allows(u.href)) return { kind: 'fail', reason: 'robots', from: 'policy', error: rules.why ?? `disallowed by ${u.origin}/robots.txt for automated readers: ${u.href}` };
    }
    await limiter.acquire(u.host, signal);
    const answer = await http(u.href, undefined, false, signal);
    if (answer.kind === 'network') return { kind: 'fail', reason: 'network', from: 'fetch', error: `fetch failed: ${answer.error}` };
    if (answer.kind === 'too_large') return { kind: 'fail', reason: 'too_large', from: 'fetch', status: answer.status, error: `the page is larger than ${answer.limit / 1024 / 1024} MB, more than a docs page should be: ${u.href}` };
    if (answer.status >= 300 && answer.status < 400 && answer.location !== undefined) return { kind: 'redirect', status: answer.status, location: answer.location };
    return { kind: 'page', status: answer.status, statusText: answer.statusText, contentType: answer.contentType, bytes: answer.bytes, from: 'fetch' };
  };

  /** A URL a request may be made to, or why not; checked for the first URL and again for every hop. */
  const admit = (raw: string, base: string | undefined, hops: Hop[]): { url: URL } | ReadFailure => {
    const shown = redactUrl(base === undefined ? raw : raw);
    const fail = (reason: FailReason, error: string): ReadFailure => ({ ok: false, url: '', error, from: 'policy', reason, hops });
    let u: URL;
    try {
      u = new URL(raw, base);
    } catch {
      return fail(base === undefined ? 'invalid_url' : 'bad_redirect', base === undefined ? `not an absolute URL: ${shown}` : `a redirect to ${shown}, which is not a URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      return fail(base === undefined ? 'invalid_url' : 'bad_redirect', base === undefined ? `only http(s) pages can be read: ${redactUrl(u.href)}` : `a redirect to ${u.protocol} is never followed`);
    }
    if (u.username !== '' || u.password !== '') return fail('credentials', `a docs URL must not carry credentials: ${redactUrl(u.href)}`);
    if (!allowed(u)) {
      return fail('allow_list', base === undefined ? `outside this task's documentation allow list (${o.allow.join(', ')}): ${u.href}` : `redirected to ${u.href}, outside the docs allow list (${o.allow.join(', ')})`);
    }
    return { url: u };
  };

  /** Follows HTTP and meta-refresh redirects from an admitted URL, each hop admitted before it is requested. */
  const resolve = async (start: URL, shown: string, signal: AbortSignal | undefined): Promise<Resolved> => {
    const hops: Hop[] = [];
    const seen = new Set([routeKey(start)]);
    let current = start;
    const failed = (f: Omit<ReadFailure, 'ok' | 'url' | 'hops'>): Resolved => ({ kind: 'fail', ok: false, url: shown, hops, ...f });
    for (;;) {
      const raw = await loadOnce(current, signal);
      if (raw.kind === 'fail') return failed(raw);
      let target: string | undefined;
      let kind: Hop['kind'] = 'http';
      let body = '';
      let html = false;
      if (raw.kind === 'redirect') target = raw.location;
      else {
        body = decodeBody(raw.bytes, raw.contentType);
        html = looksHtml(raw.contentType, body);
        if (raw.status < 200 || raw.status > 299) return failed({ reason: 'http_status', from: raw.from, status: raw.status, error: `HTTP ${raw.status}${raw.statusText ? ` ${raw.statusText}` : ''}: ${current.href}` });
        const binary = notText(raw.contentType, raw.bytes);
        if (binary !== undefined) return failed({ reason: 'not_text', from: raw.from, status: raw.status, error: `not a text page (${binary}): ${current.href}; the reader gives the model HTML, Markdown or plain text` });
        const refresh = html ? metaRefresh(body) : undefined;
        // A page that refreshes itself (a reload timer) is a page, not a redirect.
        if (refresh !== undefined && URL.canParse(refresh, current.href) && routeKey(new URL(refresh, current)) === routeKey(current)) target = undefined;
        else if (refresh !== undefined) {
          target = refresh;
          kind = 'meta';
        }
      }
      if (target === undefined) {
        if (raw.kind !== 'page') return failed({ reason: 'http_status', from: 'fetch', status: raw.status, error: `HTTP ${raw.status} without a Location: ${current.href}` });
        return { kind: 'page', url: current.href, status: raw.status, contentType: raw.contentType, bytes: raw.bytes, body, html, from: raw.from, hops };
      }
      const next = admit(target, current.href, hops);
      const status = raw.status;
      if ('ok' in next) return { kind: 'fail', ...next, url: shown, ...(kind === 'http' ? { status } : {}) };
      hops.push({ url: current.href, status, to: next.url.href, kind });
      if (seen.has(routeKey(next.url))) return failed({ reason: 'redirect_loop', from: 'policy', error: `a redirect loop: ${next.url.href} was already visited` });
      if (hops.length > MAX_REDIRECTS) return failed({ reason: 'too_many_redirects', from: 'policy', error: `more than ${MAX_REDIRECTS} redirects from ${shown}` });
      seen.add(routeKey(next.url));
      current = next.url;
    }
  };

  const pageOf = (ok: Omit<ReadOk, 'text' | 'page' | 'pages'>, page: number): ReadResult => {
    const parts = splitPages(ok.markdown, o.pageChars ?? PAGE_CHARS);
    if (!Number.isInteger(page) || page < 1 || page > parts.length) {
      return { ok: false, url: ok.url, from: 'policy', reason: 'no_such_page', hops: ok.hops, error: `page ${page} does not exist: ${ok.url} has ${parts.length} page${parts.length === 1 ? '' : 's'}` };
    }
    return { ...ok, text: parts[page - 1]! + pageFooter(page, parts.length), page, pages: parts.length };
  };

  return {
    async read(url, page = 1, callSignal) {
      // robots.txt stays on the reader's own signal: its answer is shared by every later read.
      const signal = callSignal && o.signal ? AbortSignal.any([callSignal, o.signal]) : (callSignal ?? o.signal);
      const shown = redactUrl(url);
      const admitted = admit(url, undefined, []);
      if ('ok' in admitted) return { ...admitted, url: shown };
      const u = admitted.url;
      if (o.affordances === 'none' && isAffordance(u) && !route.has(routeKey(u))) {
        return { ok: false, url: shown, from: 'policy', reason: 'affordance_withheld', hops: [], error: `withheld in this run (--affordances none): ${u.href}` };
      }
      const mapped = mappedFile(u.href, maps) !== undefined;
      const previous = o.cacheDir !== undefined && !mapped ? await cacheGet(o.cacheDir, u.href) : undefined;
      if (previous && !o.refresh) {
        return pageOf({ ok: true, url: shown, finalUrl: previous.final_url, status: previous.status, from: 'cache', markdown: previous.text, sha256: previous.sha256, hops: [], robotsIgnored: o.ignoreRobots === true }, page);
      }
      if (o.offline && !mapped && o.cacheDir === undefined) {
        return { ok: false, url: shown, from: 'cache', reason: 'offline_miss', hops: [], error: `--offline without a --cache-dir reads nothing: ${u.href}` };
      }
      const got = await resolve(u, shown, signal);
      if (got.kind === 'fail') {
        const { kind: _kind, ...failure } = got;
        return failure;
      }
      let markdown: string;
      try {
        markdown = got.html ? htmlToMarkdown(got.body, got.url) : got.body.replace(/^\uFEFF/, '');
      } catch (error) {
        return { ok: false, url: shown, from: got.from, status: got.status, reason: 'convert', hops: got.hops, error: `the page could not be turned into text: ${(error as Error).message.split('\n')[0]}` };
      }
      const hash = sha256(markdown);
      if (o.cacheDir !== undefined && got.from === 'fetch') {
        // A cache that cannot be written (a full disk, a read-only folder) costs the next run a fetch;
        // it is no reason to withhold a page that was read.
        await cachePut(o.cacheDir, { url: u.href, final_url: got.url, status: got.status, text: markdown, sha256: hash, fetched_at: (o.now?.() ?? new Date()).toISOString() }).catch(() => undefined);
      }
      const changed = previous && previous.sha256 !== hash ? { previousSha256: previous.sha256, previousFetchedAt: previous.fetched_at } : undefined;
      return pageOf({ ok: true, url: shown, finalUrl: got.url, status: got.status, from: got.from, markdown, sha256: hash, hops: got.hops, robotsIgnored: o.ignoreRobots === true, ...(changed ? { changed } : {}) }, page);
    },

    async probe(entrypoint) {
      const results: ProbeResult[] = [];
      if (!URL.canParse(entrypoint)) return results;
      for (const candidate of affordanceCandidates(entrypoint)) {
        const admitted = admit(candidate.url, undefined, []);
        if ('ok' in admitted) {
          results.push({ ...candidate, present: false, note: admitted.error });
          continue;
        }
        const got = await resolve(admitted.url, candidate.url, o.signal);
        if (got.kind === 'fail') {
          results.push({ ...candidate, present: false, ...(got.status !== undefined ? { status: got.status } : {}), note: got.error });
          continue;
        }
        const bytes = got.bytes.byteLength;
        // A soft 200 (an app shell answering every path) is not the machine-readable file it was asked for.
        const note = got.html ? 'served HTML where a machine-readable file was expected' : bytes === 0 ? 'empty' : undefined;
        results.push({ ...candidate, present: note === undefined, status: got.status, bytes, ...(note ? { note } : {}) });
      }
      return results;
    },
  };
}
