// HTML to the Markdown an agent reads (mdream): headings, lists, tables and fenced code with its language kept, links made absolute, chrome dropped.
import { htmlToMarkdownResult, initSync } from 'mdream/wasm/mdream_edge.js';
import { MDREAM_WASM_BASE64 } from './mdream-wasm.generated.js';
import { decodeEntities, encodeAttr, parseAttrs, scanStartTags } from './tags.js';

/** Elements whose content is never text for a reader: code, styling, embedded media, forms and site chrome. */
export const DROPPED_ELEMENTS = ['head', 'script', 'style', 'noscript', 'template', 'svg', 'canvas', 'iframe', 'object', 'embed', 'nav', 'footer', 'aside', 'form', 'button', 'select', 'input', 'textarea', 'dialog'];

/**
 * An href resolved against the page's final URL, or undefined when it is not one a reader can follow
 * (`javascript:`, `data:` or unparseable). Credentials in a link are dropped: the page text reaches a
 * model's context.
 */
export function absoluteHref(href: string, base: string): string | undefined {
  let url: URL;
  try {
    url = new URL(decodeEntities(href).trim(), base);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:' && url.protocol !== 'mailto:') return undefined;
  url.username = '';
  url.password = '';
  return url.href;
}

const LINK_TAGS = new Set(['a', 'img', 'base']);

/**
 * Every link and image target rewritten as an absolute URL (relative ones against the page's final URL,
 * or its `<base href>`), and unfollowable ones removed, before mdream sees the page: mdream resolves
 * against an origin only, so `guide/a.html` under `/docs/` would lose its folder.
 */
export function resolveLinks(html: string, pageUrl: string): string {
  const tags: { start: number; end: number; name: string; attrs: Map<string, string> }[] = [];
  let base = pageUrl;
  let baseSeen = false;
  scanStartTags(html, LINK_TAGS, (tag) => {
    const attrs = parseAttrs(tag.attrs);
    if (tag.name === 'base') {
      const href = attrs.get('href');
      if (!baseSeen && href !== undefined) base = absoluteHref(href, pageUrl) ?? pageUrl;
      baseSeen = true;
      return;
    }
    tags.push({ start: tag.start, end: tag.end, name: tag.name, attrs });
  });
  const out: string[] = [];
  let at = 0;
  for (const tag of tags) {
    out.push(html.slice(at, tag.start), `<${tag.name}`);
    for (const [key, value] of tag.attrs) {
      if (key === 'href' || key === 'src') {
        const target = absoluteHref(value, base);
        if (target !== undefined) out.push(` ${key}="${encodeAttr(target)}"`);
      } else out.push(` ${key}="${encodeAttr(decodeEntities(value))}"`);
    }
    out.push('>');
    at = tag.end;
  }
  out.push(html.slice(at));
  return out.join('');
}

let ready = false;

/** Markdown of an HTML page whose final URL is `pageUrl` (relative links resolve against it). */
export function htmlToMarkdown(html: string, pageUrl: string): string {
  if (!ready) {
    // Compiled on first use, so a run that reads no HTML never pays for it.
    initSync({ module: Buffer.from(MDREAM_WASM_BASE64, 'base64') });
    ready = true;
  }
  const result = htmlToMarkdownResult(resolveLinks(html, pageUrl), { plugins: { filter: { exclude: DROPPED_ELEMENTS } } }) as { markdown?: string };
  // Line by line: a `[ \t]+$` regex over the whole text backtracks quadratically on a long run of spaces.
  return (result.markdown ?? '')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
