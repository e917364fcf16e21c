// A folder of pages keyed by the URL asked for: DIR/<sha256(url)[0:2]>/<sha256(url)>.json, each with its text's hash.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface CachedPage {
  /** The URL asked for (the key). */
  url: string;
  /** Where redirects ended. */
  final_url: string;
  status: number;
  /** The Markdown (or plain text) the agent is given, before paging. */
  text: string;
  sha256: string;
  fetched_at: string;
}

export const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

function entryPath(dir: string, url: string): string {
  const key = sha256(url);
  return join(dir, key.slice(0, 2), `${key}.json`);
}

/** undefined for a miss, and for an entry that is not one of ours (a torn or hand-edited file is a miss, not a crash). */
export async function cacheGet(dir: string, url: string): Promise<CachedPage | undefined> {
  let raw: string;
  try {
    raw = await readFile(entryPath(dir, url), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const entry = JSON.parse(raw) as Partial<CachedPage>;
    if (entry.url !== url || typeof entry.text !== 'string' || typeof entry.final_url !== 'string' || typeof entry.status !== 'number') return undefined;
    // The hash is recomputed rather than trusted, so docs.changed compares what was really served.
    return { url, final_url: entry.final_url, status: entry.status, text: entry.text, sha256: sha256(entry.text), fetched_at: String(entry.fetched_at ?? '') };
  } catch {
    return undefined;
  }
}

/** Written to a temporary name and renamed, so a reader running beside us never sees half an entry. */
export async function cachePut(dir: string, page: CachedPage): Promise<void> {
  const path = entryPath(dir, page.url);
  await mkdir(join(path, '..'), { recursive: true });
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, `${JSON.stringify(page)}\n`);
  await rename(tmp, path);
}
