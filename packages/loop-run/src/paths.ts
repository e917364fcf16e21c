// Path confinement: the workspace, context files and state/log names must resolve inside their parent.
import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

/** realpath of the deepest existing ancestor plus the rest: symlinks count, missing dirs do not matter. */
export function realish(p: string): string {
  const abs = resolve(p);
  if (existsSync(abs)) return realpathSync(abs);
  const parent = dirname(abs);
  if (parent === abs) return abs;
  return join(realish(parent), basename(abs));
}

export function isInside(base: string, p: string): boolean {
  const rel = relative(realish(base), realish(p));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}
