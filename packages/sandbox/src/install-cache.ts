// A sweep's shared install cache: npm's content blobs, kept by the harness outside every sandbox, so a
// repeat does not download again what an earlier attempt downloaded.
//
// Threat model. An attempt runs whatever the docs (or a model) say, with full control of its own home,
// so anything it leaves in its npm cache is hostile input. The store is written by the harness alone
// (never bound into a sandbox) and holds only files named by their own SHA-512, which the harness
// computes itself over its own copy:
// - a bad blob (content that does not hash to its name) is refused: it cannot stand in for a package;
// - a bad index entry (index-v5: key → integrity, metadata, a poisoned packument) is never taken: the
//   store's index is written by the harness alone, for packuments it fetched itself from the registry
//   (install-metadata.ts), and npm reads a tarball by the integrity the registry or the lockfile gave
//   it, so a blob is only ever used where its exact hash was asked for;
// - sha1 content (content-v2/sha1) is never taken: sha1 collisions can be made;
// - a symlink, a FIFO, a device or a folder link is never followed or copied: only regular files,
//   opened with O_NOFOLLOW and checked again on the open descriptor;
// - a huge file (or a flood of them) is bounded: blobs over MAX_BLOB_BYTES are refused unread, and one
//   harvest takes at most MAX_HARVEST_BYTES and MAX_HARVEST_FILES;
// - a sparse file (holes the attempt never wrote) is refused unread: 600 MiB of holes cost an
//   attempt 40 KiB, and taken they were 600 MiB of real bytes in the store and again in every home
//   seeded from it.
// Each attempt gets a private, writable copy of the store's blobs and index (copies, never hard links: a link
// would let the attempt write through to the store's inode), so nothing it does reaches the next.
// npm checks every blob it reads against its integrity as well.
import { spawn } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import { accessSync, closeSync, constants, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { makeDirs, UsageError } from '@quickloop/cli-kit';
import { outerIds, sandboxOwner } from './rootfs.js';

export const MAX_BLOB_BYTES = 256 * 1024 * 1024;
export const MAX_HARVEST_BYTES = 2 * 1024 * 1024 * 1024;
export const MAX_HARVEST_FILES = 100_000;

/** npm's cache inside a sandbox home (its default: `$HOME/.npm/_cacache`). */
export const npmCacheOf = (home: string): string => join(home, '.npm', '_cacache');

const CONTENT = join('content-v2', 'sha512');
const HEX2 = /^[0-9a-f]{2}$/;
const REST = /^[0-9a-f]{124}$/;
const INDEX = 'index-v5';
/** An index bucket's name: the rest of the key's SHA-256. */
const BUCKET = /^[0-9a-f]{60}$/;

export interface HarvestReport {
  /** Blobs new to the store. */
  added: number;
  /** Blobs the store already had. */
  known: number;
  /** Refused, by reason. */
  refused: Partial<Record<'hash_mismatch' | 'not_regular' | 'too_large' | 'sparse' | 'bad_name' | 'over_budget' | 'unreadable', number>>;
}

/** The blob paths (relative to content-v2/sha512) under `base`, walking real folders only. */
function* blobs(base: string, refuse: (why: keyof HarvestReport['refused']) => void, rest = REST): Generator<{ rel: string; abs: string }> {
  const list = (dir: string): import('node:fs').Dirent[] => {
    try {
      return readdirSync(dir, { withFileTypes: true });
    } catch {
      return [];
    }
  };
  for (const a of list(base)) {
    if (!a.isDirectory() || !HEX2.test(a.name)) {
      refuse(a.isDirectory() || a.isFile() ? 'bad_name' : 'not_regular');
      continue;
    }
    for (const b of list(join(base, a.name))) {
      if (!b.isDirectory() || !HEX2.test(b.name)) {
        refuse(b.isDirectory() || b.isFile() ? 'bad_name' : 'not_regular');
        continue;
      }
      for (const c of list(join(base, a.name, b.name))) {
        if (!c.isFile()) refuse(c.isDirectory() ? 'bad_name' : 'not_regular');
        else if (!rest.test(c.name)) refuse('bad_name');
        else yield { rel: join(a.name, b.name, c.name), abs: join(base, a.name, b.name, c.name) };
      }
    }
  }
}

/**
 * Takes into `store` the npm content blobs an attempt left in `home`, each copied by the harness and
 * kept only if its SHA-512 is its name. Never throws for what the attempt left; returns what it did.
 */
/** Whether each of `parts`, one below the other under `base`, is a real folder (lstat: never a link). */
export function realDirs(base: string, parts: readonly string[]): boolean {
  let at = base;
  for (const part of parts) {
    at = join(at, part);
    try {
      if (!lstatSync(at).isDirectory()) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** A regular file's bytes, read through O_NOFOLLOW; 'large' past `max`; undefined for anything else (a link, a FIFO, gone). */
export function readRegular(path: string, max: number): Buffer | 'large' | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    if (st.size > max) return 'large';
    const buf = Buffer.alloc(st.size);
    let at = 0;
    while (at < buf.length) {
      const n = readSync(fd, buf, at, buf.length - at, null);
      if (n === 0) break;
      at += n;
    }
    return buf.subarray(0, at);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** A regular file's bytes, read through O_NOFOLLOW, or undefined (a link, a FIFO, too large, gone). */
export function readBounded(path: string, max: number): Buffer | undefined {
  const got = readRegular(path, max);
  return got === 'large' ? undefined : got;
}

export function harvestInstallCache(store: string, home: string): HarvestReport {
  const report: HarvestReport = { added: 0, known: 0, refused: {} };
  for (const _ of harvesting(store, home, report));
  return report;
}

/**
 * harvestInstallCache, giving the event loop a turn every few blobs: the harness's own packument
 * fetches (install-metadata.ts), started first, get on while the blobs are copied and hashed.
 */
export async function harvestInstallCacheAsync(store: string, home: string): Promise<HarvestReport> {
  const report: HarvestReport = { added: 0, known: 0, refused: {} };
  let n = 0;
  for (const _ of harvesting(store, home, report)) if (++n % 4 === 0) await setImmediate();
  return report;
}

/** Above this size a blob must be mostly written: below it a filesystem may keep a file inline or packed, with no blocks of its own. */
const SPARSE_FROM_BYTES = 1024 * 1024;

/**
 * Whether a file holds less than half its size on disk: holes, which npm never writes (a tarball is
 * gzip, and so does not compress either where the filesystem compresses). A packument a compressing
 * filesystem keeps small is refused too, which costs nothing: the harness fetches packuments itself.
 */
function isSparse(st: import('node:fs').Stats): boolean {
  return st.size > SPARSE_FROM_BYTES && st.blocks * 512 < st.size / 2;
}

/** The harvest itself, one blob per step. */
function* harvesting(store: string, home: string, report: HarvestReport): Generator<void, void> {
  const refuse = (why: keyof HarvestReport['refused']): void => {
    report.refused[why] = (report.refused[why] ?? 0) + 1;
  };
  const from = join(npmCacheOf(home), CONTENT);
  // A home whose .npm (or any level below it) is a link to somewhere else gives nothing.
  if (!realDirs(home, ['.npm', '_cacache', 'content-v2', 'sha512'])) return;
  const into = join(store, 'npm', CONTENT);
  const tmp = join(store, 'npm', 'tmp');
  mkdirSync(into, { recursive: true, mode: 0o700 });
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  let bytes = 0;
  let files = 0;
  const buf = Buffer.alloc(1024 * 1024);
  for (const { rel, abs } of blobs(from, refuse)) {
    yield;
    const target = join(into, rel);
    if (existsSync(target)) {
      report.known += 1;
      continue;
    }
    if (files >= MAX_HARVEST_FILES) {
      refuse('over_budget');
      continue;
    }
    let fd: number;
    try {
      fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch {
      refuse('unreadable');
      continue;
    }
    const part = join(tmp, `${randomBytes(8).toString('hex')}.part`);
    let out: number | undefined;
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) {
        refuse('not_regular');
        continue;
      }
      if (st.size > MAX_BLOB_BYTES) {
        refuse('too_large');
        continue;
      }
      if (isSparse(st)) {
        refuse('sparse');
        continue;
      }
      if (bytes + st.size > MAX_HARVEST_BYTES) {
        refuse('over_budget');
        continue;
      }
      // Hashed as copied: what is checked is the store's own copy, not a file the attempt could still change.
      out = openSync(part, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
      const hash = createHash('sha512');
      let total = 0;
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, null);
        if (n === 0) break;
        total += n;
        if (total > MAX_BLOB_BYTES) break;
        hash.update(buf.subarray(0, n));
        writeSync(out, buf, 0, n);
      }
      closeSync(out);
      out = undefined;
      if (total > MAX_BLOB_BYTES) {
        refuse('too_large');
        rmSync(part, { force: true });
        continue;
      }
      if (hash.digest('hex') !== rel.split('/').join('')) {
        refuse('hash_mismatch');
        rmSync(part, { force: true });
        continue;
      }
      mkdirSync(join(target, '..'), { recursive: true, mode: 0o700 });
      renameSync(part, target);
      bytes += total;
      files += 1;
      report.added += 1;
    } catch {
      refuse('unreadable');
      rmSync(part, { force: true });
    } finally {
      if (out !== undefined) closeSync(out);
      closeSync(fd);
    }
  }
}

/** At most this many file operations of one seed at once (libuv's thread pool runs four by default). */
const SEED_AT_ONCE = 16;

/**
 * Runs `work` over `items`, at most `limit` at a time. The first failure stops every lane from taking
 * more, and is thrown once all of them have stopped (nothing of this seed is still writing then).
 */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      try {
        await work(items[next++] as T);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure !== undefined) throw failure.error;
}

/**
 * Gives a new sandbox home its own copy of the store's blobs and index, before anything runs in it.
 * Returns how many blobs were copied (0 for an empty or missing store).
 *
 * A seed is a few hundred folders and files, each a metadata write that waits on the filesystem's
 * journal. cp(1) makes them in one process, about a third of the time the same calls take from
 * here one by one; where it cannot (no GNU cp, a file trimmed away meanwhile), they are made from
 * here, a level at a time and several at once.
 */
export async function seedInstallCache(store: string, home: string): Promise<number> {
  if (!existsSync(join(store, 'npm', CONTENT))) return 0;
  const top = resolve(home);
  const cache = npmCacheOf(top);
  // The index is the harness's own (see install-metadata.ts): entries it wrote for what it fetched itself.
  const sources: [string, string, RegExp][] = [
    [join(store, 'npm', CONTENT), CONTENT, REST],
    [join(store, 'npm', INDEX), INDEX, BUCKET],
  ];
  const files: { rel: string; from: string; to: string }[] = [];
  let blobCount = 0;
  for (const [base, under, rest] of sources) {
    for (const { rel, abs } of blobs(base, () => undefined, rest)) {
      files.push({ rel: join(under, rel), from: abs, to: join(cache, under, rel) });
      if (under === CONTENT) blobCount += 1;
    }
  }
  if (blobCount === 0) return 0;
  // A root harness runs the sandbox as another uid: npm must be able to add to its own cache.
  const own = sandboxOwner();
  for (let d = top, parts = cache.slice(top.length + 1).split(sep); parts.length > 0; ) {
    d = join(d, parts.shift() as string);
    try {
      await mkdir(d, { mode: 0o755 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    await own(d);
  }
  if (!(await copyWithCp(join(store, 'npm'), files, cache))) await copyOneByOne(top, files, own);
  return blobCount;
}

/**
 * Copies `files` (named relative to `from`) into `to` with GNU cp, folders and all, and gives them to
 * the sandbox's user. False when it could not, for whatever reason: then nothing it did is relied on.
 */
async function copyWithCp(from: string, files: readonly { rel: string }[], to: string): Promise<boolean> {
  const ids = process.getuid?.() === 0 ? outerIds() : undefined;
  const run = (file: string, args: string[], input?: string): Promise<boolean> =>
    new Promise((done) => {
      const child = spawn(file, args, { cwd: from, stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'ignore'] });
      child.once('error', () => done(false));
      child.once('close', (code) => done(code === 0));
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(input);
    });
  // A reflink where the filesystem has them, else a plain copy: never a hard link to the store.
  // xargs keeps each cp's command line under the kernel's limit, however big the store.
  const names = files.map((f) => f.rel).join('\0');
  if (!(await run('xargs', ['-0', 'cp', '--reflink=auto', '--parents', '--no-dereference', '-t', to, '--'], names))) return false;
  return ids === undefined || run('chown', ['-R', '--no-dereference', `${ids.uid}:${ids.gid}`, '--', to]);
}

/** The same copy, a call at a time from here. */
async function copyOneByOne(top: string, files: readonly { from: string; to: string }[], own: (path: string) => Promise<void>): Promise<void> {
  const dirs = new Set<string>();
  // Every folder from the home down: .npm, _cacache, content-v2, …, the two hex levels.
  for (const { to } of files) for (let d = dirname(to); d.startsWith(top + sep); d = dirname(d)) dirs.add(d);
  const byDepth = new Map<number, string[]>();
  for (const d of dirs) {
    const depth = d.split(sep).length;
    const level = byDepth.get(depth);
    if (level) level.push(d);
    else byDepth.set(depth, [d]);
  }
  for (const depth of [...byDepth.keys()].sort((a, b) => a - b)) {
    await eachLimited(byDepth.get(depth) ?? [], SEED_AT_ONCE, async (d) => {
      try {
        await mkdir(d, { mode: 0o755 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      await own(d);
    });
  }
  await eachLimited(files, SEED_AT_ONCE, async ({ from, to }) => {
    try {
      await copyFile(from, to, constants.COPYFILE_FICLONE);
    } catch (error) {
      // Trimmed away since it was listed (another sweep's start, install-store.ts): one entry fewer.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(from)) return;
      throw error;
    }
    await own(to);
  });
}

/** A store's temporary files older than this belong to a harvest that was killed: every download ends well before. */
export const STALE_PART_MS = 60 * 60_000;

/**
 * Removes from the store's two `tmp/` folders the files a killed harvest left (a copy or download in
 * progress, named `*.part` or `*.index`), once they are older than STALE_PART_MS: a running harvest's
 * own are younger. Returns how many it removed; never throws.
 */
export function removeStaleParts(store: string, now: number = Date.now()): number {
  let removed = 0;
  for (const dir of [join(store, 'npm', 'tmp'), join(store, 'pip', 'tmp')]) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!/\.(part|index)$/.test(name)) continue;
      const path = join(dir, name);
      try {
        const st = lstatSync(path);
        if (!st.isFile() || now - st.mtimeMs < STALE_PART_MS) continue;
        rmSync(path, { force: true });
        removed += 1;
      } catch {
        /* gone meanwhile */
      }
    }
  }
  return removed;
}

/** `--install-cache DIR`: made when missing (private to this user); a file or an unwritable folder is a usage error. */
export function installCacheDir(value: string, cwd: string, flag = '--install-cache'): string {
  if (value.trim() === '') throw new UsageError(`${flag} needs a folder`);
  const dir = resolve(cwd, value);
  try {
    makeDirs(dir, 0o700);
    if (!statSync(dir).isDirectory()) throw new Error('ENOTDIR');
    accessSync(dir, constants.W_OK);
  } catch (error) {
    throw new UsageError(`${flag} ${value}: not a folder that can be written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return dir;
}
