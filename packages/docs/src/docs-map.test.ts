import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '@quickloop/cli-kit';
import { serveDocs, type DocsServer } from '../testing/docs-server.js';
import { headTail, MAX_PAGE_CHARS, readDocsPage } from './client.js';
import { mappedFile, parseDocsMap } from './docs-map.js';
import { htmlToText } from './html-text.js';

const SITE = fileURLToPath(new URL('../../../../fixtures/docs-site', import.meta.url));

describe('--docs-map', () => {
  it('parses URL_PREFIX=DIR and normalises the prefix to end in /', () => {
    expect(parseDocsMap(`https://docs.greeter.test=${SITE}`, '/')).toEqual({ prefix: 'https://docs.greeter.test/', dir: SITE });
  });

  it.each([
    ['no-equals-sign', 'expected URL_PREFIX=DIR'],
    [`not a url=${SITE}`, 'is not an absolute URL'],
    [`ftp://x.test/=${SITE}`, 'only http(s) URLs'],
    ['https://x.test/=/no/such/folder', 'is not a folder'],
  ])('refuses %s with a usage error naming the problem', (spec, message) => {
    expect(() => parseDocsMap(spec, '/')).toThrow(UsageError);
    expect(() => parseDocsMap(spec, '/')).toThrow(message);
  });

  it('maps by the longest prefix and never outside the folder', () => {
    const maps = [parseDocsMap(`https://d.test/=${SITE}`, '/'), parseDocsMap(`https://d.test/v2/=${tmpdir()}`, '/')];
    expect(mappedFile('https://d.test/install.html?x=1#top', maps)?.file).toBe(join(SITE, 'install.html'));
    expect(mappedFile('https://d.test/v2/a.html', maps)?.file).toBe(join(tmpdir(), 'a.html'));
    expect(mappedFile('https://d.test/..%2F..%2F..%2Fetc%2Fpasswd', maps)).toBeUndefined();
    expect(mappedFile('https://d.test/%2Fetc%2Fpasswd', maps)).toBeUndefined();
    expect(mappedFile('https://other.test/install.html', maps)).toBeUndefined();
  });
});

describe('htmlToText', () => {
  it('drops scripts, keeps code blocks verbatim and link targets', () => {
    const text = htmlToText('<p>See <a href="/guide">the guide</a>.</p><script>var x=1</script><pre><code>a  &amp;&amp;\n  b</code></pre><p>end&nbsp;</p>');
    expect(text).toBe('See the guide (/guide).\n\na  &&\n  b\n\nend');
  });
});

describe('headTail', () => {
  it('keeps the first and last halves around a marker', () => {
    const cut = headTail('a'.repeat(10) + 'b'.repeat(10), 10);
    expect(cut.truncated).toBe(true);
    expect(cut.text.startsWith('aaaaa\n[...')).toBe(true);
    expect(cut.text.endsWith('...]\nbbbbb')).toBe(true);
  });
});

describe('readDocsPage', () => {
  let server: DocsServer;
  let big: string;
  beforeAll(async () => {
    big = mkdtempSync(join(tmpdir(), 'qs-agent-docs-'));
    writeFileSync(join(big, 'big.txt'), 'x'.repeat(MAX_PAGE_CHARS + 500));
    server = await serveDocs(SITE, { redirects: { '/moved.html': 'http://localhost:9/elsewhere' } });
  });
  afterAll(async () => {
    await server.close();
    rmSync(big, { recursive: true, force: true });
  });
  const allow = ['127.0.0.1', 'docs.greeter.test'];

  it('reads a mapped page as text, hashing the text before truncation', async () => {
    const maps = [parseDocsMap(`https://docs.greeter.test/=${SITE}`, '/')];
    const page = await readDocsPage('https://docs.greeter.test/quickstart.html', { maps, allow });
    expect(page.ok).toBe(true);
    if (!page.ok) return;
    expect(page.from).toBe('map');
    expect(page.text).toContain('cat > greeter/server.js');
    expect(page.text).not.toContain('analytics');
    expect(page.sha256).toBe(createHash('sha256').update(page.text).digest('hex'));
  });

  it('says which mapped file is missing', async () => {
    const maps = [parseDocsMap(`https://docs.greeter.test/=${SITE}`, '/')];
    const page = await readDocsPage('https://docs.greeter.test/nope.html', { maps, allow });
    expect(page).toMatchObject({ ok: false, from: 'map', status: 404 });
    if (!page.ok) expect(page.error).toContain('nope.html');
  });

  it('fetches over HTTP from a real server and reports a 404 as an error with its status', async () => {
    const ok = await readDocsPage(`${server.url}/install.html`, { maps: [], allow });
    expect(ok).toMatchObject({ ok: true, from: 'fetch', status: 200 });
    const missing = await readDocsPage(`${server.url}/missing.html`, { maps: [], allow });
    expect(missing).toMatchObject({ ok: false, from: 'fetch', status: 404, error: 'HTTP 404 Not Found' });
  });

  it('refuses hosts off the allow list, before any request, and redirects that leave it', async () => {
    const before = server.requests.length;
    const off = await readDocsPage(`${server.url}/install.html`, { maps: [], allow: ['docs.greeter.test'] });
    expect(off).toMatchObject({ ok: false, from: 'policy' });
    expect(server.requests.length).toBe(before);
    const moved = await readDocsPage(`${server.url}/moved.html`, { maps: [], allow });
    expect(moved).toMatchObject({ ok: false, from: 'policy' });
    if (!moved.ok) expect(moved.error).toContain('outside the docs allow list');
  });

  it('truncates a long page head+tail to the page cap', async () => {
    const maps = [parseDocsMap(`https://docs.greeter.test/=${big}`, '/')];
    const page = await readDocsPage('https://docs.greeter.test/big.txt', { maps, allow });
    expect(page).toMatchObject({ ok: true, truncated: true, originalChars: MAX_PAGE_CHARS + 500 });
  });
});
