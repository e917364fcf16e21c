// The reader against a real HTTP server on loopback serving fixtures/docs-site, plus the ways a site can go wrong.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDocsReader, createRateLimiter, markdownVariant, parseDocsMap, USER_AGENT, type Clock, type ReaderOptions } from './index.js';

const SITE = fileURLToPath(new URL('../../../fixtures/docs-site', import.meta.url));
type Route = (req: IncomingMessage, res: ServerResponse) => void;

interface Site {
  url: string;
  port: number;
  requests: string[];
  agents: string[];
  close(): Promise<void>;
}

/** fixtures/docs-site on a free port; `routes` answer some paths differently (redirects, errors, odd bodies). */
async function serve(routes: Record<string, Route> = {}): Promise<Site> {
  const requests: string[] = [];
  const agents: string[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push(path);
    agents.push(String(req.headers['user-agent']));
    const route = routes[path];
    if (route) return route(req, res);
    let file = resolve(SITE, `.${decodeURIComponent(path)}`);
    if (file !== SITE && !file.startsWith(SITE + sep)) return void res.writeHead(403).end();
    try {
      if (statSync(file).isDirectory()) file = join(file, 'index.html');
      const type = file.endsWith('.html') ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8';
      res.writeHead(200, { 'content-type': type }).end(readFileSync(file));
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    agents,
    close: () => new Promise<void>((ok) => (server.closeAllConnections(), server.close(() => ok()))),
  };
}

const redirect = (status: number, location: string): Route => (_req, res) => void res.writeHead(status, { location }).end();
const html = (body: string, type = 'text/html; charset=utf-8'): Route => (_req, res) => void res.writeHead(200, { 'content-type': type }).end(body);

let site: Site;
let changing = '<h1>Version one</h1>';
const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'quickloop-docs-'));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  site = await serve({
    '/ref': redirect(301, '/guide/reference.html'),
    '/away': (_req, res) => void res.writeHead(302, { location: `http://localhost:${site.port}/install.html` }).end(),
    '/loop-a': redirect(302, '/loop-b'),
    '/loop-b': redirect(302, '/loop-a'),
    '/js-refresh': html('<html><head><meta http-equiv="refresh" content="0; url=javascript:alert(1)"></head><body>x</body></html>'),
    '/self-refresh': html('<html><head><meta http-equiv="refresh" content="300"><meta http-equiv="refresh" content="60; url=/self-refresh"></head><body><p>Status: green</p></body></html>'),
    '/huge': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      for (let i = 0; i < 20; i++) res.write(chunk);
      res.end();
    },
    '/bomb': (_req, res) => void res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(gzipSync(Buffer.alloc(64 * 1024 * 1024))),
    '/latin1': (_req, res) => void res.writeHead(200, { 'content-type': 'text/html; charset=iso-8859-1' }).end(Buffer.from('<p>Caf\xe9 cr\xe8me</p>', 'latin1')),
    '/latin1-meta': (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end(Buffer.from('<html><head><meta charset="windows-1252"></head><body><p>na\xefve \x93quotes\x94</p></body></html>', 'latin1')),
    '/broken': (_req, res) => void res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>oops</h1>'),
    '/changing': (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end(changing),
    '/cred-hop': (_req, res) => void res.writeHead(302, { location: `http://ada:pa55word@127.0.0.1:${site.port}/install.html` }).end(),
    '/meta-away': html('<html><head><meta http-equiv="refresh" content="0; url=https://elsewhere.test/docs"></head><body>moved</body></html>'),
    '/llms-full.txt': html('<!doctype html><html><body><div id="app"></div></body></html>'),
    '/guide.pdf': (_req, res) => void res.writeHead(200, { 'content-type': 'application/pdf' }).end(Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n', 'latin1')),
    '/untyped.pdf': (_req, res) => void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from('%PDF-1.4\nbinary\x00\x01\x02', 'latin1')),
    '/logo': (_req, res) => void res.writeHead(200).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])),
    '/raw.md': (_req, res) => void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end('# Install\n\n```sh\nnpm install greeter\n```\n'),
  });
});
afterAll(async () => {
  await site.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const reader = (o: Partial<ReaderOptions> = {}) => createDocsReader({ allow: ['127.0.0.1'], rateLimitSeconds: 0, ...o });
const LEAKS = ['script leak', 'style leak', 'json-ld', 'nav leak', 'comment leak', 'attribute-leak', 'data-track', 'Footer chrome', 'noscript leak', 'template leak', 'svg leak', 'class=', '<span'];

describe('a page with code blocks, tables, relative links and a redirect', () => {
  it('reaches the reader as Markdown with absolute links, every hop recorded, nothing of the chrome', async () => {
    const r = await reader().read(`${site.url}/ref`);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.finalUrl).toBe(`${site.url}/guide/reference.html`);
    expect(r.hops).toEqual([{ url: `${site.url}/ref`, status: 301, to: `${site.url}/guide/reference.html`, kind: 'http' }]);
    expect(r.text).toContain('# Greeter reference');
    expect(r.text).toContain(`[the install page](${site.url}/install.html)`);
    expect(r.text).toContain(`[the details](${site.url}/guide/quickstart-details.html#run)`);
    expect(r.text).toContain(`[the quickstart](${site.url}/quickstart.html)`);
    expect(r.text).toContain(`![Architecture diagram](${site.url}/guide/img/diagram.png)`);
    expect(r.text).toContain('| `--port` | 3000 | Port to listen on |');
    expect(r.text).toMatch(/```sh\nnpm install greeter\nPORT=3000 node greeter\/server.js\n```/);
    expect(r.text).toContain("```js\nimport { greet } from './greet.js';\nconsole.log(greet('Ada') && 1 < 2);\n```");
    expect(r.text).toContain('- A shell with `curl`');
    for (const leak of LEAKS) expect(r.text).not.toContain(leak);
    expect(r).toMatchObject({ page: 1, pages: 1, status: 200, from: 'fetch' });
  });

  it('follows a meta refresh inside the allow list and records it', async () => {
    const r = await reader().read(`${site.url}/guide/old-reference.html`);
    expect(r).toMatchObject({ ok: true, finalUrl: `${site.url}/guide/reference.html`, hops: [{ kind: 'meta', status: 200, to: `${site.url}/guide/reference.html` }] });
  });

  it('says who it is on every request', async () => {
    await reader().read(`${site.url}/install.html`);
    expect(USER_AGENT).toMatch(/^quickloop\/\d+\.\d+\.\d+ \(\+documentation agent-readiness testing\)$/);
    expect(new Set(site.agents)).toEqual(new Set([USER_AGENT]));
  });
});

describe('robots.txt', () => {
  it('refuses a disallowed page without requesting it, and reads robots.txt once per origin', async () => {
    const r = reader();
    const before = site.requests.length;
    const refused = await r.read(`${site.url}/private/notes.html`);
    expect(refused).toMatchObject({ ok: false, reason: 'robots', from: 'policy' });
    if (!refused.ok) expect(refused.error).toContain('robots.txt');
    expect(await r.read(`${site.url}/install.html`)).toMatchObject({ ok: true });
    expect(site.requests.slice(before)).toEqual(['/robots.txt', '/install.html']);
  });

  it('a group for quickloop takes the place of the * group', async () => {
    const own = await serve({ '/robots.txt': html('User-agent: *\nDisallow: /\n\nUser-agent: quickloop\nDisallow: /private/\n', 'text/plain') });
    try {
      expect(await reader().read(`${own.url}/install.html`)).toMatchObject({ ok: true });
      expect(await reader().read(`${own.url}/private/notes.html`)).toMatchObject({ ok: false, reason: 'robots' });
    } finally {
      await own.close();
    }
  });

  it('--ignore-robots reads it and says so', async () => {
    expect(await reader({ ignoreRobots: true }).read(`${site.url}/private/notes.html`)).toMatchObject({ ok: true, robotsIgnored: true });
  });

  it('a robots.txt that is an HTML app shell, or a 4xx, allows; a 5xx disallows; 5 MB is read as its first 500 KiB', async () => {
    const shell = await serve({ '/robots.txt': html('<!doctype html><html><body>Disallow: /</body></html>') });
    const big = await serve({ '/robots.txt': html(`User-agent: *\nDisallow: /private/\n${'# padding\n'.repeat(500_000)}`, 'text/plain') });
    const down = await serve({ '/robots.txt': (_q, res) => void res.writeHead(503).end() });
    try {
      expect(await reader().read(`${shell.url}/private/notes.html`)).toMatchObject({ ok: true });
      expect(await reader().read(`${big.url}/private/notes.html`)).toMatchObject({ ok: false, reason: 'robots' });
      expect(await reader().read(`${big.url}/install.html`)).toMatchObject({ ok: true });
      expect(await reader().read(`${down.url}/install.html`)).toMatchObject({ ok: false, reason: 'robots' });
      expect(down.requests).toEqual(['/robots.txt']);
    } finally {
      await Promise.all([shell.close(), big.close(), down.close()]);
    }
  });
});

describe('what the reader refuses or reports', () => {
  it('a non-2xx page is an error that says its status', async () => {
    expect(await reader().read(`${site.url}/missing.html`)).toMatchObject({ ok: false, reason: 'http_status', status: 404, from: 'fetch', error: `HTTP 404 Not Found: ${site.url}/missing.html` });
    expect(await reader().read(`${site.url}/broken`)).toMatchObject({ ok: false, status: 500 });
  });

  it('a redirect to a host off the list is refused before it is requested', async () => {
    const before = site.requests.length;
    const r = await reader().read(`${site.url}/away`);
    expect(r).toMatchObject({ ok: false, reason: 'allow_list', from: 'policy', status: 302 });
    if (!r.ok) expect(r.error).toBe(`redirected to http://localhost:${site.port}/install.html, outside the docs allow list (127.0.0.1)`);
    expect(site.requests.slice(before)).toEqual(['/robots.txt', '/away']);
  });

  it('a meta refresh off the list, and a hop that carries credentials, are refused and leak nothing', async () => {
    expect(await reader().read(`${site.url}/meta-away`)).toMatchObject({ ok: false, reason: 'allow_list', hops: [] });
    const cred = await reader().read(`${site.url}/cred-hop`);
    expect(cred).toMatchObject({ ok: false, reason: 'credentials', from: 'policy' });
    expect(JSON.stringify(cred)).not.toContain('pa55word');
  });

  it('a host off the list is never requested at all', async () => {
    const before = site.requests.length;
    expect(await reader({ allow: ['docs.example.test'] }).read(`${site.url}/install.html`)).toMatchObject({ ok: false, reason: 'allow_list' });
    expect(site.requests.length).toBe(before);
  });

  it('a redirect loop, a meta refresh to javascript:, and more than five hops', async () => {
    expect(await reader().read(`${site.url}/loop-a`)).toMatchObject({ ok: false, reason: 'redirect_loop', hops: [{ to: `${site.url}/loop-b` }, { to: `${site.url}/loop-a` }] });
    const js = await reader().read(`${site.url}/js-refresh`);
    expect(js).toMatchObject({ ok: false, reason: 'bad_redirect', from: 'policy' });
    const chain: Record<string, Route> = {};
    for (let i = 0; i < 8; i++) chain[`/c${i}`] = redirect(302, `/c${i + 1}`);
    const long = await serve(chain);
    try {
      expect(await reader().read(`${long.url}/c0`)).toMatchObject({ ok: false, reason: 'too_many_redirects' });
      expect(long.requests.filter((p) => p.startsWith('/c'))).toHaveLength(6);
    } finally {
      await long.close();
    }
  });

  it('a page that refreshes itself is a page, not a loop', async () => {
    const r = await reader().read(`${site.url}/self-refresh`);
    expect(r).toMatchObject({ ok: true, hops: [] });
    if (r.ok) expect(r.text).toBe('Status: green');
  });

  it('a 20 MB body and a gzip bomb are refused at the cap, not read into memory', async () => {
    expect(await reader().read(`${site.url}/huge`)).toMatchObject({ ok: false, reason: 'too_large', status: 200 });
    expect(await reader().read(`${site.url}/bomb`)).toMatchObject({ ok: false, reason: 'too_large' });
  });

  it('a PDF, an image or any other binary answer is an error that says what it was, never bytes given to the model as text', async () => {
    expect(await reader().read(`${site.url}/guide.pdf`)).toMatchObject({ ok: false, reason: 'not_text', status: 200, error: `not a text page (application/pdf): ${site.url}/guide.pdf; the reader gives the model HTML, Markdown or plain text` });
    expect(await reader().read(`${site.url}/untyped.pdf`)).toMatchObject({ ok: false, reason: 'not_text', error: expect.stringContaining('(a PDF)') });
    expect(await reader().read(`${site.url}/logo`)).toMatchObject({ ok: false, reason: 'not_text', error: expect.stringContaining('(a PNG image)') });
    // Markdown a server labels as octet-stream is still text.
    expect(await reader().read(`${site.url}/raw.md`)).toMatchObject({ ok: true, text: expect.stringContaining('npm install greeter') });
  });

  it('a page in another charset is decoded as it declares (header or meta)', async () => {
    const a = await reader().read(`${site.url}/latin1`);
    const b = await reader().read(`${site.url}/latin1-meta`);
    expect(a.ok && a.text).toBe('Café crème');
    expect(b.ok && b.text).toBe('naïve “quotes”');
  });

  it('a URL with credentials is refused, requested nowhere, and the secret appears in no result', async () => {
    const before = site.requests.length;
    const r = await reader().read(`http://ada:s3cret@127.0.0.1:${site.port}/install.html`);
    expect(r).toMatchObject({ ok: false, reason: 'credentials', url: `http://127.0.0.1:${site.port}/install.html` });
    expect(JSON.stringify(r)).not.toContain('s3cret');
    expect(site.requests.length).toBe(before);
    const relative = await reader().read('not a url with user:pw@host');
    expect(relative).toMatchObject({ ok: false, reason: 'invalid_url' });
    expect(await reader().read('file:///etc/passwd')).toMatchObject({ ok: false, reason: 'invalid_url' });
  });
});

describe('paging', () => {
  it('splits a long page into numbered parts that tell the model how to get the next, and loses nothing', async () => {
    const r = reader({ pageChars: 300 });
    const first = await r.read(`${site.url}/guide/reference.html`);
    if (!first.ok) throw new Error(first.error);
    expect(first.pages).toBeGreaterThan(2);
    expect(first.text).toMatch(new RegExp(`\\n\\n---\\npage 1 of ${first.pages} — call read_docs with page: 2 for the next part$`));
    const parts = [first.text];
    for (let p = 2; p <= first.pages; p++) {
      const part = await r.read(`${site.url}/guide/reference.html`, p);
      if (!part.ok) throw new Error(part.error);
      parts.push(part.text);
    }
    expect(parts.at(-1)).toMatch(new RegExp(`page ${first.pages} of ${first.pages} \\(the last part\\)$`));
    const body = parts.map((t) => t.replace(/\n\n---\npage \d+ of \d+.*$/, '')).join('');
    expect(body.replace(/\s+/g, '')).toBe(first.markdown.replace(/\s+/g, ''));
    expect(await r.read(`${site.url}/guide/reference.html`, first.pages + 1)).toMatchObject({ ok: false, reason: 'no_such_page' });
    expect(await r.read(`${site.url}/guide/reference.html`, 0)).toMatchObject({ ok: false, reason: 'no_such_page' });
  });

  it('cuts a part with no line end to cut at between characters, never inside one (an emoji is two UTF-16 units)', async () => {
    const line = `x${'🌍'.repeat(400)}`;
    const odd = await serve({ '/emoji.html': (_q, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<p>${line}</p>`) });
    try {
      const r = reader({ pageChars: 300 });
      const first = await r.read(`${odd.url}/emoji.html`);
      if (!first.ok) throw new Error(first.error);
      const parts = [first.text];
      for (let p = 2; p <= first.pages; p++) {
        const part = await r.read(`${odd.url}/emoji.html`, p);
        if (!part.ok) throw new Error(part.error);
        parts.push(part.text);
      }
      // Half of a pair is not text: the model API refuses a request that carries one.
      for (const t of parts) expect(t.isWellFormed(), JSON.stringify(t.slice(0, 40))).toBe(true);
      expect(parts.map((t) => t.replace(/\n\n---\npage \d+ of \d+.*$/, '')).join('')).toBe(first.markdown.trim());
    } finally {
      await odd.close();
    }
  });
});

/** A clock whose sleeps are held until the test lets them go: a wait is observed, never timed. */
function heldClock() {
  const sleeps: { ms: number; release: () => void }[] = [];
  const clock: Clock = { now: () => 0, sleep: (ms) => new Promise<void>((release) => sleeps.push({ ms, release })) };
  return { clock, sleeps };
}

describe('the per-host rate limit', () => {
  it('spaces requests to one host and never makes another host wait', async () => {
    const { clock, sleeps } = heldClock();
    const limiter = createRateLimiter(1, clock);
    await limiter.acquire('a');
    const second = limiter.acquire('a');
    const third = limiter.acquire('a');
    await limiter.acquire('b');
    expect(sleeps.map((s) => s.ms)).toEqual([1000, 2000]);
    for (const s of sleeps) s.release();
    await Promise.all([second, third]);
  });

  it('a read of one host completes while a read of another host waits for its slot', async () => {
    const { clock, sleeps } = heldClock();
    const r = createDocsReader({ allow: ['127.0.0.1', 'localhost'], ignoreRobots: true, clock, rateLimitSeconds: 1 });
    expect(await r.read(`${site.url}/install.html`)).toMatchObject({ ok: true });
    let waitingDone = false;
    const waiting = r.read(`${site.url}/quickstart.html`).then((x) => ((waitingDone = true), x));
    const other = await r.read(`http://localhost:${site.port}/install.html`);
    expect(other).toMatchObject({ ok: true });
    expect(waitingDone).toBe(false);
    expect(sleeps.map((s) => s.ms)).toEqual([1000]);
    sleeps[0]!.release();
    expect(await waiting).toMatchObject({ ok: true });
  });
});

describe('the cache', () => {
  afterEach(() => {
    changing = '<h1>Version one</h1>';
  });

  it('serves a cached page without the network, --refresh notices a change, --offline reads only the cache', async () => {
    const dir = tmp();
    const url = `${site.url}/changing`;
    const first = await reader({ cacheDir: dir }).read(url);
    expect(first).toMatchObject({ ok: true, from: 'fetch', text: '# Version one' });
    const before = site.requests.length;
    const cached = await reader({ cacheDir: dir }).read(url);
    expect(cached).toMatchObject({ ok: true, from: 'cache', text: '# Version one', sha256: first.ok ? first.sha256 : '' });
    expect(site.requests.length).toBe(before);

    changing = '<h1>Version two</h1>';
    const refreshed = await reader({ cacheDir: dir, refresh: true }).read(url);
    expect(refreshed).toMatchObject({ ok: true, from: 'fetch', text: '# Version two', changed: { previousSha256: first.ok ? first.sha256 : '' } });
    const again = await reader({ cacheDir: dir, refresh: true }).read(url);
    expect(again.ok && again.changed).toBeUndefined();

    const offline = reader({ cacheDir: dir, offline: true });
    const mark = site.requests.length;
    expect(await offline.read(url)).toMatchObject({ ok: true, from: 'cache', text: '# Version two' });
    expect(await offline.read(`${site.url}/install.html`)).toMatchObject({ ok: false, from: 'cache', reason: 'offline_miss' });
    expect(site.requests.length).toBe(mark);
  });

  it('a torn cache entry is a miss, not a crash', async () => {
    const dir = tmp();
    const url = `${site.url}/install.html`;
    await reader({ cacheDir: dir }).read(url);
    const { readdirSync, writeFileSync } = await import('node:fs');
    const sub = readdirSync(dir)[0]!;
    writeFileSync(join(dir, sub, readdirSync(join(dir, sub))[0]!), '{"url": tor');
    expect(await reader({ cacheDir: dir, offline: true }).read(url)).toMatchObject({ ok: false, reason: 'offline_miss' });
  });
});

describe('affordances', () => {
  it('--affordances none withholds llms.txt and .md variants, but never a page on the route', async () => {
    const none = reader({ affordances: 'none', route: [`${site.url}/llms.txt`] });
    expect(await none.read(`${site.url}/llms.txt`)).toMatchObject({ ok: true });
    expect(await none.read(`${site.url}/llms-full.txt`)).toMatchObject({ ok: false, reason: 'affordance_withheld', from: 'policy' });
    expect(await none.read(`${site.url}/install.html.md`)).toMatchObject({ ok: false, reason: 'affordance_withheld' });
    expect(await reader().read(`${site.url}/llms.txt`)).toMatchObject({ ok: true });
  });

  it('--probe-affordances records presence and sizes, with the .md variant of a root URL computed right', async () => {
    const probes = await reader().probe(`${site.url}/`);
    expect(probes).toEqual([
      { kind: 'llms.txt', url: `${site.url}/llms.txt`, present: true, status: 200, bytes: statSync(join(SITE, 'llms.txt')).size },
      { kind: 'llms-full.txt', url: `${site.url}/llms-full.txt`, present: false, status: 200, bytes: expect.any(Number), note: 'served HTML where a machine-readable file was expected' },
      { kind: 'md', url: `${site.url}/index.html.md`, present: false, status: 404, note: `HTTP 404 Not Found: ${site.url}/index.html.md` },
    ]);
    expect(markdownVariant('https://d.test')).toBe('https://d.test/index.html.md');
    expect(markdownVariant('https://d.test/guide/start?x=1#top')).toBe('https://d.test/guide/start.md');
    expect(markdownVariant('https://d.test/guide/')).toBe('https://d.test/guide/index.html.md');
  });
});

describe('--docs-map', () => {
  it('goes through the same pipeline: Markdown, meta refresh, paging, affordances', async () => {
    const maps = [parseDocsMap(`https://docs.greeter.test/=${SITE}`, '/')];
    const r = createDocsReader({ allow: ['docs.greeter.test'], maps, affordances: 'none', pageChars: 300 });
    const page = await r.read('https://docs.greeter.test/guide/old-reference.html');
    expect(page).toMatchObject({ ok: true, from: 'map', finalUrl: 'https://docs.greeter.test/guide/reference.html', hops: [{ kind: 'meta' }] });
    if (page.ok) {
      expect(page.markdown).toContain('[the install page](https://docs.greeter.test/install.html)');
      expect(page.pages).toBeGreaterThan(1);
    }
    expect(await r.read('https://docs.greeter.test/llms.txt')).toMatchObject({ ok: false, reason: 'affordance_withheld' });
    expect(await r.read('https://docs.greeter.test/nope.html')).toMatchObject({ ok: false, from: 'map', status: 404, reason: 'not_found' });
  });
});
