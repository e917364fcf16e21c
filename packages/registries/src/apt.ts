// apt's mirrors from its sources: one-line sources.list entries and deb822 .sources files.
import { join } from 'node:path';
import { endpointOf, listDir, readText } from './files.js';
import type { Found } from './types.js';

/** `deb [opts] URI suite comps` → URI; `[opts]` may contain spaces inside the brackets. */
function oneLineUris(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*$/, '').trim();
    const m = /^deb(?:-src)?\s+(?:\[[^\]]*\]\s+)?(\S+)/.exec(line);
    if (m) out.push(m[1]!);
  }
  return out;
}

/** deb822 paragraphs: `URIs:` lists one or more mirrors; `Enabled: no` switches a paragraph off. */
function deb822Uris(text: string): string[] {
  const out: string[] = [];
  for (const paragraph of text.split(/\r?\n\s*\r?\n/)) {
    const fields = new Map<string, string>();
    let last: string | undefined;
    for (const raw of paragraph.split(/\r?\n/)) {
      if (raw.startsWith('#')) continue;
      if (/^\s/.test(raw) && last) {
        fields.set(last, `${fields.get(last)} ${raw.trim()}`);
        continue;
      }
      const m = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(raw);
      if (m) {
        last = m[1]!.toLowerCase();
        fields.set(last, m[2]!);
      }
    }
    if ((fields.get('enabled') ?? 'yes').trim().toLowerCase() === 'no') continue;
    out.push(...(fields.get('uris') ?? '').split(/\s+/).filter(Boolean));
  }
  return out;
}

export function aptRegistries(root: string): Found[] {
  const found: Found[] = [];
  const take = (file: string, uris: string[]): void => {
    for (const uri of uris) {
      const host = endpointOf(uri);
      if (host) found.push({ endpoint: host, from: `apt ${file}` });
    }
  };
  const main = join(root, 'etc', 'apt', 'sources.list');
  const text = readText(main);
  if (text !== undefined) take(main, oneLineUris(text));
  const dir = join(root, 'etc', 'apt', 'sources.list.d');
  for (const name of listDir(dir)) {
    const file = join(dir, name);
    if (name.endsWith('.list')) take(file, oneLineUris(readText(file) ?? ''));
    else if (name.endsWith('.sources')) take(file, deb822Uris(readText(file) ?? ''));
  }
  return found;
}
