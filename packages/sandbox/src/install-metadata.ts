// The metadata half of the install cache: npm's packuments, which a repeat without a lockfile spends
// most of its install fetching. An attempt's own cache entries are never taken: an index entry is only
// a key and a pointer to content, and an attempt that wrote one could point a packument at a tarball it
// planted. The harness instead reads, from the attempt's index, only which packument URLs npm asked
// for (a URL of the registry npm is configured with here, in the shape of a package name, with one of
// the two accept headers npm sends), fetches each itself from that registry, outside every sandbox,
// and writes the body (a blob named by the hash the harness computed) and an index entry of its own
// into the store. So what a later attempt reads is what the registry served to the harness.
//
// Freshness: npm (make-fetch-happen) answers from its cache without asking the registry while an
// entry's `metadata.time` is within the `max-age` of its stored `cache-control`. The harness writes
// its own `max-age=METADATA_TTL_S`, so a sweep sees one snapshot of the registry for that long, and
// fetches again (conditionally, when the registry gave an etag) an entry older than
// METADATA_REFRESH_MS whenever an attempt asks for it again. A registry's own max-age is often 0 or
// absent behind a proxy, which would make every entry stale and every repeat fetch again.
import { createHash, randomBytes } from 'node:crypto';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { getBuffer } from './http-get.js';
import { npmCacheOf, readBounded, realDirs } from './install-cache.js';

export const METADATA_TTL_S = 900;
export const METADATA_REFRESH_MS = 300_000;
/** A packument larger than this is not kept (the largest corgis are a few MiB). */
export const MAX_PACKUMENT_BYTES = 64 * 1024 * 1024;
/** What one harvest fetches in all, at most: an attempt that names many large packuments cannot fill the disk. */
export const MAX_METADATA_FETCH_BYTES = 512 * 1024 * 1024;
/** Packument URLs taken from one attempt's index, at most. */
export const MAX_METADATA_URLS = 2000;
/** An index bucket of the attempt's larger than this is not read. */
export const MAX_BUCKET_BYTES = 1024 * 1024;
const MAX_BUCKETS = 100_000;
/** What one look at an attempt's index reads in all, at most. */
export const MAX_INDEX_BYTES = 64 * 1024 * 1024;
/** As many at once as npm itself opens to one registry (its `maxsockets` default, 15), near enough. */
const FETCHES_AT_ONCE = 16;

/** The two accept headers npm sends for a packument (the abbreviated "corgi" one, and the full one). */
export const PACKUMENT_ACCEPTS = ['application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*', 'application/json'] as const;
const KEY_PREFIX = 'make-fetch-happen:request-cache:';
// Headers make-fetch-happen keeps; cache-control is the harness's own, content-encoding is gone (the body is stored decoded).
const KEEP_RESPONSE_HEADERS = ['content-language', 'content-type', 'date', 'etag', 'expires', 'last-modified', 'link', 'vary'];
const NAME = /^(?:@[a-z0-9][a-z0-9._~-]*%2f)?[a-z0-9_~][a-z0-9._~-]*$/i;

export interface NpmRegistry {
  /** The registry's URL, ending in `/`. */
  url: string;
  /** npm's `cafile`, read, when it has one. */
  ca?: string;
}

export interface MetadataWant {
  url: string;
  accept: (typeof PACKUMENT_ACCEPTS)[number];
}

export interface MetadataReport {
  fetched: number;
  /** Entries the registry said were unchanged (304), refreshed. */
  revalidated: number;
  /** Entries fresh enough to leave alone. */
  fresh: number;
  failed: number;
  /** Not fetched: the harvest had already fetched MAX_METADATA_FETCH_BYTES. */
  overBudget: number;
}

