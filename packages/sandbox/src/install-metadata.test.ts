// The metadata half of the install cache, as an attacker would try it: what an attempt writes into its
// npm index only ever chooses which packuments the harness fetches itself, from the registry npm is
// configured with here (asked at run time, never written down), and what the next attempt's npm reads
// is what that registry served.
import { createHash, randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { harvestInstallCache, npmCacheOf, seedInstallCache } from './install-cache.js';
import { tempFolders, testCertificates } from './test-helpers.js';
import { askNpmConfig, fetchInstallMetadata, MAX_BUCKET_BYTES, MAX_METADATA_URLS, METADATA_REFRESH_MS, METADATA_TTL_S, npmConfig, npmRegistry, PACKUMENT_ACCEPTS, registryOf, wantedMetadata, type NpmRegistry } from './install-metadata.js';

const { temp, cleanup } = tempFolders('qs-install-metadata-');
afterEach(cleanup);

const KEY = 'make-fetch-happen:request-cache:';
const [CORGI] = PACKUMENT_ACCEPTS;
const sha512 = (data: string | Buffer) => createHash('sha512').update(data);

/** Appends an index line to the home's npm cache, as cacache writes it. */
function entry(home: string, key: string, fields: Record<string, unknown>): string {
  const h = createHash('sha256').update(key).digest('hex');
  const bucket = join(npmCacheOf(home), 'index-v5', h.slice(0, 2), h.slice(2, 4), h.slice(4));
  mkdirSync(dirname(bucket), { recursive: true });
  const json = JSON.stringify({ key, time: Date.now(), ...fields });
  writeFileSync(bucket, `\n${createHash('sha1').update(json).digest('hex')}\t${json}`, { flag: 'a' });
  return bucket;
}
const meta = (url: string, accept: string = CORGI) => ({ metadata: { time: Date.now(), url, reqHeaders: { accept }, resHeaders: { 'cache-control': 'max-age=99999999' }, options: { compress: true } } });

/** Plants content in the home's cache under its own (correct) SHA-512: a blob the harvest will accept. */
function plant(home: string, data: string): string {
  const hex = sha512(data).digest('hex');
  const p = join(npmCacheOf(home), 'content-v2', 'sha512', hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, data);
  return `sha512-${sha512(data).digest('base64')}`;
}

describe('which packuments an attempt asked for', () => {
  const registry: NpmRegistry = { url: 'https://registry.test/npm/' };

  it('takes only packument URLs of the registry with an accept npm sends, whatever else the index holds', () => {
    const home = temp();
    entry(home, `${KEY}https://registry.test/npm/express`, meta('https://registry.test/npm/express'));
    entry(home, `${KEY}https://registry.test/npm/@types%2fnode`, meta('x', PACKUMENT_ACCEPTS[1]));
    // Another host, a tarball, a path that climbs, a query, an accept of the attacker's, no compress, not an entry at all.
    entry(home, `${KEY}https://evil.test/npm/express`, meta('x'));
    entry(home, `${KEY}https://registry.test/npm/express/-/express-4.21.2.tgz`, meta('x'));
    entry(home, `${KEY}https://registry.test/npm/../admin`, meta('x'));
    entry(home, `${KEY}https://registry.test/npm/express?write=true`, meta('x'));
    entry(home, `${KEY}https://registry.test/npm/lodash`, meta('x', 'text/html'));
    entry(home, `${KEY}https://registry.test/npm/chalk`, { metadata: { reqHeaders: { accept: CORGI }, options: { compress: 'yes' } } });
    const garbage = entry(home, `${KEY}https://registry.test/npm/ms`, meta('x'));
    writeFileSync(garbage, '\nnot\ta json line\n\x00\x01', { flag: 'a' });
    expect(wantedMetadata(home, registry).map((w) => [w.url, w.accept])).toEqual(
      expect.arrayContaining([
        ['https://registry.test/npm/express', CORGI],
        ['https://registry.test/npm/@types%2fnode', PACKUMENT_ACCEPTS[1]],
        ['https://registry.test/npm/ms', CORGI],
      ]),
    );
    expect(wantedMetadata(home, registry)).toHaveLength(3);
  });

  it('takes at most MAX_METADATA_URLS from a flood of entries', () => {
    const home = temp();
    const lines: string[] = [];
    for (let i = 0; i < MAX_METADATA_URLS + 500; i += 1) {
      const url = `https://registry.test/npm/p${i}`;
      const json = JSON.stringify({ key: `${KEY}${url}`, ...meta(url) });
      lines.push(`\n${createHash('sha1').update(json).digest('hex')}\t${json}`);
    }
    const bucket = entry(home, `${KEY}https://registry.test/npm/p0`, meta('x'));
    writeFileSync(bucket, lines.join(''));
    expect(wantedMetadata(home, registry)).toHaveLength(MAX_METADATA_URLS);
  });

  it('follows no symlink and reads no huge bucket', () => {
    const [home, outside] = [temp(), temp()];
    // A bucket that is a link to a file elsewhere, and a level of folders that is a link.
    const bucket = entry(outside, `${KEY}https://registry.test/npm/a`, meta('x'));
    const real = entry(home, `${KEY}https://registry.test/npm/b`, meta('x'));
    rmSync(real);
    symlinkSync(bucket, real);
    const other = entry(outside, `${KEY}https://registry.test/npm/c`, meta('x'));
    const h = createHash('sha256').update(`${KEY}https://registry.test/npm/c`).digest('hex');
    mkdirSync(join(npmCacheOf(home), 'index-v5', h.slice(0, 2)), { recursive: true });
    symlinkSync(dirname(other), join(npmCacheOf(home), 'index-v5', h.slice(0, 2), h.slice(2, 4)));
    // Sparse: over the limit, almost nothing on disk.
    const huge = entry(home, `${KEY}https://registry.test/npm/d`, meta('x'));
    truncateSync(huge, MAX_BUCKET_BYTES + 1);
    expect(wantedMetadata(home, registry)).toEqual([]);
    // A home whose index folder is a link gives nothing either.
    const linked = temp();
    mkdirSync(npmCacheOf(linked), { recursive: true });
    symlinkSync(join(npmCacheOf(outside), 'index-v5'), join(npmCacheOf(linked), 'index-v5'));
    expect(wantedMetadata(linked, registry)).toEqual([]);
  });
});

describe("npm's registry, from its config values", () => {
  it('keeps an http(s) URL without credentials, query or fragment, ending in one slash; reads the cafile; refuses the rest', () => {
    const dir = temp();
    writeFileSync(join(dir, 'ca.pem'), 'PEM');
    expect(registryOf('https://user:secret@mirror.example:8443/npm//?token=x#y', join(dir, 'ca.pem'))).toEqual({ url: 'https://mirror.example:8443/npm/', ca: 'PEM' });
    expect(registryOf('http://127.0.0.1:4873')).toEqual({ url: 'http://127.0.0.1:4873/' });
    // a cafile npm could not read either: the system's roots are still used
    expect(registryOf('https://mirror.example/', join(dir, 'missing.pem'))).toEqual({ url: 'https://mirror.example/' });
    for (const bad of ['ftp://mirror.example/', 'file:///srv/npm', 'not a url', '']) expect(registryOf(bad)).toBeUndefined();
  });

  it('is what npm says, asked with or without waiting; nothing when npm cannot be asked', async () => {
    const dir = temp();
    // A project's .npmrc is npm's own to read: both ways must see it.
    writeFileSync(join(dir, '.npmrc'), 'registry=http://127.0.0.1:4873/\n');
    const env = { ...process.env, npm_config_cafile: join(dir, 'ca.pem') };
    const sync = npmConfig(dir, env);
    expect(sync).toEqual({ registry: 'http://127.0.0.1:4873/', cafile: join(dir, 'ca.pem') });
    expect(await askNpmConfig(dir, env)).toEqual(sync);
    const noNpm = { ...process.env, PATH: dir };
    expect(npmConfig(dir, noNpm)).toBeUndefined();
    expect(await askNpmConfig(dir, noNpm)).toBeUndefined();
  });
});

describe('the packuments in the store', () => {
  let registry: NpmRegistry;
  beforeAll(() => {
    const r = npmRegistry(process.cwd());
    if (r === undefined) throw new Error('npm config get registry gave nothing: these tests need npm and its registry');
    registry = r;
  });

  it('a forged packument and index entry for a real package reach the next attempt as the registry\'s packument, and npm uses it without asking again', async () => {
    const [store, attempt, next] = [temp(), temp(), temp()];
    const url = `${registry.url}ms`;
    // The attack: a packument of the attacker's (a hash-valid blob, so the blob harvest takes it),
    // and an index entry that says it is ms's, fresh for years.
    const forged = JSON.stringify({ name: 'ms', 'dist-tags': { latest: '9.9.9' }, versions: { '9.9.9': { name: 'ms', version: '9.9.9', dist: { tarball: `${registry.url}ms/-/ms-9.9.9.tgz`, integrity: 'sha512-AAAA' } } } });
    const integrity = plant(attempt, forged);
    // Under both accept headers npm sends (which one depends on npm's version and options).
    for (const accept of PACKUMENT_ACCEPTS) entry(attempt, `${KEY}${url}`, { integrity, size: forged.length, ...meta(url, accept) });
    expect(harvestInstallCache(store, attempt).added).toBe(1);
    const wants = wantedMetadata(attempt, registry);
    expect(wants).toEqual(PACKUMENT_ACCEPTS.map((accept) => ({ url, accept })));
    expect(await fetchInstallMetadata(store, wants, registry)).toEqual({ fetched: 2, revalidated: 0, fresh: 0, failed: 0, overBudget: 0 });
    // Asked again at once: the store's entries are fresh, nothing is fetched.
    expect(await fetchInstallMetadata(store, wants, registry)).toEqual({ fetched: 0, revalidated: 0, fresh: 2, failed: 0, overBudget: 0 });

    await seedInstallCache(store, next);
    // The next home's index is the harness's: one entry for ms, pointing at content that is the registry's.
    const buckets: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(join(d, e.name)) : buckets.push(join(d, e.name));
    };
    walk(join(npmCacheOf(next), 'index-v5'));
    expect(buckets).toHaveLength(1);
    const lines = readFileSync(buckets[0] as string, 'utf8').split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      const seeded = JSON.parse(line.split('\t')[1] as string) as { key: string; integrity: string };
      expect(seeded.key).toBe(`${KEY}${url}`);
      expect(seeded.integrity).not.toBe(integrity);
    }

    // What the next attempt does to its copy stays its own.
    const storeBucket = (buckets[0] as string).replace(npmCacheOf(next), join(store, 'npm'));
    const before = readFileSync(storeBucket, 'utf8');
    writeFileSync(buckets[0] as string, 'overwritten');
    expect(readFileSync(storeBucket, 'utf8')).toBe(before);
    writeFileSync(buckets[0] as string, before);

    // Real npm in the seeded home: the real ms, its packument from the cache (no request for it).
    const project = join(next, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'p', version: '0.0.0', private: true, dependencies: { ms: '*' } }));
    const env = { ...process.env, HOME: next, npm_config_cache: join(next, '.npm'), npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_registry: registry.url };
    const r = spawnSync('npm', ['install', '--loglevel=http'], { cwd: project, env, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const fetches = r.stderr.split('\n').filter((l) => l.includes(` ${url} `));
    expect(fetches.length, r.stderr).toBeGreaterThan(0);
    expect(fetches.every((l) => l.endsWith('(cache hit)')), r.stderr).toBe(true);
    const version = (JSON.parse(readFileSync(join(project, 'node_modules', 'ms', 'package.json'), 'utf8')) as { version: string }).version;
    expect(version).not.toBe('9.9.9');
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('a packument the registry does not have is counted as failed, and nothing is written for it', async () => {
    const store = temp();
    const url = `${registry.url}quickloop-no-such-package-${randomBytes(6).toString('hex')}`;
    expect(await fetchInstallMetadata(store, [{ url, accept: CORGI }], registry)).toEqual({ fetched: 0, revalidated: 0, fresh: 0, failed: 1, overBudget: 0 });
    expect(existsSync(join(store, 'npm', 'index-v5'))).toBe(false);
  });
});

describe('fetching from a registry that says more or less than it should', () => {
  /** A registry on a free loopback port: each packument served as `serve` says, every request logged. */
  type Reply = { status: number; headers?: Record<string, string>; body?: string };
  async function registryServing(serve: (name: string, headers: Record<string, string | string[] | undefined>) => Reply) {
    const seen: { name: string; ifNoneMatch?: string }[] = [];
    const server: Server = createServer((req, res) => {
      const name = decodeURIComponent((req.url ?? '/').slice('/npm/'.length));
      seen.push({ name, ...(typeof req.headers['if-none-match'] === 'string' ? { ifNoneMatch: req.headers['if-none-match'] } : {}) });
      const r = serve(name, req.headers);
      res.writeHead(r.status, r.headers ?? {});
      res.end(r.body ?? '');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return { registry: { url: `http://127.0.0.1:${port}/npm/` }, seen };
  }
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
  });

  it('writes its own max-age, leaves a fresh entry alone, and revalidates an old one with its etag', async () => {
    const body = JSON.stringify({ name: '@scope/pkg', versions: {} });
    const { registry, seen } = await registryServing((_name, h): Reply =>
      h['if-none-match'] === '"v1"' ? { status: 304, headers: { etag: '"v1"' } } : { status: 200, headers: { 'content-type': 'application/json', etag: '"v1"', 'cache-control': 'max-age=0' }, body },
    );
    const store = temp();
    const want = { url: `${registry.url}@scope%2fpkg`, accept: CORGI };
    let clock = 1_000_000;
    const now = () => clock;
    expect(await fetchInstallMetadata(store, [want], registry, now)).toEqual({ fetched: 1, revalidated: 0, fresh: 0, failed: 0, overBudget: 0 });
    clock += METADATA_REFRESH_MS - 1;
    expect(await fetchInstallMetadata(store, [want], registry, now)).toEqual({ fetched: 0, revalidated: 0, fresh: 1, failed: 0, overBudget: 0 });
    clock += 2;
    expect(await fetchInstallMetadata(store, [want], registry, now)).toEqual({ fetched: 0, revalidated: 1, fresh: 0, failed: 0, overBudget: 0 });
    expect(seen).toEqual([{ name: '@scope/pkg' }, { name: '@scope/pkg', ifNoneMatch: '"v1"' }]);
    // What npm will read: the body as served, the harness's freshness, the time of the revalidation.
    const next = temp();
    await seedInstallCache(store, next);
    const h = createHash('sha256').update(`${KEY}${want.url}`).digest('hex');
    const [line] = readFileSync(join(npmCacheOf(next), 'index-v5', h.slice(0, 2), h.slice(2, 4), h.slice(4)), 'utf8').split('\n').filter((l) => l !== '');
    const e = JSON.parse((line as string).split('\t')[1] as string) as { integrity: string; metadata: { time: number; resHeaders: Record<string, string> } };
    expect(e.integrity).toBe(`sha512-${sha512(body).digest('base64')}`);
    expect(e.metadata.time).toBe(clock);
    expect(e.metadata.resHeaders).toEqual({ 'content-type': 'application/json', etag: '"v1"', date: expect.any(String), 'cache-control': `max-age=${METADATA_TTL_S}` });
  });

  it('keeps nothing that is not the packument asked for: another name, an error, a redirect, a compressed body, not JSON', async () => {
    const { registry } = await registryServing((name): Reply => {
      if (name === 'other') return { status: 200, body: JSON.stringify({ name: 'express', versions: {} }) };
      if (name === 'gone') return { status: 404, body: '{}' };
      if (name === 'moved') return { status: 301, headers: { location: 'http://127.0.0.1:1/' } };
      if (name === 'zipped') return { status: 200, headers: { 'content-encoding': 'gzip' }, body: JSON.stringify({ name: 'zipped' }) };
      return { status: 200, body: '<html>a proxy page</html>' };
    });
    const store = temp();
    const wants = ['other', 'gone', 'moved', 'zipped', 'html'].map((n) => ({ url: `${registry.url}${n}`, accept: CORGI }));
    expect(await fetchInstallMetadata(store, wants, registry)).toEqual({ fetched: 0, revalidated: 0, fresh: 0, failed: 5, overBudget: 0 });
    expect(existsSync(join(store, 'npm', 'index-v5'))).toBe(false);
    // A registry that is not there at all: counted, not thrown.
    const down = { url: 'http://127.0.0.1:1/npm/' };
    expect(await fetchInstallMetadata(store, [{ url: `${down.url}x`, accept: CORGI }], down)).toEqual({ fetched: 0, revalidated: 0, fresh: 0, failed: 1, overBudget: 0 });
  });

  it("trusts npm's cafile for an https registry (one TLS context for all its fetches), and nothing signed by another CA", async () => {
    const { ca, key, cert, otherCa } = testCertificates(temp());
    let connections = 0;
    const server = createHttpsServer({ key, cert }, (req, res) => {
      const name = decodeURIComponent((req.url ?? '/').slice('/npm/'.length));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ name, versions: {} }));
    });
    server.on('secureConnection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `https://127.0.0.1:${(server.address() as { port: number }).port}/npm/`;
    const names = Array.from({ length: 40 }, (_, i) => `pkg-${i}`);
    const wants = names.map((n) => ({ url: `${url}${n}`, accept: CORGI }));
    expect(await fetchInstallMetadata(temp(), wants, { url, ca })).toEqual({ fetched: 40, revalidated: 0, fresh: 0, failed: 0, overBudget: 0 });
    // Kept-alive connections, not one handshake per packument.
    expect(connections).toBeLessThan(40);
    // Another CA's cafile, or none: the roots do not know this one, and nothing is kept.
    expect(await fetchInstallMetadata(temp(), wants.slice(0, 2), { url, ca: otherCa })).toEqual({ fetched: 0, revalidated: 0, fresh: 0, failed: 2, overBudget: 0 });
    expect(await fetchInstallMetadata(temp(), wants.slice(0, 2), { url })).toEqual({ fetched: 0, revalidated: 0, fresh: 0, failed: 2, overBudget: 0 });
  });
});
