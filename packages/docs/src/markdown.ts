// HTML to the Markdown an agent reads (mdream): headings, lists, tables and fenced code with its language kept, links made absolute, chrome dropped.
import { htmlToMarkdownResult, initSync } from 'mdream/wasm/mdream_edge.js';
import { MDREAM_WASM_BASE64 } from './mdream-wasm.generated.js';

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

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos);/gi, (whole, name: string) => {
    if (name[0] !== '#') return NAMED[name.toLowerCase()] ?? whole;
    const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code > 0 && code < 0x110000 ? String.fromCodePoint(code) : whole;
  });
}
const encodeAttr = (value: string): string => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

// A start tag with its attributes, quoted values allowed to hold ">" (the one way a naive `<[^>]*>` goes wrong).
const TAG = /<(a|img|base)\b((?:[^>"']|"[^"]*"|'[^']*')*)>/gi;
const ATTR = /(\s)(href|src)\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+)/gi;
const unquote = (v: string): string => (v.startsWith('"') || v.startsWith("'") ? v.slice(1, -1) : v);

/**
 * Every link and image target rewritten as an absolute URL (relative ones against the page's final URL,
 * or its `<base href>`), and unfollowable ones removed, before mdream sees the page: mdream resolves
 * against an origin only, so `guide/a.html` under `/docs/` would lose its folder.
 */
export function resolveLinks(html: string, pageUrl: string): string {
  let base = pageUrl;
  const baseTag = /<base\b((?:[^>"']|"[^"]*"|'[^']*')*)>/i.exec(html);
  const baseHref = baseTag ? /\shref\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+)/i.exec(baseTag[1]!) : null;
  if (baseHref) base = absoluteHref(unquote(baseHref[1]!), pageUrl) ?? pageUrl;
  return html.replace(TAG, (_whole, name: string, attrs: string) => {
    const rewritten = attrs.replace(ATTR, (_m, space: string, attr: string, value: string) => {
      const target = absoluteHref(unquote(value), base);
      return target === undefined ? '' : `${space}${attr}="${encodeAttr(target)}"`;
    });
    return `<${name}${rewritten}>`;
  });
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
  return (result.markdown ?? '').replace(/[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n').trim();
}
