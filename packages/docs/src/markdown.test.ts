// The HTML converter on its own: what it keeps, what it drops, and that the embedded mdream is the installed one.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { metaRefresh } from './http.js';
import { absoluteHref, htmlToMarkdown, resolveLinks } from './markdown.js';
import { MDREAM_VERSION, MDREAM_WASM_SHA256 } from './mdream-wasm.generated.js';

describe('htmlToMarkdown', () => {
  it('resolves links against the final URL and <base>, drops unfollowable targets and credentials', () => {
    const md = htmlToMarkdown(
      '<p><a href="javascript:alert(1)">js</a> <a href="//cdn.test/a" title="a>b">proto</a> <a href="a&amp;b.html?x=1&amp;y=2">amp</a> <a href="https://u:pw@x.test/p">cred</a></p>',
      'https://d.test/docs/p.html',
    );
    expect(md).toBe('js [proto](https://cdn.test/a "a>b") [amp](https://d.test/docs/a&b.html?x=1&y=2) [cred](https://x.test/p)');
    expect(htmlToMarkdown('<base href="/v2/"><a href="x.html">x</a>', 'https://d.test/docs/p.html')).toBe('[x](https://d.test/v2/x.html)');
    expect(absoluteHref('data:text/html,hi', 'https://d.test/')).toBeUndefined();
  });

  it('keeps code that looks like markup as code, and fences code that holds a fence', () => {
    expect(htmlToMarkdown('<pre><code>&lt;a href="/x"&gt;\n```\n</code></pre>', 'https://d.test/')).toMatch(/^````+\n<a href="\/x">\n```\n````+$/);
  });

  it('never lets a comment, a script, a style or an attribute through', () => {
    const md = htmlToMarkdown('<div onclick="leak1()" data-x="leak2"><!-- leak3 --><style>.leak4{}</style><script>leak5</script><p>kept</p></div>', 'https://d.test/');
    expect(md).toBe('kept');
  });

  it('a hostile page (unterminated quotes, tags and comments, deep nesting, a long run of spaces) converts in one pass', () => {
    // Attribute regexes backtracked quadratically on these, and indexing a concatenated string char by
    // char was as slow: minutes for a few hundred KB, with the agent's whole event loop held.
    expect(resolveLinks("<a '".repeat(200_000), 'https://d.test/')).toHaveLength(800_000);
    expect(metaRefresh("<meta '".repeat(200_000))).toBeUndefined();
    expect(metaRefresh('<!--'.repeat(200_000))).toBeUndefined();
    expect(htmlToMarkdown(`<p>a${' '.repeat(2_000_000)}b</p>`, 'https://d.test/')).toBe('a b');
    expect(htmlToMarkdown(`${'<div>'.repeat(100_000)}deep`, 'https://d.test/')).toBe('deep');
  });

  it('a quote that opens no attribute value, and a ">" inside one, do not derail the link pass', () => {
    expect(htmlToMarkdown(`<p>it's <a href="x.html" title="a > b">x</a> and <a href='y.html'>y</a></p>`, 'https://d.test/d/')).toBe(
      `it's [x](https://d.test/d/x.html "a > b") and [y](https://d.test/d/y.html)`,
    );
  });

  it('embeds the mdream that is installed', () => {
    const require = createRequire(import.meta.url);
    const dir = join(dirname(require.resolve('mdream/wasm/mdream_edge.js')), '..');
    const wasm = readFileSync(join(dir, 'wasm', 'mdream_edge_bg.wasm'));
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version).toBe(MDREAM_VERSION);
    expect(createHash('sha256').update(wasm).digest('hex'), 'run node packages/docs/scripts/embed-wasm.mjs').toBe(MDREAM_WASM_SHA256);
  });
});
