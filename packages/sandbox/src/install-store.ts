// Keeping a shared install cache within a size. Every attempt's home gets a copy of the whole store
// before setup, so a store that only grows makes every later attempt slower as well as filling the
// disk. The harness trims it before a sweep's first attempt, when nothing is seeding from it: the
// oldest entries first (a file's mtime is when the harness wrote it), until it holds at most
// TRIM_TO of its limit, so that a store at its limit is not trimmed again by every sweep.
//
// What goes together: a packument's index bucket with the blobs it points at (a bucket left without its
// content would be a cache hit npm cannot read), and a pip file with the store entries naming it. A
// bucket goes before its blobs, an entry before its file, so a seed that lists the store while another
// sweep trims it finds at worst an entry missing, never one that points at nothing it was given.
import { lstatSync, readdirSync, readFileSync, rmSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { bucketEntries } from './install-metadata.js';
import { parseSize } from './limits.js';

/** The default limit: a few hundred projects' dependencies. */
export const DEFAULT_INSTALL_CACHE_MAX_BYTES = 5 * 1024 ** 3;
/** A trimmed store holds at most this share of its limit. */
export const TRIM_TO = 0.8;

export interface TrimReport {
  /** The store's size before and after, in bytes (the harness's files only). */
  before: number;
  after: number;
  /** Files removed. */
  removed: number;
}

/** One thing that goes whole: its files (removed in this order), their bytes, and its age. */
interface Unit {
  files: string[];
  bytes: number;
  mtimeMs: number;
}

const HEX = /^[0-9a-f]+$/;

function stat(path: string): Stats | undefined {
  try {
    const st = lstatSync(path);
    return st.isFile() ? st : undefined;
  } catch {
    return undefined;
  }
}

/** The regular files two hex levels below `base` (`ab/cd/rest`), with their paths relative to it joined as one name. */
function leaves(base: string, depth: 2 | 0): { name: string; path: string; st: Stats }[] {
  const out: { name: string; path: string; st: Stats }[] = [];
  const list = (dir: string): string[] => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  };
  const walk = (dir: string, prefix: string, left: number): void => {
    for (const name of list(dir)) {
      if (!HEX.test(name)) continue;
      const path = join(dir, name);
      if (left > 0) walk(path, prefix + name, left - 1);
      else {
        const st = stat(path);
        if (st) out.push({ name: prefix + name, path, st });
      }
    }
  };
  walk(base, '', depth);
  return out;
}

/** The sha512 hex digests an index bucket's entries point at. */
function bucketTargets(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const entry of bucketEntries(text)) {
    const integrity = (entry as { integrity?: unknown } | null)?.integrity;
    if (typeof integrity === 'string' && integrity.startsWith('sha512-')) out.push(Buffer.from(integrity.slice(7), 'base64').toString('hex'));
  }
  return out;
}

/** The store's files, grouped into what must go together. */
function units(store: string): Unit[] {
  const out: Unit[] = [];
  const blobs = new Map(leaves(join(store, 'npm', 'content-v2', 'sha512'), 2).map((b) => [b.name, b]));
  // A blob two buckets point at goes with the newer one: it stays as long as either does.
  const buckets = leaves(join(store, 'npm', 'index-v5'), 2).sort((a, b) => b.st.mtimeMs - a.st.mtimeMs);
  for (const bucket of buckets) {
    const unit: Unit = { files: [bucket.path], bytes: bucket.st.size, mtimeMs: bucket.st.mtimeMs };
    for (const hex of bucketTargets(bucket.path)) {
      const blob = blobs.get(hex);
      if (blob === undefined) continue;
      blobs.delete(hex);
      unit.files.push(blob.path);
      unit.bytes += blob.st.size;
    }
    out.push(unit);
  }
  for (const blob of blobs.values()) out.push({ files: [blob.path], bytes: blob.st.size, mtimeMs: blob.st.mtimeMs });

  const pipFiles = new Map(leaves(join(store, 'pip', 'files'), 0).map((f) => [f.name, { files: [] as string[], bytes: f.st.size, mtimeMs: f.st.mtimeMs, path: f.path }]));
  const entriesDir = join(store, 'pip', 'entries');
  let entries: string[] = [];
  try {
    entries = readdirSync(entriesDir).filter((n) => /^[0-9a-f]{56}\.json$/.test(n));
  } catch {
    /* no pip half */
  }
  for (const name of entries) {
    const path = join(entriesDir, name);
    const st = stat(path);
    if (!st) continue;
    let sha256: unknown;
    try {
      sha256 = (JSON.parse(readFileSync(path, 'utf8')) as { sha256?: unknown }).sha256;
    } catch {
      /* half-written: goes on its own */
    }
    const file = typeof sha256 === 'string' ? pipFiles.get(sha256) : undefined;
    if (file) {
      file.files.push(path);
      file.bytes += st.size;
    } else out.push({ files: [path], bytes: st.size, mtimeMs: st.mtimeMs });
  }
  for (const f of pipFiles.values()) out.push({ files: [...f.files, f.path], bytes: f.bytes, mtimeMs: f.mtimeMs });
  return out;
}

/**
 * Trims the store at `store` to at most TRIM_TO × `maxBytes` when it holds more than `maxBytes`, the
 * oldest first. Never throws: a file that cannot be removed is left, and counted as kept.
 */
export function trimInstallStore(store: string, maxBytes: number): TrimReport {
  const all = units(store);
  const before = all.reduce((n, u) => n + u.bytes, 0);
  const report: TrimReport = { before, after: before, removed: 0 };
  if (before <= maxBytes) return report;
  const goal = Math.floor(maxBytes * TRIM_TO);
  for (const unit of all.sort((a, b) => a.mtimeMs - b.mtimeMs)) {
    if (report.after <= goal) break;
    let whole = true;
    for (const file of unit.files) {
      try {
        rmSync(file);
        report.removed += 1;
      } catch {
        whole = false;
      }
    }
    if (whole) report.after -= unit.bytes;
  }
  return report;
}

/** `--install-cache-max SIZE`: bytes, or a number with K, M, G or T (powers of 1024; `KiB`, `MB` read alike), at least 1M. */
export function parseCacheSize(value: string, flag = '--install-cache-max'): number {
  return parseSize(value, flag, 1024 ** 2);
}
