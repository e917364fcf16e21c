// Trimming the shared install store: the oldest first, what belongs together removed together.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCacheSize, trimInstallStore } from './install-store.js';

let store: string;
beforeEach(() => {
  store = mkdtempSync(join(tmpdir(), 'qs-store-trim-'));
});
afterEach(() => rmSync(store, { recursive: true, force: true }));

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);

function write(path: string, bytes: Buffer | string, day: number): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
  utimesSync(path, new Date(T0 + day * DAY), new Date(T0 + day * DAY));
  return path;
}

/** A content blob named by its own SHA-512, written on `day`. */
function blob(size: number, seed: string, day: number): { path: string; integrity: string } {
  const body = Buffer.alloc(size, seed);
  const hex = createHash('sha512').update(body).digest('hex');
  const path = write(join(store, 'npm', 'content-v2', 'sha512', hex.slice(0, 2), hex.slice(2, 4), hex.slice(4)), body, day);
  return { path, integrity: `sha512-${createHash('sha512').update(body).digest('base64')}` };
}

/** An index bucket pointing at `integrities`, written on `day`. */
function bucket(key: string, integrities: string[], day: number): string {
  const h = createHash('sha256').update(key).digest('hex');
  const lines = integrities.map((integrity) => {
    const json = JSON.stringify({ key, integrity, time: T0, size: 1, metadata: {} });
    return `\n${createHash('sha1').update(json).digest('hex')}\t${json}`;
  });
  return write(join(store, 'npm', 'index-v5', h.slice(0, 2), h.slice(2, 4), h.slice(4)), lines.join(''), day);
}

function pipFile(size: number, seed: string, day: number, urls: string[]): { file: string; entries: string[] } {
  const body = Buffer.alloc(size, seed);
  const sha256 = createHash('sha256').update(body).digest('hex');
  const file = write(join(store, 'pip', 'files', sha256), body, day);
  const entries = urls.map((url) => write(join(store, 'pip', 'entries', `${createHash('sha224').update(url).digest('hex')}.json`), JSON.stringify({ key: url, filename: 'x.whl', sha256, size, type: 'application/octet-stream', headers: {} }), day));
  return { file, entries };
}

const KB = 1024;

describe('trimInstallStore', () => {
  it('leaves a store within its limit as it is', () => {
    const a = blob(10 * KB, 'a', 1);
    expect(trimInstallStore(store, 100 * KB)).toEqual({ before: 10 * KB, after: 10 * KB, removed: 0 });
    expect(existsSync(a.path)).toBe(true);
  });

  it('removes the oldest first until the store holds at most 80% of its limit; a packument goes with its bucket, a pip file with its entries', () => {
    const oldTarball = blob(30 * KB, 'o', 1);
    const packument = blob(20 * KB, 'p', 50);
    const oldBucket = bucket('make-fetch-happen:request-cache:https://r.test/left-pad', [packument.integrity], 2);
    const oldWheel = pipFile(30 * KB, 'w', 3, ['https://files.test/a.whl', 'https://mirror.test/a.whl']);
    const newTarball = blob(50 * KB, 'n', 10);
    const newWheel = pipFile(10 * KB, 'v', 11, ['https://files.test/b.whl']);
    // 140 KiB and a few bytes of buckets and entries, against a limit of 100 KiB: trimmed to 80 KiB at most.
    const r = trimInstallStore(store, 100 * KB);
    expect(r.before).toBeGreaterThan(140 * KB);
    expect(r.after).toBeLessThanOrEqual(80 * KB);
    // The tarball of day 1 and the bucket of day 2 with its packument (written on day 50, but the bucket's): 50 KiB gone.
    for (const p of [oldTarball.path, oldBucket, packument.path]) expect(existsSync(p), p).toBe(false);
    // The wheel of day 3 and both its entries too: still over 80 KiB without it.
    for (const p of [oldWheel.file, ...oldWheel.entries]) expect(existsSync(p), p).toBe(false);
    for (const p of [newTarball.path, newWheel.file, ...newWheel.entries]) expect(existsSync(p), p).toBe(true);
    expect(r.removed).toBe(6);
  });

  it('keeps a blob two buckets point at for as long as the newer one stays', () => {
    const shared = blob(40 * KB, 's', 1);
    const older = bucket('make-fetch-happen:request-cache:https://r.test/a', [shared.integrity], 1);
    const newer = bucket('make-fetch-happen:request-cache:https://r.test/b', [shared.integrity], 9);
    const filler = blob(70 * KB, 'f', 2);
    trimInstallStore(store, 100 * KB);
    // The older bucket goes first, and the filler after it; the blob stays with the newer bucket.
    expect(existsSync(older)).toBe(false);
    expect(existsSync(newer)).toBe(true);
    expect(existsSync(shared.path)).toBe(true);
    expect(existsSync(filler.path)).toBe(false);
  });

  it('reads a missing or foreign store as empty, and never follows what is not a regular file', () => {
    expect(trimInstallStore(join(store, 'none'), 1)).toEqual({ before: 0, after: 0, removed: 0 });
    mkdirSync(join(store, 'npm', 'content-v2', 'sha512', 'ab', 'cd'), { recursive: true });
    writeFileSync(join(store, 'npm', 'content-v2', 'sha512', 'ab', 'cd', 'not-hex'), Buffer.alloc(10 * KB));
    expect(trimInstallStore(store, 1).before).toBe(0);
  });
});

describe('parseCacheSize', () => {
  it('reads bytes and K, M, G, T in powers of 1024', () => {
    expect(parseCacheSize('5G')).toBe(5 * 1024 ** 3);
    expect(parseCacheSize('500MiB')).toBe(500 * 1024 ** 2);
    expect(parseCacheSize('1.5g')).toBe(1.5 * 1024 ** 3);
    expect(parseCacheSize(String(2 * 1024 ** 2))).toBe(2 * 1024 ** 2);
  });

  it('refuses what is no size, and one under 1M, in one line naming the flag', () => {
    for (const bad of ['', 'lots', '-1G', '5X', '100K', '0']) expect(() => parseCacheSize(bad), bad).toThrow(/^--install-cache-max .*: not a size of at least 1M/);
  });
});
