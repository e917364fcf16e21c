// The install cache's threat model, case by case, on real files: what an attempt leaves in its npm
// cache reaches the next attempt only as a blob whose SHA-512 is its name.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, symlinkSync, truncateSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { harvestInstallCache, harvestInstallCacheAsync, installCacheDir, MAX_BLOB_BYTES, npmCacheOf, removeStaleParts, seedInstallCache, STALE_PART_MS } from './install-cache.js';
import { outerIds } from './rootfs.js';
import { tempFolders } from './test-helpers.js';

const { temp, cleanup } = tempFolders('qs-install-cache-');
afterEach(cleanup);

const hex = (data: string | Buffer) => createHash('sha512').update(data).digest('hex');
const blobPath = (home: string, digest: string) => join(npmCacheOf(home), 'content-v2', 'sha512', digest.slice(0, 2), digest.slice(2, 4), digest.slice(4));
function put(home: string, digest: string, data: string | Buffer): string {
  const p = blobPath(home, digest);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, data);
  return p;
}
/** Every file in the store, relative to it. */
function storeFiles(store: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(join(d, e.name), join(rel, e.name)) : out.push(join(rel, e.name));
  };
  if (existsSync(store)) walk(store, '');
  return out.sort();
}

describe('the install cache', () => {
  it('takes a blob that hashes to its name and gives the next home its own copy, never a link to the store', async () => {
    const [store, first, second] = [temp(), temp(), temp()];
    const tarball = 'a package tarball';
    put(first, hex(tarball), tarball);
    expect(harvestInstallCache(store, first)).toEqual({ added: 1, known: 0, refused: {} });
    expect(harvestInstallCache(store, first)).toEqual({ added: 0, known: 1, refused: {} });
    expect(await seedInstallCache(store, second)).toBe(1);
    const copy = blobPath(second, hex(tarball));
    expect(readFileSync(copy, 'utf8')).toBe(tarball);
    expect(statSync(copy).nlink).toBe(1);
    // The next attempt may do what it likes with its copy: the store does not change.
    writeFileSync(copy, 'overwritten');
    const [stored] = storeFiles(store).filter((f) => f.includes('content-v2'));
    expect(readFileSync(join(store, stored as string), 'utf8')).toBe(tarball);
  });

  it('refuses a bad blob: content under a name that is not its hash never reaches the store', async () => {
    const [store, attempt, next] = [temp(), temp(), temp()];
    // The name of a real package's content, with something else in it.
    put(attempt, hex('the real tarball'), 'a poisoned tarball');
    expect(harvestInstallCache(store, attempt)).toEqual({ added: 0, known: 0, refused: { hash_mismatch: 1 } });
    expect(await seedInstallCache(store, next)).toBe(0);
    expect(existsSync(npmCacheOf(next))).toBe(false);
    // Nothing half-written is left behind either.
    expect(storeFiles(store).filter((f) => !f.startsWith('npm/tmp/'))).toEqual([]);
    expect(readdirSync(join(store, 'npm', 'tmp'))).toEqual([]);
  });

  it('never reads an index entry, sha1 content or anything else of the attempt\'s cache', async () => {
    const [store, attempt, next] = [temp(), temp(), temp()];
    const cache = npmCacheOf(attempt);
    // A poisoned index entry: points a registry URL at content of the attacker's choosing.
    mkdirSync(join(cache, 'index-v5', 'aa', 'bb'), { recursive: true });
    writeFileSync(join(cache, 'index-v5', 'aa', 'bb', 'entry'), `x\t${JSON.stringify({ key: 'make-fetch-happen:request-cache:https://registry.example/pkg', integrity: 'sha512-evil' })}`);
    // sha1 content: collisions can be made, so it is not taken even when it matches.
    const sha1 = createHash('sha1').update('old').digest('hex');
    mkdirSync(join(cache, 'content-v2', 'sha1', sha1.slice(0, 2), sha1.slice(2, 4)), { recursive: true });
    writeFileSync(join(cache, 'content-v2', 'sha1', sha1.slice(0, 2), sha1.slice(2, 4), sha1.slice(4)), 'old');
    // Files in the content folder whose names are not digests.
    mkdirSync(join(cache, 'content-v2', 'sha512', 'zz'), { recursive: true });
    writeFileSync(join(cache, 'content-v2', 'sha512', 'README'), 'x');
    const h = harvestInstallCache(store, attempt);
    expect(h.added).toBe(0);
    expect(h.refused).toEqual({ bad_name: 2 });
    expect(storeFiles(store).some((f) => f.includes('index') || f.includes('sha1'))).toBe(false);
    expect(await seedInstallCache(store, next)).toBe(0);
  });

  it('follows no symlink: not a blob, not a folder on the way, not the cache itself', () => {
    const [store, attempt, outside] = [temp(), temp(), temp()];
    // A host file an attempt could name, at the path of its own hash: a link to it must still not be copied.
    const secret = join(outside, 'secret');
    writeFileSync(secret, 'host secret');
    const p = blobPath(attempt, hex('host secret'));
    mkdirSync(dirname(p), { recursive: true });
    symlinkSync(secret, p);
    // A link where a level of folders should be.
    const real = join(outside, 'cd');
    mkdirSync(real);
    const d = hex('via a folder link');
    writeFileSync(join(real, d.slice(4)), 'via a folder link');
    mkdirSync(join(npmCacheOf(attempt), 'content-v2', 'sha512', d.slice(0, 2)), { recursive: true });
    symlinkSync(real, join(npmCacheOf(attempt), 'content-v2', 'sha512', d.slice(0, 2), d.slice(2, 4)));
    expect(harvestInstallCache(store, attempt)).toEqual({ added: 0, known: 0, refused: { not_regular: 2 } });
    // A home whose whole .npm is a link to a folder full of good blobs gives nothing.
    const [other, linkedHome] = [temp(), temp()];
    put(other, hex('fine'), 'fine');
    symlinkSync(join(other, '.npm'), join(linkedHome, '.npm'));
    expect(harvestInstallCache(store, linkedHome)).toEqual({ added: 0, known: 0, refused: {} });
    expect(storeFiles(store).filter((f) => f.includes('content-v2'))).toEqual([]);
  });

  it('refuses a FIFO without blocking on it, and a huge file without reading it', () => {
    const [store, attempt] = [temp(), temp()];
    const fifo = blobPath(attempt, hex('fifo'));
    mkdirSync(dirname(fifo), { recursive: true });
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // Sparse: as large as the limit allows plus one, on disk almost nothing.
    const big = put(attempt, 'f'.repeat(128), '');
    truncateSync(big, MAX_BLOB_BYTES + 1);
    expect(harvestInstallCache(store, attempt)).toEqual({ added: 0, known: 0, refused: { not_regular: 1, too_large: 1 } });
  });

  it('refuses a sparse blob: a file that costs the attempt nothing on disk never becomes real bytes in the store and in every later home', async () => {
    // 3 × 200 MiB of holes under their own hashes cost an attempt 40 KiB; taken, they were 600 MiB
    // in the store and 600 MiB again in each home seeded from it.
    const [store, attempt, next] = [temp(), temp(), temp()];
    const size = 8 * 1024 * 1024;
    const holes = put(attempt, hex(Buffer.alloc(size)), '');
    truncateSync(holes, size);
    // Mostly holes: one written block in every 64.
    const partly = Buffer.alloc(size);
    for (let at = 0; at < size; at += 64 * 4096) partly.fill(1, at, at + 4096);
    const mostly = put(attempt, hex(partly), '');
    const fd = openSync(mostly, 'r+');
    for (let at = 0; at < size; at += 64 * 4096) writeSync(fd, partly, at, 4096, at);
    closeSync(fd);
    truncateSync(mostly, size);
    const real = Buffer.alloc(size, 7);
    put(attempt, hex(real), real);
    expect(statSync(holes).blocks * 512).toBeLessThan(size / 2);
    expect(harvestInstallCache(store, attempt)).toEqual({ added: 1, known: 0, refused: { sparse: 2 } });
    expect(await seedInstallCache(store, next)).toBe(1);
    expect(readFileSync(blobPath(next, hex(real))).equals(real)).toBe(true);
  });

  it('a seed that cannot make its folders fails whole, after every copy under way has ended', async () => {
    const [store, attempt, home] = [temp(), temp(), temp()];
    for (let i = 0; i < 40; i++) put(attempt, hex(`tarball ${i}`), `tarball ${i}`);
    harvestInstallCache(store, attempt);
    // A file where the cache's folder must go.
    mkdirSync(join(home, '.npm'));
    writeFileSync(join(home, '.npm', '_cacache'), 'in the way');
    await expect(seedInstallCache(store, home)).rejects.toThrow(/ENOTDIR|EEXIST/);
    expect(readFileSync(join(home, '.npm', '_cacache'), 'utf8')).toBe('in the way');
    // A clean home next to it seeds whole: 40 blobs, each readable where npm looks for it.
    const next = temp();
    expect(await seedInstallCache(store, `${next}/`)).toBe(40);
    expect(readFileSync(blobPath(next, hex('tarball 7')), 'utf8')).toBe('tarball 7');
  });

  // cp(1) makes a seed; where it cannot (here: no xargs or cp on PATH), the harness makes it call by call.
  for (const via of ['cp', 'no cp'] as const) it(`a seeded npm cache is the sandbox user's whole: every folder (.npm and _cacache too) and file, writable by it, none a link (${via})`, async () => {
    const path = process.env.PATH;
    if (via === 'no cp') process.env.PATH = temp();
    onTestFinished(() => {
      process.env.PATH = path;
    });
    const [store, attempt, home] = [temp(), temp(), temp()];
    for (let i = 0; i < 3; i++) put(attempt, hex(`tarball ${i}`), `tarball ${i}`);
    harvestInstallCache(store, attempt);
    // An index bucket of the harness's, as install-metadata.ts writes it (0600, its own).
    const bucket = join(store, 'npm', 'index-v5', 'ab', 'cd', 'e'.repeat(60));
    mkdirSync(dirname(bucket), { recursive: true, mode: 0o700 });
    writeFileSync(bucket, 'entry', { mode: 0o600 });
    expect(await seedInstallCache(store, home)).toBe(3);
    const ids = process.getuid?.() === 0 ? outerIds() : { uid: process.getuid?.(), gid: process.getgid?.() };
    const seen: string[] = [];
    const walk = (p: string): void => {
      const st = lstatSync(p);
      seen.push(`${p.slice(home.length)} ${st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other'} ${st.uid}:${st.gid} nlink=${st.isFile() ? st.nlink : '-'} ${(st.mode & (st.isDirectory() ? 0o700 : 0o600)).toString(8)}`);
      if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
    };
    walk(join(home, '.npm'));
    const own = `${ids.uid}:${ids.gid}`;
    expect(seen.filter((l) => !l.endsWith(` ${own} nlink=- 700`) && !l.endsWith(` ${own} nlink=1 600`))).toEqual([]);
    expect(seen.filter((l) => l.includes(' other '))).toEqual([]);
    for (const d of ['/.npm', '/.npm/_cacache', '/.npm/_cacache/index-v5', '/.npm/_cacache/content-v2/sha512', '/.npm/_cacache/index-v5/ab/cd']) expect(seen).toContain(`${d} dir ${own} nlink=- 700`);
    expect(seen).toContain(`/.npm/_cacache/index-v5/ab/cd/${'e'.repeat(60)} file ${own} nlink=1 600`);
    // 3 blobs and the bucket: nothing else was made.
    expect(seen.filter((l) => l.includes(' file '))).toHaveLength(4);
  });

  it('the async harvest takes and refuses exactly what the sync one does, and lets the event loop run meanwhile', async () => {
    const [attempt, syncStore, asyncStore] = [temp(), temp(), temp()];
    for (let i = 0; i < 20; i++) put(attempt, hex(`tarball ${i}`), `tarball ${i}`);
    put(attempt, hex('the real tarball'), 'a poisoned tarball');
    const want = { added: 20, known: 0, refused: { hash_mismatch: 1 } };
    expect(harvestInstallCache(syncStore, attempt)).toEqual(want);
    // Another task on the same loop, one step per turn: it gets turns only if the harvest yields.
    let turns = 0;
    let running = true;
    const step = (): void => {
      turns += 1;
      if (running) setImmediate(step);
    };
    setImmediate(step);
    const got = await harvestInstallCacheAsync(asyncStore, attempt);
    running = false;
    const during = turns;
    expect(got).toEqual(want);
    expect(storeFiles(asyncStore).filter((f) => f.includes('content-v2'))).toEqual(storeFiles(syncStore).filter((f) => f.includes('content-v2')));
    expect(during).toBeGreaterThan(1);
    expect(await harvestInstallCacheAsync(asyncStore, attempt)).toEqual({ added: 0, known: 20, refused: { hash_mismatch: 1 } });
  });

  it('--install-cache: a missing folder is made private; a file is a usage error', () => {
    const base = temp();
    const dir = installCacheDir('store', base);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    writeFileSync(join(base, 'file'), '');
    expect(() => installCacheDir('file', base)).toThrow(/^--install-cache file: not a folder that can be written \(E/);
    expect(() => installCacheDir('', base)).toThrow('--install-cache needs a folder');
  });
});

describe("a killed harvest's leftovers in the store", () => {
  it('are removed once older than any harvest runs; a running one\'s, other names, folders and links stay', () => {
    const store = temp();
    const npmTmp = join(store, 'npm', 'tmp');
    const pipTmp = join(store, 'pip', 'tmp');
    mkdirSync(npmTmp, { recursive: true });
    mkdirSync(pipTmp, { recursive: true });
    const now = Date.now();
    const old = (now - STALE_PART_MS - 1000) / 1000;
    const made = (path: string, stale: boolean) => {
      writeFileSync(path, 'x');
      if (stale) utimesSync(path, old, old);
    };
    made(join(npmTmp, 'a.part'), true);
    made(join(npmTmp, 'b.index'), true);
    made(join(pipTmp, 'c.part'), true);
    made(join(pipTmp, 'fresh.part'), false);
    made(join(pipTmp, 'notes.txt'), true);
    mkdirSync(join(pipTmp, 'dir.part'));
    symlinkSync('/etc/hostname', join(pipTmp, 'link.part'));
    expect(removeStaleParts(store, now)).toBe(3);
    expect(readdirSync(npmTmp)).toEqual([]);
    expect(readdirSync(pipTmp).sort()).toEqual(['dir.part', 'fresh.part', 'link.part', 'notes.txt']);
    expect(removeStaleParts(temp(), now)).toBe(0);
  });
});
