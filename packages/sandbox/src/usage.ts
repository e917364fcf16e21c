// What a sandbox's folders hold on disk when a stage is done with it: the workspace is on the host's disk, measured rather than capped.
import { lstatSync, readdirSync } from 'node:fs';
import type { Payload } from '@quickloop/events';
import type { WorkspaceLayout } from './types.js';

export type DiskUsage = Payload<'sandbox.usage'>;

/** A bounded walk: a tree of a million entries is reported as at least this much, never walked forever. */
export const MAX_ENTRIES = 1_000_000;

const SLASH = Buffer.from('/');

/**
 * Sums apparent file sizes under workspace, home and tmp without following links. Names are read as
 * the bytes they are: a name that is no UTF-8, read as a string, no longer names the file (what a
 * folder so named held went uncounted, however large).
 */
export function diskUsage(layout: Pick<WorkspaceLayout, 'workspace' | 'home' | 'tmp'>, maxEntries = MAX_ENTRIES): DiskUsage {
  let files = 0;
  let complete = true;
  const walk = (dir: string): number => {
    let bytes = 0;
    const stack = [Buffer.from(dir)];
    while (stack.length > 0) {
      const current = stack.pop() as Buffer;
      let names: Buffer[];
      try {
        names = readdirSync(current, { encoding: 'buffer' });
      } catch {
        complete = false;
        continue;
      }
      for (const name of names) {
        if (files >= maxEntries) {
          complete = false;
          return bytes;
        }
        files += 1;
        const path = Buffer.concat([current, SLASH, name]);
        try {
          const st = lstatSync(path);
          if (st.isDirectory()) stack.push(path);
          else bytes += st.size;
        } catch {
          complete = false;
        }
      }
    }
    return bytes;
  };
  const workspace_bytes = walk(layout.workspace);
  const home_bytes = walk(layout.home);
  const tmp_bytes = walk(layout.tmp);
  return { workspace_bytes, home_bytes, tmp_bytes, files, complete };
}
