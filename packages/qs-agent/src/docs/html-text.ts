// HTML to the plain text an agent reads: scripts and styles dropped, blocks on their own lines, <pre> kept verbatim.
const DROP = /<(script|style|noscript|svg|template)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
const BLOCK = /<\/?(p|div|section|article|main|header|footer|nav|li|ul|ol|h[1-6]|tr|table|pre|blockquote|br|hr|dt|dd)\b[^>]*>/gi;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decode(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/** Links keep their target (`text (href)`): the prior art dropped hrefs while telling agents to follow links. */
export function htmlToText(html: string): string {
  const pres: string[] = [];
  let body = html.replace(DROP, '');
  // <pre> blocks are cut out first so that collapsing prose whitespace never touches code.
  body = body.replace(/<pre\b[^>]*>([\s\S]*?)<\/pre\s*>/gi, (_m, inner: string) => {
    pres.push(decode(inner.replace(/<[^>]+>/g, '')));
    return `\n\u0000${pres.length - 1}\u0000\n`;
  });
  body = body.replace(/<a\b[^>]*?href\s*=\s*["']([^"']*)["'][^>]*>([\s\S]*?)<\/a\s*>/gi, (_m, href: string, text: string) => `${text} (${href})`);
  body = body.replace(BLOCK, '\n').replace(/<[^>]+>/g, '');
  const prose = decode(body)
    .split('\n')
    .map((line) => line.replace(/[ \t\r\f\v]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return prose.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => pres[Number(i)] ?? '');
}
