// --docs-map parsing and mapping, and the meta-refresh finder, on their own.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { UsageError } from '@quickloop/cli-kit';
import { mappedFile, parseDocsMap } from './docs-map.js';
import { metaRefresh } from './http.js';

const SITE = fileURLToPath(new URL('../../../fixtures/docs-site', import.meta.url));

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

describe('metaRefresh', () => {
  it('finds the target in either attribute order, quoted or not, and not in a comment or script', () => {
    expect(metaRefresh('<meta http-equiv="refresh" content="0;URL=\'/next\'">')).toBe('/next');
    expect(metaRefresh("<META CONTENT='5; url=https://x.test/' HTTP-EQUIV=Refresh>")).toBe('https://x.test/');
    expect(metaRefresh('<meta name="viewport" content="width=device-width">')).toBeUndefined();
    expect(metaRefresh('<!-- <meta http-equiv="refresh" content="0; url=/old"> -->')).toBeUndefined();
    expect(metaRefresh('<script>document.write(\'<meta http-equiv="refresh" content="0; url=/x">\')</script>')).toBeUndefined();
  });
});