/** npm's `registry` and `cafile` here, asked at run time (one `npm config get`); undefined when npm cannot say. */
export function npmConfig(cwd: string, env: NodeJS.ProcessEnv = process.env): { registry?: string; cafile?: string } | undefined {
  let out: string;
  try {
    out = execFileSync('npm', NPM_CONFIG_ARGS, { cwd, env, encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
  return npmConfigFrom(out);
}

const NPM_CONFIG_ARGS = ['config', 'get', 'registry', 'cafile'];

/** npmConfig without waiting for it: npm is a Node start (a third of a second), which other work can overlap. */
export function askNpmConfig(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<{ registry?: string; cafile?: string } | undefined> {
  return new Promise((resolve) => {
    execFile('npm', NPM_CONFIG_ARGS, { cwd, env, encoding: 'utf8', timeout: 15_000 }, (error, out) => resolve(error ? undefined : npmConfigFrom(out)));
  });
}

function npmConfigFrom(out: string): { registry?: string; cafile?: string } {
  const value = (key: string): string | undefined => {
    const line = out.split('\n').find((l) => l.startsWith(`${key}=`));
    const v = line?.slice(key.length + 1).trim();
    return v === undefined || v === '' || v === 'null' || v === 'undefined' ? undefined : v;
  };
  const registry = value('registry');
  const cafile = value('cafile');
  return { ...(registry !== undefined ? { registry } : {}), ...(cafile !== undefined ? { cafile } : {}) };
}

/** The registry npm is configured with here, asked at run time; undefined when npm cannot say. */
export function npmRegistry(cwd: string, env: NodeJS.ProcessEnv = process.env): NpmRegistry | undefined {
  const config = npmConfig(cwd, env);
  return config?.registry === undefined ? undefined : registryOf(config.registry, config.cafile);
}

/** A registry from npm's `registry` and `cafile` values: undefined for a URL that is not http(s). */
export function registryOf(raw: string, cafile?: string): NpmRegistry | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  const registry: NpmRegistry = { url: url.toString().replace(/\/*$/, '/') };
  if (cafile !== undefined) {
    try {
      registry.ca = readFileSync(cafile, 'utf8');
    } catch {
      /* npm itself would fail on it too; the system's roots are still used */
    }
  }
  return registry;
}

/** Whether a finished run's home has an npm index at all (so whether npm need be asked for its registry). */
export function hasNpmIndex(home: string): boolean {
  return realDirs(home, ['.npm', '_cacache', 'index-v5']);
}

/**
 * The packument URLs (with npm's accept header) an attempt's npm cache says it fetched: the only thing
 * read from the attempt's index, and only to choose what the harness fetches itself. Never throws.
 */
export function wantedMetadata(home: string, registry: NpmRegistry): MetadataWant[] {
  const index = join(npmCacheOf(home), 'index-v5');
  const wants = new Map<string, MetadataWant>();
  let buckets = 0;
  let bytes = 0;
  const walk = (dir: string, depth: number): void => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (wants.size >= MAX_METADATA_URLS || buckets >= MAX_BUCKETS || bytes >= MAX_INDEX_BYTES) return;
      const path = join(dir, e.name);
      if (depth < 2) {
        if (e.isDirectory() && /^[0-9a-f]{2}$/.test(e.name)) walk(path, depth + 1);
        continue;
      }
      if (!e.isFile() || !/^[0-9a-f]{60}$/.test(e.name)) continue;
      buckets += 1;
      const data = readBounded(path, Math.min(MAX_BUCKET_BYTES, MAX_INDEX_BYTES - bytes));
      if (data === undefined) continue;
      bytes += data.length;
      for (const line of data.toString('utf8').split('\n')) {
        const tab = line.indexOf('\t');
        if (tab < 0) continue;
        let entry: unknown;
        try {
          entry = JSON.parse(line.slice(tab + 1));
        } catch {
          continue;
        }
        const want = packumentWant(entry, registry);
        if (want && wants.size < MAX_METADATA_URLS) wants.set(`${want.accept}\n${want.url}`, want);
      }
    }
  };
  // Every level is a real folder: lstat-walked by Dirent types, so a link anywhere gives nothing.
  if (!hasNpmIndex(home)) return [];
  walk(index, 0);
  return [...wants.values()];
}

/** An index entry of the attempt's, read as a request for a packument URL of `registry`, or nothing. */
function packumentWant(entry: unknown, registry: NpmRegistry): MetadataWant | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const { key, metadata } = entry as { key?: unknown; metadata?: unknown };
  if (typeof key !== 'string' || !key.startsWith(KEY_PREFIX)) return undefined;
  const url = key.slice(KEY_PREFIX.length);
  if (!url.startsWith(registry.url)) return undefined;
  const name = url.slice(registry.url.length);
  if (name.length > 214 || !NAME.test(name)) return undefined;
  const accept = (metadata as { reqHeaders?: { accept?: unknown } } | undefined)?.reqHeaders?.accept;
  const known = PACKUMENT_ACCEPTS.find((a) => a === accept);
  if (known === undefined) return undefined;
  const compress = (metadata as { options?: { compress?: unknown } }).options?.compress;
  if (compress !== true) return undefined;
  return { url, accept: known };
}

interface StoreEntry {
  key: string;
  integrity: string;
  time: number;
  size: number;
  metadata: { time: number; url: string; reqHeaders: { accept: string }; resHeaders: Record<string, string>; options: { compress: true } };
}

const bucketOf = (store: string, key: string): string => {
  const h = createHash('sha256').update(key).digest('hex');
  return join(store, 'npm', 'index-v5', h.slice(0, 2), h.slice(2, 4), h.slice(4));
};

/** The entries of an index bucket's text (`\nSHA1\tJSON` each); a line that does not parse is left out (dropped at the next write). */
export function bucketEntries(data: string): unknown[] {
  const out: unknown[] = [];
  for (const line of data.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    try {
      out.push(JSON.parse(line.slice(tab + 1)));
    } catch {
      /* half-written, or not ours */
    }
  }
  return out;
}

/** The store's own entries for `key` (written by the harness alone). */
function storeEntries(store: string, key: string): StoreEntry[] {
  try {
    return bucketEntries(readFileSync(bucketOf(store, key), 'utf8')) as StoreEntry[];
  } catch {
    return [];
  }
}

