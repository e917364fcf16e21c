// HTML to Markdown: pages/s of each candidate library on the fixture site and a generated 1 MB page,
// and whether its output keeps every link (absolute), table and code block. The reader keeps the
// fastest of those that keep everything; `node bench/benchmarks/html-markdown.mjs` prints the table alone.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../helpers.mjs';

const require = createRequire(join(ROOT, 'packages/docs/package.json'));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { NodeHtmlMarkdown } = await load('node-html-markdown');
const TurndownService = (await load('turndown')).default;
const { gfm } = await load('@joplin/turndown-plugin-gfm');
const docs = await import(pathToFileURL(join(ROOT, 'packages/docs/dist/markdown.js')).href);

const DROP = ['script', 'style', 'noscript', 'template', 'svg', 'nav', 'footer', 'aside', 'iframe', 'form', 'button', 'head'];

function sitePages() {
  const dir = join(ROOT, 'fixtures/docs-site');
  const out = [];
  const walk = (d) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (f.endsWith('.html')) out.push({ url: `http://127.0.0.1:8000/${p.slice(dir.length + 1)}`, html: readFileSync(p, 'utf8') });
    }
  };
  walk(dir);
  return out;
}

/** About 1 MB of docs: sections of prose with relative links, a table and a fenced code block each. */
function bigPage() {
  const parts = ['<!doctype html><html><head><title>big</title><script>x()</script></head><body><main><h1>Big reference</h1>'];
  for (let i = 0; parts.join('').length < 1_100_000 && i < 100_000; i++) {
    const chunk = [];
    for (let j = 0; j < 40; j++, i++) {
      chunk.push(`<h2>Section ${i}</h2><p>Read <a href="../ref/${i}.html">part ${i}</a> and <a href="/abs/${i}">the absolute ${i}</a> for more.</p>`,
        `<table><thead><tr><th>k</th><th>v</th></tr></thead><tbody><tr><td>key${i}</td><td>${i}</td></tr></tbody></table>`,
        `<pre><code class="language-sh">echo step-${i} &amp;&amp; ls</code></pre><ul><li>item ${i}</li><li>more ${i}</li></ul>`);
    }
    parts.push(chunk.join(''));
  }
  parts.push('</main></body></html>');
  return { url: 'http://127.0.0.1:8000/guide/big.html', html: parts.join('') };
}

/** What a faithful output must contain, read off the HTML itself. */
function expected(page) {
  const links = [...page.html.matchAll(/<a\b[^>]*href="([^"]+)"/g)].map((m) => new URL(m[1].replace(/&amp;/g, '&'), page.url).href);
  const inDropped = page.html.replace(/<(nav|footer|script|style|template|noscript|svg)\b[\s\S]*?<\/\1>|<!--[\s\S]*?-->/g, '');
  const kept = [...inDropped.matchAll(/<a\b[^>]*href="([^"]+)"/g)].map((m) => new URL(m[1], page.url).href);
  return {
    links: new Set(kept.length ? kept : links),
    tables: (inDropped.match(/<table\b/g) ?? []).length,
    code: (inDropped.match(/<pre\b/g) ?? []).length,
    langs: [...inDropped.matchAll(/<pre\b[^>]*>\s*<code class="language-([\w-]+)"/g)].map((m) => m[1]),
  };
}

function faithful(md, page) {
  const e = expected(page);
  const missing = [...e.links].filter((l) => !md.includes(`](${l}`));
  const tables = (md.match(/^\|(\s*:?-{3,}:?\s*\|)+\s*$/gm) ?? []).length;
  const fences = (md.match(/^```/gm) ?? []).length / 2;
  const langs = [...md.matchAll(/^```([\w-]+)$/gm)].map((m) => m[1]);
  const langOk = e.langs.every((l) => langs.includes(l));
  return { links: missing.length === 0, tables: tables >= e.tables, code: fences >= e.code && langOk, missing: missing.slice(0, 2) };
}

const nhm = new NodeHtmlMarkdown({ ignore: DROP, codeFence: '```', bulletMarker: '-', useLinkReferenceDefinitions: false });
const td = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
td.use(gfm);
td.remove(DROP);

// Each library gets the same link pass (relative hrefs made absolute) that the reader applies, so
// what is compared is the conversion: tables, code blocks and every link kept through it.
const linked = (p) => docs.resolveLinks(p.html, p.url);
export const LIBRARIES = [
  { name: 'node-html-markdown 2.0.0', convert: (p) => nhm.translate(linked(p)) },
  { name: 'turndown 7.2.5 + @joplin/turndown-plugin-gfm 1.0.68', convert: (p) => td.turndown(linked(p)) },
  { name: 'mdream 1.7.2 (WebAssembly), as the reader ships it', convert: (p) => docs.htmlToMarkdown(p.html, p.url) },
];

const corpus = [...sitePages(), bigPage()];

function measure(lib) {
  const verdict = corpus.map((p) => faithful(lib.convert(p), p));
  const keeps = verdict.every((v) => v.links && v.tables && v.code);
  const rate = (pages) => {
    const t0 = performance.now();
    let n = 0;
    while (performance.now() - t0 < 1500) for (const p of pages) (lib.convert(p), (n += 1));
    return n / ((performance.now() - t0) / 1000);
  };
  return { name: lib.name, keeps, verdict, site_pages_per_s: rate(corpus.slice(0, -1)), big_pages_per_s: rate(corpus.slice(-1)) };
}

export default LIBRARIES.map((lib) => ({
  name: `html-markdown: ${lib.name}, fixture site + 1 MB page`,
  iterations: 2,
  target: { min_rate: 1, unit: 'pages' },
  setup() {
    const v = corpus.map((p) => faithful(lib.convert(p), p));
    process.stderr.write(`  ${lib.name}: keeps links ${v.every((x) => x.links)}, tables ${v.every((x) => x.tables)}, code ${v.every((x) => x.code)}\n`);
  },
  baseline: { name: 'tag strip (regex)', run: () => corpus.forEach((p) => p.html.replace(/<[^>]+>/g, '')) },
  candidate: { name: lib.name, run: () => (corpus.forEach((p) => lib.convert(p)), { units: corpus.length }) },
}));

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stderr.write(`corpus: ${corpus.length - 1} fixture pages + a ${(corpus.at(-1).html.length / 1e6).toFixed(2)} MB page\n`);
  for (const lib of LIBRARIES) {
    const m = measure(lib);
    const why = m.verdict.map((v, i) => (v.links && v.tables && v.code ? '' : `${corpus[i].url.split('/').pop()}: links ${v.links} tables ${v.tables} code ${v.code} ${v.missing.join(' ')}`)).filter(Boolean);
    process.stdout.write(`${JSON.stringify({ library: m.name, keeps_everything: m.keeps, site_pages_per_s: Math.round(m.site_pages_per_s), big_page_per_s: +m.big_pages_per_s.toFixed(2), misses: why })}\n`);
  }
}
