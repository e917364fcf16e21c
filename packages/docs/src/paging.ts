// Long pages in numbered parts, each ending in a footer that says which part it is and how to get the next.

/** Characters of Markdown per part: big enough for a whole quickstart, small enough for any model's context. */
export const PAGE_CHARS = 40_000;

/** Splits at a blank line, else a line end, in the last half of a part, so a code line is rarely cut. */
export function splitPages(text: string, size = PAGE_CHARS): string[] {
  if (text.length <= size) return [text];
  const parts: string[] = [];
  let rest = text;
  while (rest.length > size) {
    const window = rest.slice(0, size);
    let cut = window.lastIndexOf('\n\n');
    if (cut < size / 2) cut = window.lastIndexOf('\n');
    if (cut < size / 2) cut = size;
    // No line end to cut at: still between characters, as half of a pair is not text (a model API refuses it).
    if (cut === size && isHigh(rest.charCodeAt(cut - 1)) && isLow(rest.charCodeAt(cut))) cut -= 1;
    parts.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).replace(/^\n+/, '');
  }
  if (rest.length > 0) parts.push(rest);
  return parts;
}

const isHigh = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/** The footer the model reads under a part of a page that has more than one. */
export function pageFooter(page: number, pages: number): string {
  if (pages <= 1) return '';
  return page < pages
    ? `\n\n---\npage ${page} of ${pages} — call read_docs with page: ${page + 1} for the next part`
    : `\n\n---\npage ${page} of ${pages} (the last part)`;
}
