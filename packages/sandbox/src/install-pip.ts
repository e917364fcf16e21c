// The pip half of the install cache: the package files (wheels and sdists) an attempt installed,
// downloaded again by the harness itself from pip's configured index, and offered to later attempts as
// entries of pip's own HTTP cache, so their pip reads the file from disk instead of the network.
//
// Threat model, as for npm (install-cache.ts): whatever an attempt leaves is hostile, so nothing it
// wrote is ever taken. From the attempt the harness reads only names: the `*.dist-info` folders pip
// installed (name, version, wheel tags) and which of the index's file URLs its pip cache holds an
// entry for. It then reads the project's page on the index itself, outside every sandbox, downloads
// the matching files, and keeps a file only if its SHA-256 is the one the index page gives for it.
//
// Why pip's HTTP cache and not a wheelhouse (`--find-links`): pip prefers the index's copy of a file
// over an identical one in a find-links folder, so a wheelhouse saves no download. Its HTTP cache is
// keyed by the file's URL, so an entry is only ever used where pip asks the same index for the same
// file: an attempt that installs from another index (even one serving a different file under the same
// name) does not meet it. pip checks the file against the index's hash again when it reads it.
//
// pip's cache layout (`$HOME/.cache/pip`): pip before 23.3 keeps each response whole in `http/`, later
// ones keep the metadata and the body apart in `http-v2/`; both are written. An entry's path is the
// SHA-224 of the request URL as pip normalizes it, five one-letter folders deep, and its text is
// CacheControl's: `cc=4,` and a msgpack map of the response.
import { createHash, randomBytes } from 'node:crypto';
import { constants, type Dir, type Dirent, lstatSync, mkdirSync, opendirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { copyFile, mkdir, open } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { download, getBuffer } from './http-get.js';
import { readBounded, realDirs } from './install-cache.js';
import { sandboxOwner } from './rootfs.js';

/** pip's cache inside a sandbox home (its default: `$HOME/.cache/pip`). */
export const pipCacheOf = (home: string): string => join(home, '.cache', 'pip');

/** A package file larger than this is not kept. */
export const MAX_PIP_FILE_BYTES = 1024 * 1024 * 1024;
/** What one harvest downloads in all, at most. */
export const MAX_PIP_FETCH_BYTES = 4 * 1024 * 1024 * 1024;
/** Installed distributions looked up from one attempt, at most. */
export const MAX_PIP_DISTS = 500;
const MAX_PAGE_BYTES = 32 * 1024 * 1024;
/** Folder entries one look for `*.dist-info` reads, at most, and how deep it goes. */
const MAX_WALK_ENTRIES = 200_000;
const MAX_WALK_DEPTH = 10;
const WALK_SKIPS = new Set(['node_modules', '.git', '.cache', '__pycache__', '.npm']);
/** Files of one project taken because the attempt's pip cache had them, at most. */
const MAX_CACHED_PER_PROJECT = 20;
const FETCHES_AT_ONCE = 8;
/** One index page's time, all of it: a page that trickles is given up on. */
const PAGE_DEADLINE_MS = 2 * 60_000;

const DIST_INFO = /^([A-Za-z0-9](?:[A-Za-z0-9._]*[A-Za-z0-9])?)-([A-Za-z0-9][A-Za-z0-9.+!_]*)\.dist-info$/;
const HEX64 = /^[0-9a-f]{64}$/;

export interface PipIndexes {
  /** The indexes' URLs, each ending in `/`, in pip's order. */
  urls: string[];
  /** pip's CA file (`cert`), read, when it has one. */
  ca?: string;
}

export interface InstalledDist {
  name: string;
  version: string;
  /** The installed wheel's tags (its WHEEL file), expanded. */
  tags: string[];
}

export interface PipReport {
  /** Files downloaded into the store. */
  fetched: number;
  /** Files the store already had. */
  known: number;
  /** Distributions no index lists a matching file for (a local build, another index). */
  notOnIndex: number;
  /** Pages or files that could not be had, or whose hash was not the index's. */
  failed: number;
  overBudget: number;
}

/** PEP 503's normalized project name. */
export const canonicalName = (name: string): string => name.toLowerCase().replace(/[-_.]+/g, '-');

const readSmall = (path: string, max: number): string | undefined => readBounded(path, max)?.toString('utf8');

/** The next entry of a folder, or null at its end or when it can no longer be read. */
function readEntry(handle: Dir): Dirent | null {
  try {
    return handle.readSync();
  } catch {
    return null;
  }
}

/**
 * The distributions pip installed under `roots` (a venv in the workspace, `--user` in the home): real
 * `*.dist-info` folders whose INSTALLER is pip. Links are never followed, and the walk is bounded.
 */
export function installedDists(roots: readonly string[]): InstalledDist[] {
  const found = new Map<string, InstalledDist>();
  let budget = MAX_WALK_ENTRIES;
  const stack: { dir: string; depth: number }[] = roots.map((dir) => ({ dir, depth: 0 }));
  while (stack.length > 0 && budget > 0 && found.size < MAX_PIP_DISTS) {
    const { dir, depth } = stack.pop()!;
    // Read entry by entry, not the whole folder at once: a folder of millions of names costs no more than the budget.
    let handle: Dir;
    try {
      handle = opendirSync(dir, { bufferSize: 256 });
    } catch {
      continue;
    }
    try {
      for (let e = readEntry(handle); e !== null; e = readEntry(handle)) {
        if ((budget -= 1) <= 0) break;
        if (!e.isDirectory()) continue;
        const m = DIST_INFO.exec(e.name);
        if (m) {
          const at = join(dir, e.name);
          if (readSmall(join(at, 'INSTALLER'), 256)?.trim() !== 'pip') continue;
          const tags = (readSmall(join(at, 'WHEEL'), 64 * 1024) ?? '')
            .split(/\r?\n/)
            .map((l) => /^Tag:\s*(\S+)\s*$/i.exec(l)?.[1]?.toLowerCase())
            .filter((t): t is string => t !== undefined);
          const dist = { name: m[1]!, version: m[2]!, tags };
          const key = `${canonicalName(dist.name)} ${dist.version.toLowerCase()} ${tags.join(' ')}`;
          if (!found.has(key) && found.size < MAX_PIP_DISTS) found.set(key, dist);
        } else if (depth < MAX_WALK_DEPTH && !WALK_SKIPS.has(e.name)) stack.push({ dir: join(dir, e.name), depth: depth + 1 });
      }
    } finally {
      handle.closeSync();
    }
  }
  return [...found.values()];
}

/** Python's `urllib.parse.quote(s)`: everything but letters, digits, `_.-~` and `/`, as UTF-8 %XX. */
function pyQuote(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9_.\-~/]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Python's `urllib.parse.unquote`: %XX escapes as UTF-8, a sequence that is not UTF-8 as U+FFFD. */
function unquote(s: string): string {
  if (!s.includes('%')) return s;
  const bytes: number[] = [];
  for (let i = 0; i < s.length; ) {
    if (s[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(s.slice(i + 1, i + 3))) {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      const ch = String.fromCodePoint(s.codePointAt(i)!);
      bytes.push(...Buffer.from(ch, 'utf8'));
      i += ch.length;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The characters urllib3 leaves as they are in a query. */
const QUERY_CHARS = /^[A-Za-z0-9._~!$&'()*+,;=:@/?-]$/;

/**
 * A link's query as pip's request has it: urllib3 escapes what a query may not hold (every `%` too,
 * unless each one is already an escape) and upper-cases escapes, then requests decodes the escapes
 * of unreserved characters.
 */
function pipQuery(raw: string): string {
  const escapes = raw.match(/%[0-9A-Fa-f]{2}/g)?.length ?? 0;
  const percentEncoded = escapes === (raw.match(/%/g)?.length ?? 0);
  let out = '';
  for (const byte of Buffer.from(raw.replace(/%[0-9A-Fa-f]{2}/g, (e) => e.toUpperCase()), 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += (percentEncoded && ch === '%') || (byte < 0x80 && QUERY_CHARS.test(ch)) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out.replace(/%([0-9A-F]{2})/g, (e, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return /^[A-Za-z0-9._~-]$/.test(ch) ? ch : e;
  });
}

/**
 * The port a URL's text spells out: undefined when the text has no authority (a relative link), ''
 * when it names no port. Python keeps an explicit default port (`:443`) that a WHATWG URL drops.
 */
function spelledPort(raw: string): string | undefined {
  const m = /^(?:[A-Za-z][A-Za-z0-9+.-]*:)?\/\/([^/?#\\]*)/.exec(raw.replace(/^[\0-\x20]+/, ''));
  if (!m) return undefined;
  const hostPort = m[1]!.slice(m[1]!.lastIndexOf('@') + 1).replace(/^\[[^\]]*\]/, '');
  const port = /:(\d+)$/.exec(hostPort)?.[1];
  return port === undefined ? '' : String(Number(port));
}

/**
 * The URL pip requests for a file link, and so the key of its cache entry: the link resolved against
 * the page, without credentials or fragment, each path part re-quoted as pip's link cleaning does
 * (`@` and `%2F` kept, the latter upper-cased), scheme and host lower-cased as CacheControl does.
 * `spelled` is what the link's text says that a WHATWG URL loses: an explicit default port, and the
 * query as written.
 */
export function pipRequestUrl(link: URL, spelled: { port?: string; query?: string } = {}): string {
  const path = link.pathname
    .split(/(@|%2F)/i)
    .map((part, i) => (i % 2 === 1 ? part.toUpperCase() : pyQuote(unquote(part))))
    .join('');
  const port = link.port === '' && spelled.port !== undefined && spelled.port !== '' ? `:${spelled.port}` : '';
  const query = pipQuery(spelled.query ?? link.search.slice(1));
  return `${link.protocol}//${link.host.toLowerCase()}${port}${path || '/'}${query === '' ? '' : `?${query}`}`;
}

/** The folder path of a cache entry for `url` under `base` (`http` or `http-v2`): SHA-224, five letters deep. */
export function pipEntryPath(base: string, url: string): string {
  const hashed = createHash('sha224').update(url).digest('hex');
  return join(base, ...hashed.slice(0, 5).split(''), hashed);
}

interface PageFile {
  /** What the harness downloads: the key, with the index's credentials when the file is on its host. */
  href: URL;
  /** The URL pip requests, the cache key. */
  key: string;
  filename: string;
  sha256: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const decodeEntities = (s: string): string =>
  s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, code: string) => {
    if (code[0] === '#') {
      const n = code[1] === 'x' || code[1] === 'X' ? parseInt(code.slice(2), 16) : parseInt(code.slice(1), 10);
      return Number.isFinite(n) && n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : whole;
    }
    return ENTITIES[code.toLowerCase()] ?? whole;
  });

/** A link's text as a URL parser should see it: as Python's, tabs and newlines dropped, a `\\` a plain character. */
const linkText = (raw: string): string => raw.replace(/[\t\r\n]/g, '').replace(/^[\0-\x20]+/, '').replace(/\\/g, '%5C');

/**
 * The text inside each `<name …>` tag of a page, in one pass: each tag's end is looked for once, and
 * a page where none closes ends the scan (a regular expression would search from every `<` again).
 */
function tagsOf(html: string, name: string): string[] {
  const out: string[] = [];
  const opens = new RegExp(`^${name}\\s`, 'i');
  for (let at = html.indexOf('<'); at >= 0; ) {
    const end = html.indexOf('>', at);
    if (end < 0) break;
    const inner = html.slice(at + 1, end);
    if (opens.test(inner)) out.push(inner.slice(name.length));
    at = html.indexOf('<', end);
  }
  return out;
}

const HREF = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/i;

/** The files a PEP 503 page links to that carry a sha256 (the only ones the harness can check). */
export function pageFiles(html: string, pageUrl: string): PageFile[] {
  let base: URL;
  let basePort: string | undefined;
  try {
    const b = tagsOf(html, 'base').map((t) => HREF.exec(t)).find((m) => m !== null);
    const raw = b ? linkText(decodeEntities(b[1] ?? b[2] ?? b[3] ?? '')) : pageUrl;
    base = new URL(raw, pageUrl);
    basePort = spelledPort(raw) ?? spelledPort(pageUrl);
  } catch {
    return [];
  }
  const page = new URL(pageUrl);
  const files: PageFile[] = [];
  for (const tag of tagsOf(html, 'a')) {
    const attr = HREF.exec(tag);
    if (!attr) continue;
    const text = linkText(decodeEntities(attr[1] ?? attr[2] ?? attr[3] ?? ''));
    const hash = text.indexOf('#');
    const target = hash < 0 ? text : text.slice(0, hash);
    const q = target.indexOf('?');
    // The page itself (an empty link) is not a file.
    if (target === '') continue;
    let href: URL;
    try {
      href = new URL(text, base);
    } catch {
      continue;
    }
    if (href.protocol !== 'https:' && href.protocol !== 'http:') continue;
    const sha256 = /(?:^#|&)sha256=([0-9a-fA-F]{64})(?:&|$)/.exec(href.hash)?.[1]?.toLowerCase();
    if (sha256 === undefined) continue;
    href.hash = '';
    // The index's credentials go with links to its own host, as pip sends them.
    if (href.host === page.host && href.username === '' && page.username !== '') {
      href.username = page.username;
      href.password = page.password;
    } else if (href.host !== page.host) {
      href.username = '';
      href.password = '';
    }
    const filename = unquote(href.pathname.slice(href.pathname.lastIndexOf('/') + 1));
    if (!/^[A-Za-z0-9][A-Za-z0-9._+!-]*$/.test(filename)) continue;
    // The harness asks for the file by the very URL pip asks for (quoted as pip quotes it).
    const port = spelledPort(text) ?? basePort;
    const key = pipRequestUrl(href, { ...(port !== undefined ? { port } : {}), query: q < 0 ? '' : target.slice(q + 1) });
    const fetchAt = new URL(key);
    fetchAt.username = href.username;
    fetchAt.password = href.password;
    files.push({ href: fetchAt, key, filename, sha256 });
  }
  return files;
}

/** A wheel's name, version and expanded tags from its file name, or undefined for another file. */
function wheelOf(filename: string): { name: string; version: string; tags: string[] } | undefined {
  const m = /^([^-]+)-([^-]+)(?:-\d[^-]*)?-([^-]+)-([^-]+)-([^-]+)\.whl$/.exec(filename);
  if (!m) return undefined;
  const tags: string[] = [];
  for (const py of m[3]!.split('.')) for (const abi of m[4]!.split('.')) for (const plat of m[5]!.split('.')) tags.push(`${py}-${abi}-${plat}`.toLowerCase());
  return { name: m[1]!, version: m[2]!, tags };
}

function sdistOf(filename: string): { name: string; version: string } | undefined {
  const m = /^(.+)-([^-]+)\.(?:tar\.gz|zip)$/.exec(filename);
  return m ? { name: m[1]!, version: m[2]! } : undefined;
}

const sameVersion = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** Of a project's page, the files that are what `dist` was installed from: its wheel, else its sdist. */
export function filesFor<F extends { filename: string }>(dist: InstalledDist, files: readonly F[]): F[] {
  const name = canonicalName(dist.name);
  const installed = new Set(dist.tags);
  const wheels = files.filter((f) => {
    const w = wheelOf(f.filename);
    return w !== undefined && canonicalName(w.name) === name && sameVersion(w.version, dist.version) && w.tags.some((t) => installed.has(t));
  });
  const exact = wheels.filter((f) => {
    const tags = wheelOf(f.filename)!.tags;
    return tags.length === installed.size && tags.every((t) => installed.has(t));
  });
  if (exact.length > 0) return exact.slice(0, 1);
  if (wheels.length > 0) return wheels.slice(0, 2);
  const sdist = files.find((f) => {
    const s = sdistOf(f.filename);
    return s !== undefined && canonicalName(s.name) === name && sameVersion(s.version, dist.version);
  });
  return sdist ? [sdist] : [];
}

/** Whether the attempt's own pip cache (either layout) has an entry for `url`: a hint, never content. */
function attemptCached(home: string, url: string): boolean {
  const cache = pipCacheOf(home);
  for (const base of ['http', 'http-v2']) {
    try {
      if (lstatSync(pipEntryPath(join(cache, base), url)).isFile()) return true;
    } catch {
      /* absent */
    }
  }
  return false;
}

interface StoreEntry {
  key: string;
  filename: string;
  sha256: string;
  size: number;
  type: string;
  /** The index's own caching headers for the file (lower-cased names; `date` the harness's time when it sent none). */
  headers: Record<string, string>;
}

/** The response headers that decide how long pip's cache may serve a file without asking the index again. */
const CACHING_HEADERS = ['cache-control', 'expires', 'etag', 'last-modified', 'date'] as const;

/**
 * Whether pip's own cache would have kept this response (CacheControl: a validator to revalidate with,
 * or a freshness lifetime) and so whether an entry for it can ever be used.
 */
export function pipWouldCache(headers: Record<string, string>): boolean {
  const cc = (headers['cache-control'] ?? '').toLowerCase();
  if (/(?:^|[,\s])no-store(?:[,\s=]|$)/.test(cc)) return false;
  if (headers.etag !== undefined) return true;
  const maxAge = /(?:^|[,\s])max-age\s*=\s*"?(\d+)/.exec(cc)?.[1];
  if (maxAge !== undefined) return Number(maxAge) > 0;
  return headers.expires !== undefined && Number.isFinite(Date.parse(headers.expires));
}

const entryFile = (store: string, key: string): string => join(store, 'pip', 'entries', `${createHash('sha224').update(key).digest('hex')}.json`);
const bodyFile = (store: string, sha256: string): string => join(store, 'pip', 'files', sha256);

/** One file, from the index into the store, unless the store has it. */
async function fetchFile(store: string, file: PageFile, ca: string | undefined, report: PipReport, budget: { bytes: number }, signal: AbortSignal | undefined): Promise<void> {
  const target = bodyFile(store, file.sha256);
  const entry = entryFile(store, file.key);
  // An entry for this URL with another hash is the index's old file there: it is replaced, never offered again.
  if (readStoreEntry(store, entry)?.sha256 === file.sha256) {
    report.known += 1;
    return;
  }
  // The file is downloaded even when the store has its bytes from another URL: the entry needs this URL's headers.
  let headers: Record<string, string>;
  {
    if (budget.bytes >= MAX_PIP_FETCH_BYTES) {
      report.overBudget += 1;
      return;
    }
    const tmp = join(store, 'pip', 'tmp');
    mkdirSync(tmp, { recursive: true, mode: 0o700 });
    const part = join(tmp, `${randomBytes(8).toString('hex')}.part`);
    try {
      const got = await download(file.href.toString(), part, { headers: { 'user-agent': 'quickloop-install-cache', 'accept-encoding': 'identity' }, ...(ca !== undefined ? { ca } : {}), maxBytes: MAX_PIP_FILE_BYTES, redirects: 5, ...(signal !== undefined ? { signal } : {}) });
      budget.bytes += got.bytes;
      // The hash is of the harness's own copy, as written: a different file under that name is refused.
      if (got.status !== 200 || got.sha256 !== file.sha256 || (got.headers['content-encoding'] ?? 'identity') !== 'identity') {
        report.failed += 1;
        return;
      }
      headers = {};
      for (const name of CACHING_HEADERS) if (got.headers[name] !== undefined) headers[name] = got.headers[name];
      headers.date ??= new Date().toUTCString();
      mkdirSync(join(store, 'pip', 'files'), { recursive: true, mode: 0o700 });
      renameSync(part, target);
    } catch {
      report.failed += 1;
      return;
    } finally {
      rmSync(part, { force: true });
    }
  }
  const size = statSync(target).size;
  const type = /\.whl$/.test(file.filename) ? 'application/octet-stream' : file.filename.endsWith('.zip') ? 'application/zip' : 'application/x-tar';
  mkdirSync(join(store, 'pip', 'entries'), { recursive: true, mode: 0o700 });
  const tmpEntry = `${entry}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(tmpEntry, `${JSON.stringify({ key: file.key, filename: file.filename, sha256: file.sha256, size, type, headers } satisfies StoreEntry)}\n`, { mode: 0o600 });
  renameSync(tmpEntry, entry);
  report.fetched += 1;
}

/**
 * Reads each distribution's page from the indexes (in order, the first that lists a match) and keeps
 * in the store the files it was installed from, plus any of the project's files the attempt's pip
 * cache had. Never throws: what cannot be had is counted, and pip will download it itself. `signal`
 * stops it: what is under way fails, and nothing more is asked.
 */
export async function fetchPipFiles(store: string, dists: readonly InstalledDist[], indexes: PipIndexes, home: string, opts: { signal?: AbortSignal } = {}): Promise<PipReport> {
  const { signal } = opts;
  const report: PipReport = { fetched: 0, known: 0, notOnIndex: 0, failed: 0, overBudget: 0 };
  const budget = { bytes: 0 };
  const queue = dists.slice(0, MAX_PIP_DISTS);
  const seen = new Set<string>();
  // What the store already has for a distribution needs no page: a file at a URL does not change.
  const stored = storeEntries(store).map((e) => ({ key: e.key, filename: e.filename, sha256: e.sha256 }));
  const one = async (dist: InstalledDist): Promise<void> => {
    const have = filesFor(dist, stored);
    if (have.length > 0) {
      report.known += have.length;
      return;
    }
    for (const index of indexes.urls) {
      if (signal?.aborted) return;
      let files: PageFile[];
      const page = `${index}${canonicalName(dist.name)}/`;
      try {
        const got = await getBuffer(page, { headers: { accept: 'text/html', 'user-agent': 'quickloop-install-cache' }, ...(indexes.ca !== undefined ? { ca: indexes.ca } : {}), maxBytes: MAX_PAGE_BYTES, redirects: 5, deadlineMs: PAGE_DEADLINE_MS, ...(signal !== undefined ? { signal } : {}) });
        if (got.status !== 200) continue;
        files = pageFiles(got.body.toString('utf8'), got.url);
      } catch {
        report.failed += 1;
        continue;
      }
      const installed = filesFor(dist, files);
      const cached = files.filter((f) => attemptCached(home, f.key)).slice(0, MAX_CACHED_PER_PROJECT);
      const wanted = [...installed, ...cached.filter((f) => !installed.includes(f))].filter((f) => !seen.has(f.key));
      if (installed.length === 0 && wanted.length === 0) continue;
      for (const f of wanted) {
        seen.add(f.key);
        if (signal?.aborted) return;
        await fetchFile(store, f, indexes.ca, report, budget, signal);
      }
      return;
    }
    if (signal?.aborted !== true) report.notOnIndex += 1;
  };
  const worker = async (): Promise<void> => {
    for (let d = queue.shift(); d !== undefined && signal?.aborted !== true; d = queue.shift()) await one(d);
  };
  if (indexes.urls.length > 0) await Promise.all(Array.from({ length: FETCHES_AT_ONCE }, worker));
  return report;
}

// --- msgpack, as much of it as a CacheControl entry needs (maps, strings, bytes, small ints, bools) ---

type Pack = string | number | boolean | Buffer | { [key: string]: Pack };

function head(small: number, marker8: number | undefined, marker16: number, marker32: number, n: number, smallMax: number): Buffer {
  if (n <= smallMax) return Buffer.from([small | n]);
  if (marker8 !== undefined && n <= 0xff) return Buffer.from([marker8, n]);
  if (n <= 0xffff) return Buffer.from([marker16, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = marker32;
  b.writeUInt32BE(n, 1);
  return b;
}

/** Appends the msgpack bytes of `value` to `out`. */
function pack(value: Pack, out: Buffer[]): void {
  if (typeof value === 'boolean') out.push(Buffer.from([value ? 0xc3 : 0xc2]));
  else if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new Error(`cannot pack ${value}`);
    if (value < 0x80) out.push(Buffer.from([value]));
    else if (value <= 0xffff) out.push(Buffer.from([0xcd, value >> 8, value & 0xff]));
    else {
      const b = Buffer.alloc(5);
      b[0] = 0xce;
      b.writeUInt32BE(value, 1);
      out.push(b);
    }
  } else if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    out.push(head(0xa0, 0xd9, 0xda, 0xdb, bytes.length, 31), bytes);
  } else if (Buffer.isBuffer(value)) {
    out.push(head(0, 0xc4, 0xc5, 0xc6, value.length, -1), value);
  } else {
    const keys = Object.keys(value);
    out.push(head(0x80, undefined, 0xde, 0xdf, keys.length, 15));
    for (const k of keys) {
      pack(k, out);
      pack(value[k]!, out);
    }
  }
}

/** The bin header for a body of `size` bytes (msgpack bin 8/16/32). */
const binHead = (size: number): Buffer => head(0, 0xc4, 0xc5, 0xc6, size, -1);

/**
 * A CacheControl v4 entry for a 200 response, split around its body: `[before, after]`, so that a
 * whole-response entry (`http/`) is `before + bin header + body + after` and a metadata-only entry
 * (`http-v2/`, body apart) is the same with an empty body.
 */
function entryParts(e: StoreEntry): { before: Buffer; after: Buffer } {
  // The index's own caching headers: pip serves the file from its cache exactly as long as it would had it downloaded the file itself.
  const headers = { 'content-type': e.type, 'content-length': String(e.size), ...e.headers };
  const before: Buffer[] = [Buffer.from('cc=4,')];
  // {"response": {"body": …, "headers": …, "status": 200, "version": 11, "reason": "OK", "decode_content": false}, "vary": {}}
  before.push(Buffer.from([0x82]));
  pack('response', before);
  before.push(Buffer.from([0x86]));
  pack('body', before);
  const after: Buffer[] = [];
  pack('headers', after);
  pack(headers, after);
  for (const [k, v] of [['status', 200], ['version', 11], ['reason', 'OK'], ['decode_content', false]] as const) {
    pack(k, after);
    pack(v, after);
  }
  pack('vary', after);
  pack({}, after);
  return { before: Buffer.concat(before), after: Buffer.concat(after) };
}

/** A store entry, when it is whole, sits under its key's name and matches its file. */
function readStoreEntry(store: string, path: string): StoreEntry | undefined {
  try {
    const e = JSON.parse(readFileSync(path, 'utf8')) as StoreEntry;
    if (typeof e.key !== 'string' || !/^https?:\/\//.test(e.key) || typeof e.filename !== 'string' || !HEX64.test(e.sha256) || !Number.isSafeInteger(e.size) || typeof e.type !== 'string') return undefined;
    if (typeof e.headers !== 'object' || e.headers === null || !Object.entries(e.headers).every(([k, v]) => (CACHING_HEADERS as readonly string[]).includes(k) && typeof v === 'string')) return undefined;
    if (entryFile(store, e.key) !== path) return undefined;
    if (statSync(bodyFile(store, e.sha256)).size !== e.size) return undefined;
    return e;
  } catch {
    /* a half-written or missing file: not offered */
    return undefined;
  }
}

function storeEntries(store: string): StoreEntry[] {
  const dir = join(store, 'pip', 'entries');
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: StoreEntry[] = [];
  for (const name of names) {
    if (!/^[0-9a-f]{56}\.json$/.test(name)) continue;
    const e = readStoreEntry(store, join(dir, name));
    // A file the index said not to cache stays in the store (it is not downloaded again) but is never offered: pip would not use it.
    if (e !== undefined && pipWouldCache(e.headers)) out.push(e);
  }
  return out;
}

/** pip's two cache layouts, and the file in the store that says which of them a sweep's pips were seen to use. */
const LAYOUTS = ['http', 'http-v2'] as const;
type Layout = (typeof LAYOUTS)[number];
const layoutsFile = (store: string): string => join(store, 'pip', 'layouts');

/**
 * Notes in the store which of pip's cache layouts a finished run's pip made (pip before 23.3 `http/`,
 * later ones `http-v2/`), so a seed writes only those. A hint, never content: a wrong one costs
 * cache hits (pip downloads the file), not correctness.
 */
export function notePipLayouts(store: string, home: string): void {
  const seen = LAYOUTS.filter((l) => realDirs(home, ['.cache', 'pip', l]));
  const known = storedLayouts(store);
  if (seen.every((l) => known.includes(l))) return;
  mkdirSync(join(store, 'pip'), { recursive: true, mode: 0o700 });
  const tmp = `${layoutsFile(store)}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(tmp, `${LAYOUTS.filter((l) => known.includes(l) || seen.includes(l)).join('\n')}\n`, { mode: 0o600 });
  renameSync(tmp, layoutsFile(store));
}

function storedLayouts(store: string): Layout[] {
  let text: string;
  try {
    text = readFileSync(layoutsFile(store), 'utf8');
  } catch {
    return [];
  }
  const lines = text.split('\n');
  return LAYOUTS.filter((l) => lines.includes(l));
}

/** Copies `from` to `to` between `before` and `after`, hashing the copied bytes: what was written is what is checked. */
async function copyHashed(from: string, to: string, before: Buffer, after: Buffer): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  const out = await open(to, 'w', 0o644);
  try {
    await out.write(before);
    const src = await open(from, 'r');
    try {
      const buf = Buffer.alloc(1024 * 1024);
      for (;;) {
        const { bytesRead } = await src.read(buf, 0, buf.length, null);
        if (bytesRead === 0) break;
        hash.update(buf.subarray(0, bytesRead));
        bytes += bytesRead;
        await out.write(buf.subarray(0, bytesRead));
      }
    } finally {
      await src.close();
    }
    await out.write(after);
  } finally {
    await out.close();
  }
  return { bytes, sha256: hash.digest('hex') };
}

/**
 * Gives a new sandbox home pip cache entries for every file in the store, in the layouts its pip may
 * read, before anything runs in it. Returns how many files it offers (0 for an empty or missing store).
 */
export async function seedPipCache(store: string, home: string): Promise<number> {
  const entries = storeEntries(store);
  if (entries.length === 0) return 0;
  // Only the layouts this sweep's pips were seen to read; both while none was seen yet.
  const noted = storedLayouts(store);
  const layouts = new Set<Layout>(noted.length > 0 ? noted : LAYOUTS);
  const top = resolve(home);
  const cache = pipCacheOf(top);
  // pip adds to and prunes its own cache: every folder and file here is the sandbox user's.
  const own = sandboxOwner();
  const made = new Set<string>();
  const dirFor = async (file: string): Promise<void> => {
    const parts: string[] = [];
    for (let d = dirname(file); d.startsWith(top + sep); d = dirname(d)) parts.unshift(d);
    for (const d of parts) {
      if (made.has(d)) continue;
      try {
        await mkdir(d, { mode: 0o755 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      await own(d);
      made.add(d);
    }
  };
  let offered = 0;
  for (const e of entries) {
    const { before, after } = entryParts(e);
    const body = bodyFile(store, e.sha256);
    const v1 = pipEntryPath(join(cache, 'http'), e.key);
    const v2 = pipEntryPath(join(cache, 'http-v2'), e.key);
    // The first copy is hashed on the way: a store file that is no longer its hash (a disk fault, a
    // hand edit) is not offered, since pip would fail the install on it, not download it again.
    // http: the whole response in one file; http-v2: the metadata with an empty body, the body beside it.
    const first = layouts.has('http') ? { path: v1, before: Buffer.concat([before, binHead(e.size)]), after } : { path: `${v2}.body`, before: Buffer.alloc(0), after: Buffer.alloc(0) };
    await dirFor(first.path);
    let copied: { bytes: number; sha256: string };
    try {
      copied = await copyHashed(body, first.path, first.before, first.after);
    } catch (error) {
      // Trimmed away since it was listed (another sweep's start, install-store.ts): not offered.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      rmSync(first.path, { force: true });
      continue;
    }
    if (copied.bytes !== e.size || copied.sha256 !== e.sha256) {
      rmSync(first.path, { force: true });
      continue;
    }
    await own(first.path);
    if (layouts.has('http-v2')) {
      await dirFor(v2);
      writeFileSync(v2, Buffer.concat([before, binHead(0), after]), { mode: 0o644 });
      await own(v2);
      if (first.path !== `${v2}.body`) {
        await copyFile(body, `${v2}.body`, constants.COPYFILE_FICLONE);
        await own(`${v2}.body`);
      }
    }
    offered += 1;
  }
  return offered;
}
