// The support folders (proxy sockets, generated /etc files) of sessions whose harness was killed.
//
// A session removes its support folder when it closes. A harness killed with SIGKILL (a cancelled CI
// job, the OOM killer) cannot: its sandbox dies with it (the layer's parent-death signal), but the
// folder stays in the temp folder. Each folder therefore names its owner, the harness's pid and that
// process's start time (the pair a reused pid cannot match), and the next harness of the same user
// removes the folders whose owner is gone.
//
// Only what this user made is touched: a real folder (never a link) with the prefix, owned by this
// uid, holding an owner file that is a regular file. A folder without one is left alone: it may be
// one another harness has just made and not yet named.
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processStart } from '@quickloop/cli-kit/process-group';

export const SUPPORT_PREFIX = 'quickloop-proxy-';
const OWNER = 'owner';

/** Marks a new support folder as this process's. */
export function markSupportOwner(dir: string): void {
  writeFileSync(join(dir, OWNER), `${process.pid} ${processStart(process.pid) ?? ''}\n`, { mode: 0o600 });
}

/** The owner file's `pid start`, read without following a link and at most 64 bytes of it. */
function readOwner(dir: string): { pid: number; start: string } | undefined {
  let fd: number;
  try {
    fd = openSync(join(dir, OWNER), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    const buf = Buffer.alloc(64);
    const text = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString('utf8');
    const m = /^([1-9]\d{0,9}) (\d{1,20})\n$/.exec(text);
    return m ? { pid: Number(m[1]), start: m[2] as string } : undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes, under `parent`, the support folders of this user whose owning harness has ended. Returns
 * how many it removed. Never throws: a folder it cannot judge or remove is left as it was.
 */
export function removeStaleSupport(parent: string): number {
  const uid = process.getuid?.();
  if (uid === undefined) return 0;
  let names: string[];
  try {
    names = readdirSync(parent).filter((n) => n.startsWith(SUPPORT_PREFIX));
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const dir = join(parent, name);
    try {
      const st = lstatSync(dir);
      if (!st.isDirectory() || st.uid !== uid) continue;
      const owner = readOwner(dir);
      if (owner === undefined || owner.pid === process.pid) continue;
      // Alive with the same start time: still in use. A pid that now names another process is not its owner.
      if (processStart(owner.pid) === owner.start) continue;
      rmSync(dir, { recursive: true, force: true });
      removed += 1;
    } catch {
      // gone meanwhile, or not ours to judge
    }
  }
  return removed;
}
