// A linear scan over an HTML document's start tags: regexes over attributes backtrack quadratically on a hostile page.

export interface StartTag {
  /** Lower-case tag name. */
  name: string;
  /** Offset of `<` and just past `>`. */
  start: number;
  end: number;
  /** The raw text between the name and `>`. */
  attrs: string;
}

const isSpace = (c: number): boolean => c === 32 || (c >= 9 && c <= 13);
const endsName = (c: number): boolean => isSpace(c) || c === 47 /* / */ || c === 62; /* > */

/**
 * Calls `visit` for each start tag named in `names`, in order, skipping comments and the raw text of
 * script, style, textarea and title as a browser would. An unterminated tag or comment ends the scan
 * (the rest of the page is inside it), so every character is looked at a bounded number of times.
 */
export function scanStartTags(html: string, names: ReadonlySet<string>, visit: (tag: StartTag) => void): void {
  // ASCII only: toLowerCase changes the length of some letters (U+0130), and offsets into `lower` slice `html`.
  const lower = html.replace(/[A-Z]+/g, (m) => m.toLowerCase());
  const n = lower.length;
  let i = 0;
  for (;;) {
    const lt = lower.indexOf('<', i);
    if (lt === -1 || lt + 1 >= n) return;
    if (lower.startsWith('<!--', lt)) {
      const close = lower.indexOf('-->', lt + 4);
      if (close === -1) return;
      i = close + 3;
      continue;
    }
    if (lower.charCodeAt(lt + 1) === 47) {
      const close = lower.indexOf('>', lt + 2);
      if (close === -1) return;
      i = close + 1;
      continue;
    }
    let j = lt + 1;
    while (j < n && !endsName(lower.charCodeAt(j))) j += 1;
    const name = lower.slice(lt + 1, j);
    if (!/^[a-z][a-z0-9-]*$/.test(name)) {
      i = lt + 1;
      continue;
    }
    // Find the tag's `>` outside quoted attribute values; `lower` is scanned, a flat string (indexing
    // a rope built by concatenation costs more per character).
    let quote = 0;
    let k = j;
    let lastNonSpace = 0;
    for (; k < n; k += 1) {
      const c = lower.charCodeAt(k);
      if (quote !== 0) {
        if (c === quote) quote = 0;
      } else if (c === 34 || c === 39) {
        // A quote opens a value only after `=` (possibly spaced); elsewhere it is a stray character.
        if (lastNonSpace === 61) quote = c;
      } else if (c === 62) break;
      if (!isSpace(c)) lastNonSpace = quote !== 0 && c !== quote ? 0 : c;
    }
    if (k >= n) return;
    if (names.has(name)) visit({ name, start: lt, end: k + 1, attrs: html.slice(j, k) });
    i = k + 1;
    if (name === 'script' || name === 'style' || name === 'textarea' || name === 'title') {
      const close = lower.indexOf(`</${name}`, i);
      if (close === -1) return;
      i = close;
    }
  }
}

/** The attributes of a start tag, names lower-cased, values as written (entities not decoded). */
export function parseAttrs(attrs: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
  for (const m of attrs.matchAll(re)) {
    const key = m[1]!.toLowerCase();
    if (!out.has(key)) out.set(key, m[2] ?? m[3] ?? m[4] ?? '');
  }
  return out;
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The entities an attribute value may hold in a URL: numeric ones and the five XML names. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|amp|lt|gt|quot|apos);/gi, (whole, name: string) => {
    if (name[0] !== '#') return NAMED[name.toLowerCase()] ?? whole;
    const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code > 0 && code < 0x110000 ? String.fromCodePoint(code) : whole;
  });
}

export const encodeAttr = (value: string): string => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

