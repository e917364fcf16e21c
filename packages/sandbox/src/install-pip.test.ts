// The pip half of the install cache, case by case: what an attempt installed is read as names only,
// the files come from the index (served here on loopback) and are kept only when their hash is the
// index's, and a new home gets pip cache entries in the shapes pip reads.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchPipFiles, filesFor, installedDists, notePipLayouts, pageFiles, pipCacheOf, pipEntryPath, pipRequestUrl, seedPipCache, type InstalledDist } from './install-pip.js';
import { outerIds } from './rootfs.js';
import { tempFolders } from './test-helpers.js';

const { temp, cleanup } = tempFolders('qs-install-pip-');
const servers: Server[] = [];
afterEach(async () => {
  cleanup();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A pip-installed distribution in a venv's site-packages under `root`. */
function install(root: string, dir: string, opts: { installer?: string; tags?: string[] } = {}): string {
  const at = join(root, '.venv', 'lib', 'python3.11', 'site-packages', dir);
  mkdirSync(at, { recursive: true });
  writeFileSync(join(at, 'INSTALLER'), `${opts.installer ?? 'pip'}\n`);
  writeFileSync(join(at, 'WHEEL'), `Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n${(opts.tags ?? ['py3-none-any']).map((t) => `Tag: ${t}\n`).join('')}`);
  return at;
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

interface Index {
  url: string;
  /** Requests seen, as `METHOD path`. */
  seen: string[];
}

/** A PEP 503 index on loopback: `pages` maps a project to its page's HTML, `files` a path to its bytes. */
/** What PyPI says of a file: it never changes. */
const IMMUTABLE = { 'cache-control': 'max-age=365000000, immutable, public' };

async function serveIndex(pages: Record<string, string>, files: Record<string, Buffer | { body: Buffer; headers: Record<string, string> }> = {}, redirects: Record<string, string> = {}): Promise<Index> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    seen.push(`${req.method} ${path}`);
    if (redirects[path] !== undefined) {
      res.writeHead(301, { location: redirects[path] });
      res.end();
      return;
    }
    const project = /^\/simple\/([^/]+)\/$/.exec(path)?.[1];
    if (project !== undefined && pages[project] !== undefined) {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(pages[project]);
      return;
    }
    const file = files[path];
    if (file !== undefined) {
      const { body, headers } = Buffer.isBuffer(file) ? { body: file, headers: IMMUTABLE } : file;
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length), ...headers });
      res.end(body);
      return;
    }
    res.writeHead(404);
    res.end('not found');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/simple/`, seen };
}

const link = (href: string, text = href.split('/').pop()!.split('#')[0]!) => `<a href="${href}">${text}</a>`;
const page = (...links: string[]) => `<!DOCTYPE html><html><body>${links.join('\n')}</body></html>`;

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(join(d, e.name), join(rel, e.name)) : out.push(join(rel, e.name));
  };
  if (existsSync(dir)) walk(dir, '');
  return out.sort();
}

// Just enough msgpack to read back an entry: what CacheControl's loader sees.
function unpack(buf: Buffer): unknown {
  let at = 0;
  const u8 = () => buf[at++]!;
  const n16 = () => ((at += 2), buf.readUInt16BE(at - 2));
  const n32 = () => ((at += 4), buf.readUInt32BE(at - 4));
  const bytes = (n: number) => ((at += n), buf.subarray(at - n, at));
  const value = (): unknown => {
    const b = u8();
    if (b < 0x80) return b;
    if (b >= 0x80 && b <= 0x8f) return map(b & 0x0f);
    if (b >= 0xa0 && b <= 0xbf) return bytes(b & 0x1f).toString('utf8');
    switch (b) {
      case 0xc2: return false;
      case 0xc3: return true;
      case 0xc4: return Buffer.from(bytes(u8()));
      case 0xc5: return Buffer.from(bytes(n16()));
      case 0xc6: return Buffer.from(bytes(n32()));
      case 0xcd: return n16();
      case 0xce: return n32();
      case 0xd9: return bytes(u8()).toString('utf8');
      case 0xda: return bytes(n16()).toString('utf8');
      case 0xde: return map(n16());
      default: throw new Error(`unexpected msgpack byte 0x${b.toString(16)} at ${at - 1}`);
    }
  };
  const map = (n: number): Record<string, unknown> => {
    const o: Record<string, unknown> = {};
    for (let i = 0; i < n; i += 1) {
      const k = value() as string;
      o[k] = value();
    }
    return o;
  };
  const v = value();
  expect(at, 'the whole entry is one value').toBe(buf.length);
  return v;
}

function readEntry(path: string): { response: { body: Buffer; headers: Record<string, string>; status: number; version: number; reason: string; decode_content: boolean }; vary: Record<string, unknown> } {
  const raw = readFileSync(path);
  expect(raw.subarray(0, 5).toString()).toBe('cc=4,');
  return unpack(raw.subarray(5)) as never;
}

describe('which distributions an attempt installed', () => {
  it('reads real pip-installed dist-info folders in the workspace and the home, and nothing else', () => {
    const ws = temp();
    const home = temp();
    install(ws, 'greeter_py-1.0.0.dist-info');
    install(ws, 'numpy-2.1.0.dist-info', { tags: ['cp311-cp311-manylinux_2_17_x86_64', 'cp311-cp311-manylinux2014_x86_64'] });
    // The same distribution in a second venv is one lookup.
    mkdirSync(join(home, '.local', 'lib', 'python3.11', 'site-packages', 'greeter_py-1.0.0.dist-info'), { recursive: true });
    writeFileSync(join(home, '.local', 'lib', 'python3.11', 'site-packages', 'greeter_py-1.0.0.dist-info', 'INSTALLER'), 'pip\n');
    writeFileSync(join(home, '.local', 'lib', 'python3.11', 'site-packages', 'greeter_py-1.0.0.dist-info', 'WHEEL'), 'Tag: py3-none-any\n');
    // Another installer's, a link to a real one, an INSTALLER that is a link, a folder under node_modules, a name that is not a distribution's.
    install(ws, 'uvthing-1.0.dist-info', { installer: 'uv' });
    symlinkSync(install(temp(), 'linked-1.0.dist-info'), join(ws, 'linked-1.0.dist-info'));
    const sneaky = install(ws, 'sneaky-1.0.dist-info');
    rmSync(join(sneaky, 'INSTALLER'));
    const pipWord = join(temp(), 'INSTALLER');
    writeFileSync(pipWord, 'pip\n');
    symlinkSync(pipWord, join(sneaky, 'INSTALLER'));
    install(join(ws, 'node_modules', 'x'), 'hidden-1.0.dist-info');
    mkdirSync(join(ws, '-bad-1.0.dist-info'));
    writeFileSync(join(ws, '-bad-1.0.dist-info', 'INSTALLER'), 'pip');
    // A dist-info folder reached only through a linked folder is not walked into.
    symlinkSync(join(ws, '.venv'), join(home, 'venv-link'));

    const found = installedDists([ws, home]).sort((a, b) => a.name.localeCompare(b.name));
    expect(found).toEqual([
      { name: 'greeter_py', version: '1.0.0', tags: ['py3-none-any'] },
      { name: 'numpy', version: '2.1.0', tags: ['cp311-cp311-manylinux_2_17_x86_64', 'cp311-cp311-manylinux2014_x86_64'] },
    ]);
  });

  it('a folder that cannot be read, or a missing root, gives nothing and does not throw', () => {
    expect(installedDists([join(temp(), 'absent'), '/proc/self/fdinfo'])).toEqual([]);
  });
});

describe('the URL pip requests for a file, which keys its cache entry', () => {
  it('is re-quoted as pip cleans a link: + and ! quoted, ~ and %7E plain, @ and %2F kept, host lower-cased, credentials dropped', () => {
    expect(pipRequestUrl(new URL('http://User:pw@Files.Example.TEST:8080/p/greeter_py-1.0.0+qs-py3-none-any.whl?x=1'))).toBe('http://files.example.test:8080/p/greeter_py-1.0.0%2Bqs-py3-none-any.whl?x=1');
    expect(pipRequestUrl(new URL('https://h.test/a%7Eb/c!d/e@f/g%2fh/i%20j.whl'))).toBe('https://h.test/a~b/c%21d/e@f/g%2Fh/i%20j.whl');
  });
  it('is stored five one-letter folders deep under its SHA-224, as pip finds it', () => {
    const url = 'https://h.test/f-1.0-py3-none-any.whl';
    const h = createHash('sha224').update(url).digest('hex');
    expect(pipEntryPath('/c/http', url)).toBe(join('/c/http', h[0]!, h[1]!, h[2]!, h[3]!, h[4]!, h));
  });
});

describe("the cache key, against pip's own code (its link parsing, its session's request, CacheControl's key)", () => {
  // What pip requests for each link, asked of the host's pip itself: the harness's key must be that, byte for byte.
  const ORACLE = [
    'import glob, json, os, sys',
    // A python3 without pip of its own (Debian's) still has the wheel venv installs it from.
    'try:',
    '    import pip',
    'except ImportError:',
    '    import ensurepip',
    '    sys.path.insert(0, sorted(glob.glob(os.path.join(os.path.dirname(ensurepip.__file__), "_bundled", "pip-*.whl")) + glob.glob("/usr/share/python-wheels/pip-*.whl"))[-1])',
    'from pip._internal.index.collector import IndexContent, parse_links',
    'from pip._internal.network.session import PipSession',
    'from pip._vendor.requests import Request',
    'from pip._vendor.cachecontrol.controller import CacheController',
    'session = PipSession()',
    'out = []',
    'for page, html in json.load(sys.stdin):',
    '    links = parse_links(IndexContent(html.encode(), "text/html", encoding="utf-8", url=page))',
    '    out.append([CacheController.cache_url(session.prepare_request(Request("GET", l.url.split("#", 1)[0])).url) for l in links])',
    'print(json.dumps(out))',
  ].join('\n');
  const d = 'e'.repeat(64);
  const w = 'f-1.0-py3-none-any.whl';
  const hrefs = [
    `../../files/a%2fb/${w}`,
    `../../files/${w}?x=1&y=%7E%27z%20w`,
    `../../${w}?a='b'^c|d{}`,
    `../../q\\b/${w}`,
    `../../%FF/${w}`,
    `https://H.test:443/${w}`,
    `http://H.test:80/${w}`,
    `https://H.test:0443/${w}`,
    `https://u:p@H.test:8443/${w}`,
    `https://bücher.test/${w}`,
    `//H.test:443/x/./y/../${w}`,
    'a~b%7Ec/sp ace/a!b@c(d)/é/f-1.0%2Bqs-py3-none-any.whl',
    `${w}?`,
    `${w}?q=%zz%41`,
    `${w}?n=é&m=%e9`,
    `/abs/path/${w}`,
    `https://h.test/%2e%2e/${w}`,
  ];
  const html = hrefs.map((h) => `<a href="${h.replace(/&/g, '&amp;')}#sha256=${d}">x</a>`).join('\n');
  const pages: [string, string][] = [
    ['http://me:pw@127.0.0.1:8080/simple/g/', html],
    ['https://Idx.TEST:443/simple/g/', html],
    ['https://idx.test/simple/g/', `<base href="https://Mirror.test:443/pkgs/">${link(`${w}#sha256=${d}`)}${link(`sub/${w}#sha256=${d}`)}`],
  ];
  it('is the URL pip requests for every link, odd ones included', () => {
    const r = spawnSync('python3', ['-c', ORACLE], { input: JSON.stringify(pages), encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const want = JSON.parse(r.stdout) as string[][];
    const got = pages.map(([url, text]) => pageFiles(text, url).map((f) => f.key));
    for (let i = 0; i < pages.length; i += 1) expect(got[i]!.map((k, j) => [hrefs[j] ?? j, k])).toEqual(want[i]!.map((k, j) => [hrefs[j] ?? j, k]));
  });
});

describe("an index page's files", () => {
  it('resolves links against the page (or its <base>), decodes entities, and keeps only http(s) links with a sha256', () => {
    const d = 'a'.repeat(64);
    const html = page(
      link(`../../files/greeter_py-1.0.0-py3-none-any.whl#sha256=${d}`),
      link(`https://files.test/x/greeter_py-1.0.0.tar.gz?a=1&amp;b=2#sha256=${d.toUpperCase()}`),
      link('../../files/greeter_py-0.9.0-py3-none-any.whl'),
      link(`../../files/greeter_py-0.8.0-py3-none-any.whl#md5=${'b'.repeat(32)}`),
      link(`javascript:alert(1)#sha256=${d}`),
      `<a data-yanked="" href='../../files/greeter_py-0.7.0-py3-none-any.whl#sha256=${d}'>old</a>`,
    );
    const files = pageFiles(html, 'http://me:secret@idx.test/simple/greeter-py/');
    expect(files.map((f) => [f.filename, f.key, f.sha256])).toEqual([
      ['greeter_py-1.0.0-py3-none-any.whl', 'http://idx.test/files/greeter_py-1.0.0-py3-none-any.whl', d],
      ['greeter_py-1.0.0.tar.gz', 'https://files.test/x/greeter_py-1.0.0.tar.gz?a=1&b=2', d],
      ['greeter_py-0.7.0-py3-none-any.whl', 'http://idx.test/files/greeter_py-0.7.0-py3-none-any.whl', d],
    ]);
    // The index's credentials go with links to its own host only.
    expect(files[0]!.href.username).toBe('me');
    expect(files[1]!.href.username).toBe('');
    const based = pageFiles(`<base href="https://mirror.test/pkgs/">${link(`f-1.0-py3-none-any.whl#sha256=${d}`)}`, 'https://idx.test/simple/f/');
    expect(based.map((f) => f.key)).toEqual(['https://mirror.test/pkgs/f-1.0-py3-none-any.whl']);
  });
});

describe('a page made to be slow to read', () => {
  it('is read in one pass: thousands of tags that never close, or a <base> without href, cost no more than their length', () => {
    const d = 'f'.repeat(64);
    const valid = link(`f-1.0-py3-none-any.whl#sha256=${d}`);
    for (const junk of ['<a ', '<base ', '<a href=x', '<A\t']) {
      // Nothing after the link closes a tag: a search for each tag's end that starts again at every `<` never ends.
      const files = pageFiles(`${valid}${junk.repeat(400_000)}`, 'https://idx.test/simple/f/');
      expect([junk, files.map((f) => f.filename)]).toEqual([junk, ['f-1.0-py3-none-any.whl']]);
    }
  });
});

describe('which of a page\'s files a distribution was installed from', () => {
  const d = 'c'.repeat(64);
  const files = ['Greeter.Py-1.0.0-py3-none-any.whl', 'greeter_py-1.0.0-py2.py3-none-any.whl', 'greeter_py-1.1.0-py3-none-any.whl', 'greeter_py-1.0.0.tar.gz', 'other-1.0.0-py3-none-any.whl'].map((filename) => ({ filename, key: `https://h.test/${filename}`, sha256: d }));
  it('the wheel with exactly its tags, by normalized name and version', () => {
    expect(filesFor({ name: 'greeter-py', version: '1.0.0', tags: ['py3-none-any'] }, files).map((f) => f.filename)).toEqual(['Greeter.Py-1.0.0-py3-none-any.whl']);
    expect(filesFor({ name: 'greeter_py', version: '1.0.0', tags: ['py2-none-any', 'py3-none-any'] }, files).map((f) => f.filename)).toEqual(['greeter_py-1.0.0-py2.py3-none-any.whl']);
  });
  it('its sdist when no wheel of that version has its tags (a local build), and nothing for a version the index lacks', () => {
    expect(filesFor({ name: 'greeter_py', version: '1.0.0', tags: ['cp311-cp311-linux_x86_64'] }, files).map((f) => f.filename)).toEqual(['greeter_py-1.0.0.tar.gz']);
    expect(filesFor({ name: 'greeter_py', version: '2.0.0', tags: ['py3-none-any'] }, files)).toEqual([]);
  });
});

describe('fetching the files into the store', () => {
  const wheel = Buffer.from('the real wheel');
  const name = 'greeter_py-1.0.0+qs-py3-none-any.whl';
  const dist: InstalledDist = { name: 'greeter_py', version: '1.0.0+qs', tags: ['py3-none-any'] };

  it('downloads from the index the file it lists with its hash, once, and needs no request for it again', async () => {
    const idx = await serveIndex({ 'greeter-py': page(link(`../../files/${name}#sha256=${sha256(wheel)}`)) }, { '/files/greeter_py-1.0.0%2Bqs-py3-none-any.whl': wheel });
    const store = temp();
    const home = temp();
    expect(await fetchPipFiles(store, [dist], { urls: [idx.url] }, home)).toEqual({ fetched: 1, known: 0, notOnIndex: 0, failed: 0, overBudget: 0 });
    expect(readFileSync(join(store, 'pip', 'files', sha256(wheel)))).toEqual(wheel);
    const seen = idx.seen.length;
    expect(await fetchPipFiles(store, [dist], { urls: [idx.url] }, home)).toEqual({ fetched: 0, known: 1, notOnIndex: 0, failed: 0, overBudget: 0 });
    expect(idx.seen).toHaveLength(seen);
    expect(filesUnder(join(store, 'pip', 'tmp'))).toEqual([]);
  });

  it('refuses a file whose bytes are not the hash the page gives, and keeps nothing of it', async () => {
    const idx = await serveIndex({ 'greeter-py': page(link(`../../files/${name}#sha256=${sha256('what the index promised')}`)) }, { '/files/greeter_py-1.0.0%2Bqs-py3-none-any.whl': wheel });
    const store = temp();
    expect(await fetchPipFiles(store, [dist], { urls: [idx.url] }, temp())).toEqual({ fetched: 0, known: 0, notOnIndex: 0, failed: 1, overBudget: 0 });
    expect(filesUnder(join(store, 'pip'))).toEqual([]);
  });

  it('asks the indexes in order, follows a page redirect, and counts a project no index has', async () => {
    const empty = await serveIndex({});
    const idx = await serveIndex({ 'greeter-py': page(link(`../../files/${name}#sha256=${sha256(wheel)}`)) }, { '/files/greeter_py-1.0.0%2Bqs-py3-none-any.whl': wheel }, {});
    const moved = await serveIndex({}, {}, { '/simple/greeter-py/': `${idx.url}greeter-py/` });
    const store = temp();
    const ghost: InstalledDist = { name: 'evil', version: '6.6.6', tags: ['py3-none-any'] };
    expect(await fetchPipFiles(store, [dist, ghost], { urls: [empty.url, moved.url] }, temp())).toEqual({ fetched: 1, known: 0, notOnIndex: 1, failed: 0, overBudget: 0 });
    expect(empty.seen).toEqual(['GET /simple/greeter-py/', 'GET /simple/evil/']);
    expect(moved.seen).toContain('GET /simple/greeter-py/');
  });

  it("also takes the project's other files the attempt's pip cache had an entry for (a hint: the bytes are the index's)", async () => {
    const old = Buffer.from('old wheel');
    const idx = await serveIndex(
      { 'greeter-py': page(link(`../../files/${name}#sha256=${sha256(wheel)}`), link(`../../files/greeter_py-0.9.0-py3-none-any.whl#sha256=${sha256(old)}`), link(`../../files/greeter_py-0.8.0-py3-none-any.whl#sha256=${sha256('x')}`)) },
      { '/files/greeter_py-1.0.0%2Bqs-py3-none-any.whl': wheel, '/files/greeter_py-0.9.0-py3-none-any.whl': old },
    );
    const home = temp();
    const port = new URL(idx.url).port;
    // The attempt's pip (either layout) downloaded 0.9.0 too, and left a poisoned body beside its entry.
    const v2 = pipEntryPath(join(pipCacheOf(home), 'http-v2'), `http://127.0.0.1:${port}/files/greeter_py-0.9.0-py3-none-any.whl`);
    mkdirSync(dirname(v2), { recursive: true });
    writeFileSync(v2, 'cc=4,whatever');
    writeFileSync(`${v2}.body`, 'poison');
    const store = temp();
    expect(await fetchPipFiles(store, [dist], { urls: [idx.url] }, home)).toEqual({ fetched: 2, known: 0, notOnIndex: 0, failed: 0, overBudget: 0 });
    expect(filesUnder(join(store, 'pip', 'files'))).toEqual([sha256(old), sha256(wheel)].sort());
    expect(readFileSync(join(store, 'pip', 'files', sha256(old)))).toEqual(old);
  });

  it('an index that cannot be reached is counted, not thrown', async () => {
    const idx = await serveIndex({});
    await new Promise((resolve) => servers.pop()!.close(resolve));
    expect(await fetchPipFiles(temp(), [dist], { urls: [idx.url] }, temp())).toEqual({ fetched: 0, known: 0, notOnIndex: 1, failed: 1, overBudget: 0 });
  });
});

/** A store holding one wheel, fetched from an index served here; `url` is the file's (the entry's key). */
async function storeWith(wheel: Buffer): Promise<{ store: string; url: string }> {
  const name = 'greeter_py-1.0.0-py3-none-any.whl';
  const idx = await serveIndex({ 'greeter-py': page(link(`../../files/${name}#sha256=${sha256(wheel)}`)) }, { [`/files/${name}`]: wheel });
  const store = temp();
  await fetchPipFiles(store, [{ name: 'greeter_py', version: '1.0.0', tags: ['py3-none-any'] }], { urls: [idx.url] }, temp());
  return { store, url: `${idx.url.replace('/simple/', '/files/')}${name}` };
}

describe('seeding a new home', () => {
  it("writes, for each stored file, pip's entry in both layouts: the whole response (http) and metadata plus body (http-v2)", async () => {
    const wheel = Buffer.from('the real wheel bytes');
    const { store, url } = await storeWith(wheel);
    const home = temp();
    expect(await seedPipCache(store, `${home}/`)).toBe(1);
    const whole = readEntry(pipEntryPath(join(pipCacheOf(home), 'http'), url));
    const meta = readEntry(pipEntryPath(join(pipCacheOf(home), 'http-v2'), url));
    // The index's own caching headers (its Date too), so pip serves the file from its cache as long as it would have itself.
    const date = whole.response.headers.date!;
    expect(Number.isFinite(Date.parse(date))).toBe(true);
    const headers = { 'content-type': 'application/octet-stream', 'content-length': String(wheel.length), ...IMMUTABLE, date };
    expect(whole).toEqual({ response: { body: wheel, headers, status: 200, version: 11, reason: 'OK', decode_content: false }, vary: {} });
    expect(meta).toEqual({ response: { body: Buffer.alloc(0), headers, status: 200, version: 11, reason: 'OK', decode_content: false }, vary: {} });
    expect(readFileSync(`${pipEntryPath(join(pipCacheOf(home), 'http-v2'), url)}.body`)).toEqual(wheel);
    if (process.getuid?.() === 0) {
      // pip disables a cache it does not own: every folder from .cache down and every file is the sandbox user's.
      const ids = outerIds();
      for (const rel of ['.cache', join('.cache', 'pip'), ...filesUnder(join(home, '.cache')).map((f) => join('.cache', f))]) {
        const st = lstatSync(join(home, rel));
        expect([rel, st.uid, st.gid]).toEqual([rel, ids.uid, ids.gid]);
      }
    }
  });

  it("writes only the layouts the sweep's pips were seen to make, once one was seen (a link is not a sighting)", async () => {
    const wheel = Buffer.from('layout wheel');
    const { store, url } = await storeWith(wheel);
    const layoutsIn = (home: string) => ['http', 'http-v2'].filter((l) => existsSync(pipEntryPath(join(pipCacheOf(home), l), url)));
    // A run whose pip cache is a link to elsewhere says nothing; a pip 23.3+ run says http-v2.
    const linked = temp();
    mkdirSync(join(linked, '.cache'));
    const elsewhere = temp();
    mkdirSync(join(elsewhere, 'http-v2'), { recursive: true });
    symlinkSync(elsewhere, join(linked, '.cache', 'pip'));
    notePipLayouts(store, linked);
    const before = temp();
    await seedPipCache(store, before);
    expect(layoutsIn(before)).toEqual(['http', 'http-v2']);
    const ran = temp();
    mkdirSync(join(pipCacheOf(ran), 'http-v2'), { recursive: true });
    notePipLayouts(store, ran);
    const after = temp();
    expect(await seedPipCache(store, after)).toBe(1);
    expect(layoutsIn(after)).toEqual(['http-v2']);
    expect(readFileSync(`${pipEntryPath(join(pipCacheOf(after), 'http-v2'), url)}.body`)).toEqual(wheel);
    // A later run of an older pip adds its layout: both again.
    const old = temp();
    mkdirSync(join(pipCacheOf(old), 'http'), { recursive: true });
    notePipLayouts(store, old);
    const both = temp();
    await seedPipCache(store, both);
    expect(layoutsIn(both)).toEqual(['http', 'http-v2']);
  });

  it('offers nothing for a store entry that does not match its file or its name, and nothing from an empty store', async () => {
    const store = temp();
    expect(await seedPipCache(store, temp())).toBe(0);
    const body = Buffer.from('bytes');
    mkdirSync(join(store, 'pip', 'files'), { recursive: true });
    mkdirSync(join(store, 'pip', 'entries'), { recursive: true });
    writeFileSync(join(store, 'pip', 'files', sha256(body)), body);
    const entry = (key: string, size: number) => JSON.stringify({ key, filename: 'f-1.0-py3-none-any.whl', sha256: sha256(body), size, type: 'application/octet-stream', headers: { ...IMMUTABLE, date: new Date().toUTCString() } });
    const nameOf = (key: string) => `${createHash('sha224').update(key).digest('hex')}.json`;
    // Its size is not the file's; it sits under another key's name; it is not JSON.
    writeFileSync(join(store, 'pip', 'entries', nameOf('https://h.test/a.whl')), entry('https://h.test/a.whl', 99));
    writeFileSync(join(store, 'pip', 'entries', nameOf('https://h.test/b.whl')), entry('https://h.test/c.whl', body.length));
    writeFileSync(join(store, 'pip', 'entries', nameOf('https://h.test/d.whl')), '{');
    const home = temp();
    expect(await seedPipCache(store, home)).toBe(0);
    expect(existsSync(pipCacheOf(home))).toBe(false);
    // A whole entry whose file is no longer its hash (same size, other bytes): pip would fail the install on it.
    writeFileSync(join(store, 'pip', 'entries', nameOf('https://h.test/e.whl')), entry('https://h.test/e.whl', body.length));
    expect(await seedPipCache(store, temp())).toBe(1);
    writeFileSync(join(store, 'pip', 'files', sha256(body)), 'BYTES');
    const other = temp();
    expect(await seedPipCache(store, other)).toBe(0);
    expect(filesUnder(pipCacheOf(other))).toEqual([]);
  });
});

describe('an index that never finishes answering', () => {
  /** A server that trickles a page, sends a redirect whose body never ends, or trickles a file: each a byte at a time, forever. */
  async function endless(): Promise<{ url: string; wheel: Buffer }> {
    const wheel = Buffer.from('a wheel');
    const timers: NodeJS.Timeout[] = [];
    const server = createServer((req, res) => {
      const path = req.url ?? '/';
      if (path === '/simple/slow-page/') res.writeHead(200, { 'content-type': 'text/html' });
      else if (path === '/simple/endless-redirect/') res.writeHead(301, { location: '/elsewhere/' });
      else if (path === '/simple/slow-file/') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(page(link(`../../files/slow_file-1.0-py3-none-any.whl#sha256=${sha256(wheel)}`)));
        return;
      } else res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '1000000' });
      // Never idle long enough for a socket timeout: a request can only end by its deadline.
      const t = setInterval(() => res.write(path.includes('redirect') ? Buffer.alloc(64 * 1024) : ' '), 20);
      timers.push(t);
      res.on('close', () => clearInterval(t));
    });
    server.on('close', () => timers.forEach(clearInterval));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const s = server as Server & { closeAllConnections(): void };
    const close = s.close.bind(s);
    s.close = ((cb?: (err?: Error) => void) => {
      s.closeAllConnections();
      return close(cb);
    }) as typeof s.close;
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/simple/`, wheel };
  }

  it('a page that trickles, a redirect whose body never ends, a file that trickles: each ends when the harvest is stopped, counted as failed', async () => {
    const { url } = await endless();
    const dists: InstalledDist[] = ['slow_page', 'endless_redirect', 'slow_file'].map((name) => ({ name, version: '1.0', tags: ['py3-none-any'] }));
    const store = temp();
    const report = await fetchPipFiles(store, dists, { urls: [url] }, temp(), { signal: AbortSignal.timeout(500) });
    expect(report).toEqual({ fetched: 0, known: 0, notOnIndex: 0, failed: 3, overBudget: 0 });
    expect(filesUnder(join(store, 'pip')).filter((f) => !f.startsWith('tmp/'))).toEqual([]);
    expect(filesUnder(join(store, 'pip', 'tmp'))).toEqual([]);
  });

  it('a harvest stopped before it starts asks nothing', async () => {
    const idx = await serveIndex({});
    const controller = new AbortController();
    controller.abort();
    expect(await fetchPipFiles(temp(), [{ name: 'x', version: '1', tags: [] }], { urls: [idx.url] }, temp(), { signal: controller.signal })).toEqual({ fetched: 0, known: 0, notOnIndex: 0, failed: 0, overBudget: 0 });
    expect(idx.seen).toEqual([]);
  });
});

describe("the index's word on how long a file may be cached", () => {
  const dist = (name: string): InstalledDist => ({ name, version: '1.0', tags: ['py3-none-any'] });
  const w = (name: string) => `${name}-1.0-py3-none-any.whl`;

  it('is kept with the file and is what the seeded entry says; a file pip itself would not cache is kept but never offered', async () => {
    const bodies = Object.fromEntries(['etagged', 'short', 'nothing', 'nostore', 'expiring'].map((n) => [n, Buffer.from(`wheel of ${n}`)]));
    const headers: Record<string, Record<string, string>> = {
      etagged: { etag: '"v1"', 'last-modified': 'Tue, 01 Dec 2026 00:00:00 GMT', 'x-other': 'not kept' },
      short: { 'cache-control': 'max-age=600' },
      nothing: { 'last-modified': 'Tue, 01 Dec 2026 00:00:00 GMT' },
      nostore: { 'cache-control': 'no-store, max-age=600', etag: '"v1"' },
      expiring: { expires: 'Fri, 01 Jan 2027 00:00:00 GMT' },
    };
    const idx = await serveIndex(
      Object.fromEntries(Object.keys(bodies).map((n) => [n, page(link(`../../files/${w(n)}#sha256=${sha256(bodies[n]!)}`))])),
      Object.fromEntries(Object.keys(bodies).map((n) => [`/files/${w(n)}`, { body: bodies[n]!, headers: headers[n]! }])),
    );
    const store = temp();
    expect(await fetchPipFiles(store, Object.keys(bodies).map(dist), { urls: [idx.url] }, temp())).toEqual({ fetched: 5, known: 0, notOnIndex: 0, failed: 0, overBudget: 0 });
    const home = temp();
    expect(await seedPipCache(store, home)).toBe(3);
    const entryOf = (n: string) => pipEntryPath(join(pipCacheOf(home), 'http-v2'), `${idx.url.replace('/simple/', '/files/')}${w(n)}`);
    expect(existsSync(entryOf('nothing'))).toBe(false);
    expect(existsSync(entryOf('nostore'))).toBe(false);
    const etagged = readEntry(entryOf('etagged')).response.headers;
    expect(etagged).toEqual({ 'content-type': 'application/octet-stream', 'content-length': String(bodies.etagged!.length), etag: '"v1"', 'last-modified': 'Tue, 01 Dec 2026 00:00:00 GMT', date: etagged.date });
    expect(readEntry(entryOf('short')).response.headers['cache-control']).toBe('max-age=600');
    expect(readEntry(entryOf('expiring')).response.headers.expires).toBe('Fri, 01 Jan 2027 00:00:00 GMT');
    // What pip would not cache is not downloaded again by the next harvest either.
    const seen = idx.seen.filter((r) => r.includes('/files/')).length;
    expect(await fetchPipFiles(store, [dist('nothing')], { urls: [idx.url] }, temp())).toEqual({ fetched: 0, known: 1, notOnIndex: 0, failed: 0, overBudget: 0 });
    expect(idx.seen.filter((r) => r.includes('/files/'))).toHaveLength(seen);
  });

  it("a URL whose file the index replaced (another hash on its page) gets the new file's entry, even when the store has those bytes from another URL", async () => {
    const a = Buffer.from('first build');
    const b = Buffer.from('second build');
    const old = Buffer.from('0.9 wheel');
    let rebuilt = false;
    const server = createServer((req, res) => {
      const moving = rebuilt ? b : a;
      if (req.url === '/simple/moving/') res.end(page(link(`../../files/${w('moving')}#sha256=${sha256(moving)}`), link(`../../files/moving-0.9-py3-none-any.whl#sha256=${sha256(old)}`)));
      else if (req.url === '/simple/other/') res.end(page(link(`../../files/${w('other')}#sha256=${sha256(b)}`)));
      else if (req.url === `/files/${w('moving')}`) res.writeHead(200, IMMUTABLE).end(moving);
      else if (req.url === '/files/moving-0.9-py3-none-any.whl') res.writeHead(200, IMMUTABLE).end(old);
      else if (req.url === `/files/${w('other')}`) res.writeHead(200, IMMUTABLE).end(b);
      else res.writeHead(404).end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const index = { urls: [`http://127.0.0.1:${port}/simple/`] };
    const store = temp();
    expect(await fetchPipFiles(store, [dist('moving'), dist('other')], index, temp())).toMatchObject({ fetched: 2, failed: 0 });
    // The index now serves the second build at the first one's URL; an attempt installed 0.9, and its pip cache has an entry for that URL.
    rebuilt = true;
    const home = temp();
    const url = `http://127.0.0.1:${port}/files/${w('moving')}`;
    mkdirSync(dirname(pipEntryPath(join(pipCacheOf(home), 'http-v2'), url)), { recursive: true });
    writeFileSync(pipEntryPath(join(pipCacheOf(home), 'http-v2'), url), 'cc=4,');
    expect(await fetchPipFiles(store, [{ name: 'moving', version: '0.9', tags: ['py3-none-any'] }], index, home)).toEqual({ fetched: 2, known: 0, notOnIndex: 0, failed: 0, overBudget: 0 });
    const seeded = temp();
    await seedPipCache(store, seeded);
    expect(readFileSync(`${pipEntryPath(join(pipCacheOf(seeded), 'http-v2'), url)}.body`)).toEqual(b);
  });
});
