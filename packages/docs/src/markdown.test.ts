// The HTML converter on its own: what it keeps, what it drops, and that the embedded mdream is the installed one.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { absoluteHref, htmlToMarkdown } from './markdown.js';
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

  it('embeds the mdream that is installed', () => {
    const require = createRequire(import.meta.url);
    const dir = join(dirname(require.resolve('mdream/wasm/mdream_edge.js')), '..');
    const wasm = readFileSync(join(dir, 'wasm', 'mdream_edge_bg.wasm'));
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version).toBe(MDREAM_VERSION);
    expect(createHash('sha256').update(wasm).digest('hex'), 'run node packages/docs/scripts/embed-wasm.mjs').toBe(MDREAM_WASM_SHA256);
  });
});
