// Path confinement: the workspace, context files and state/log names must resolve inside their parent.
import { readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** More links than this on one path is a cycle (Linux gives up at 40 too). */
const MAX_LINKS = 40;

class LinkCycle extends Error {}

/**
 * realpath of the deepest existing ancestor plus the rest: symlinks count, missing dirs do not matter.
 * A dangling link is followed to where it points, as Python's realpath does; else `up -> /elsewhere`
 * with /elsewhere not there yet would look inside, and the first mkdir would go through it.
 */
export function realish(p: string, links = 0): string {
  const abs = resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    // missing, dangling or a cycle: resolved a step at a time below
  }
  let target: string | undefined;
  try {
    target = readlinkSync(abs);
  } catch {
    target = undefined;
  }
  if (target !== undefined) {
    if (links >= MAX_LINKS) throw new LinkCycle(abs);
    return realish(resolve(dirname(abs), target), links + 1);
  }
  const parent = dirname(abs);
  if (parent === abs) return abs;
  return join(realish(parent, links), basename(abs));
}

/** Whether `p` resolves inside `base`. A path whose links never end is not inside anything. */
export function isInside(base: string, p: string): boolean {
  let rel: string;
  try {
    rel = relative(realish(base), realish(p));
  } catch (error) {
    if (error instanceof LinkCycle) return false;
    throw error;
  }
  // `..ws` is a name inside; only a `..` component leaves.
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
