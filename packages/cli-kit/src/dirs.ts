// Making a folder and its missing parents, one level at a time. Node's own recursive mkdir spins
// forever, at full CPU and deaf to signals' handlers, on a path under a filesystem that refuses new
// folders with ENOENT (`--out /proc/x`): this one fails at once with that error.
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** `mkdir -p`: the missing folders of `path`, top first; throws the first error (ENOTDIR, EACCES, ENOENT…). */
export function makeDirs(path: string, mode?: number): void {
  const missing: string[] = [];
  for (let at = resolve(path); ; ) {
    try {
      if (!statSync(at).isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${path}'`), { code: 'ENOTDIR', path: at });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      missing.push(at);
      const up = dirname(at);
      if (up === at) break;
      at = up;
    }
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir, mode === undefined ? undefined : { mode });
    } catch (error) {
      // Made meanwhile by someone else: what matters is that it is there.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(dir).isDirectory()) throw error;
    }
  }
}