/** Replaces the store's entry for (key, accept), atomically: a seed reading the bucket sees old or new, never half. */
function writeStoreEntry(store: string, entry: StoreEntry): void {
  const others = storeEntries(store, entry.key).filter((e) => e.metadata?.reqHeaders?.accept !== entry.metadata.reqHeaders.accept);
  const lines = [...others, entry].map((e) => {
    const json = JSON.stringify(e);
    return `\n${createHash('sha1').update(json).digest('hex')}\t${json}`;
  });
  const bucket = bucketOf(store, entry.key);
  mkdirSync(dirname(bucket), { recursive: true, mode: 0o700 });
  const tmp = join(store, 'npm', 'tmp', `${randomBytes(8).toString('hex')}.index`);
  mkdirSync(dirname(tmp), { recursive: true, mode: 0o700 });
  writeFileSync(tmp, lines.join(''), { mode: 0o600 });
  renameSync(tmp, bucket);
}

/** Writes `body` into the store's content under its own SHA-512; returns the integrity string. */
function writeStoreBlob(store: string, body: Buffer): string {
  const digest = createHash('sha512').update(body);
  const hex = digest.copy().digest('hex');
  const target = join(store, 'npm', 'content-v2', 'sha512', hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
  const tmp = join(store, 'npm', 'tmp', `${randomBytes(8).toString('hex')}.part`);
  mkdirSync(dirname(tmp), { recursive: true, mode: 0o700 });
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  writeFileSync(tmp, body, { mode: 0o600 });
  renameSync(tmp, target);
  return `sha512-${digest.digest('base64')}`;
}

/** One packument, from the registry into the store, unless the store's entry is still fresh. */
async function fetchOne(store: string, want: MetadataWant, registry: NpmRegistry, now: () => number, report: MetadataReport, budget: { bytes: number }): Promise<void> {
  const key = `${KEY_PREFIX}${want.url}`;
  const old = storeEntries(store, key).find((e) => e.metadata?.reqHeaders?.accept === want.accept);
  if (old && now() - old.metadata.time < METADATA_REFRESH_MS) {
    report.fresh += 1;
    return;
  }
  if (budget.bytes >= MAX_METADATA_FETCH_BYTES) {
    report.overBudget += 1;
    return;
  }
  // No accept-encoding: the body comes plain, as npm stores it (decoded).
  const headers: Record<string, string> = { accept: want.accept, 'user-agent': 'quickloop-install-cache' };
  if (old?.metadata.resHeaders.etag !== undefined) headers['if-none-match'] = old.metadata.resHeaders.etag;
  const got = await getBuffer(want.url, { headers, ...(registry.ca !== undefined ? { ca: registry.ca } : {}), maxBytes: MAX_PACKUMENT_BYTES });
  budget.bytes += got.body.length;
  const time = now();
  const resHeaders = (from: Record<string, string>): Record<string, string> => {
    const h: Record<string, string> = {};
    for (const name of KEEP_RESPONSE_HEADERS) if (from[name] !== undefined) h[name] = from[name];
    h['cache-control'] = `max-age=${METADATA_TTL_S}`;
    return h;
  };
  if (got.status === 304 && old) {
    // A 304 carries no body headers: the old ones stand, with the new date.
    const fresh = { ...old.metadata.resHeaders, ...(got.headers.date !== undefined ? { date: got.headers.date } : {}), 'cache-control': `max-age=${METADATA_TTL_S}` };
    writeStoreEntry(store, { ...old, time, metadata: { ...old.metadata, time, resHeaders: fresh } });
    report.revalidated += 1;
    return;
  }
  if (got.status !== 200 || (got.headers['content-encoding'] ?? 'identity') !== 'identity') {
    report.failed += 1;
    return;
  }
  // A registry's error page under a 200 must not become a package's metadata.
  const parsed = JSON.parse(got.body.toString('utf8')) as { name?: unknown };
  if (typeof parsed !== 'object' || parsed === null || parsed.name !== decodeURIComponent(want.url.slice(registry.url.length))) {
    report.failed += 1;
    return;
  }
  const integrity = writeStoreBlob(store, got.body);
  writeStoreEntry(store, {
    key,
    integrity,
    time,
    size: got.body.length,
    metadata: { time, url: want.url, reqHeaders: { accept: want.accept }, resHeaders: resHeaders(got.headers), options: { compress: true } },
  });
  report.fetched += 1;
}

/**
 * Fetches, from the registry, the packuments `wants` names into the store (a few at a time). Never
 * throws: a packument that cannot be had is counted as failed, and npm will fetch it itself.
 */
export async function fetchInstallMetadata(store: string, wants: MetadataWant[], registry: NpmRegistry, now: () => number = Date.now): Promise<MetadataReport> {
  const report: MetadataReport = { fetched: 0, revalidated: 0, fresh: 0, failed: 0, overBudget: 0 };
  const budget = { bytes: 0 };
  const queue = wants.slice(0, MAX_METADATA_URLS);
  const worker = async (): Promise<void> => {
    for (let w = queue.shift(); w !== undefined; w = queue.shift()) {
      try {
        await fetchOne(store, w, registry, now, report, budget);
      } catch {
        report.failed += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: FETCHES_AT_ONCE }, worker));
  return report;
}
