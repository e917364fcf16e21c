// The machine-readable files a docs site may offer agents (llms.txt, llms-full.txt, .md variants of pages).

export type Affordances = 'all' | 'none';

/** True for origin/llms.txt-style files and `.md` pages: what `--affordances none` withholds. */
export function isAffordance(url: URL): boolean {
  const last = url.pathname.split('/').pop() ?? '';
  return last === 'llms.txt' || last === 'llms-full.txt' || /\.md$/i.test(url.pathname);
}

/** A URL without its fragment: the form route entries and requests are compared in. */
export function routeKey(url: URL): string {
  const u = new URL(url.href);
  u.hash = '';
  return u.href;
}

/**
 * The `.md` variant of a page as llms.txt proposes it: the URL with `.md` appended, and `index.html.md`
 * for a folder. A root URL gives `origin/index.html.md` (the prior art produced `host.md`).
 */
export function markdownVariant(page: string): string {
  const url = new URL(page);
  url.search = '';
  url.hash = '';
  url.pathname = url.pathname.endsWith('/') ? `${url.pathname}index.html.md` : `${url.pathname}.md`;
  return url.href;
}

/** The candidates `--probe-affordances` asks for, in order. */
export function affordanceCandidates(entrypoint: string): { kind: 'llms.txt' | 'llms-full.txt' | 'md'; url: string }[] {
  const origin = new URL(entrypoint).origin;
  return [
    { kind: 'llms.txt', url: `${origin}/llms.txt` },
    { kind: 'llms-full.txt', url: `${origin}/llms-full.txt` },
    { kind: 'md', url: markdownVariant(entrypoint) },
  ];
}
