// The support folders (proxy sockets, generated /etc files) of sessions whose harness was killed.
//
// A session removes its support folder when it closes. A harness killed with SIGKILL (a cancelled CI
// job, the OOM killer) cannot: its sandbox dies with it (the layer's parent-death signal), but the
// folder stays in the temp folder. Each folder therefore names its owner, the harness's pid and that
// process's start time (the pair a reused pid cannot match), and the next harness of the same user
// removes the folders whose owner is gone.
//
// A pid means something only in its own pid namespace and boot: a harness in a container that shares
// the temp folder (or another kernel's, on a shared disk) names a pid that here is another process or
// none, while its sessions are live. The owner file names both, and only a folder of this namespace
// and boot is judged; the others are left as they are.
//
// Only what this user made is touched: a real folder (never a link) with the prefix, owned by this
// uid, holding an owner file that is a regular file. A folder without one is left alone: it may be
// one another harness has just made and not yet named.
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readdirSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pidScope, pidScopeRelation, processStart } from '@quickloop/cli-kit/process-group';

export const SUPPORT_PREFIX = 'quickloop-proxy-';
const OWNER = 'owner';

/** Marks a new support folder as this process's (a folder whose owner cannot be told is never removed). */
export function markSupportOwner(dir: string): void {
  writeFileSync(join(dir, OWNER), `${process.pid} ${processStart(process.pid) ?? ''} ${pidScope() ?? ''}\n`, { mode: 0o600 });
}

/** The owner file's `pid start scope`, read without following a link and at most 128 bytes of it. */
function readOwner(dir: string): { pid: number; start: string; scope: string } | undefined {
  let fd: number;
  try {
    fd = openSync(join(dir, OWNER), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    const buf = Buffer.alloc(128);
    const text = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString('utf8');
    const m = /^([1-9]\d{0,9}) (\d{1,20}) (\d{1,20} [0-9a-f-]{36})\n$/.exec(text);
    return m ? { pid: Number(m[1]), start: m[2] as string, scope: m[3] as string } : undefined;
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
  const scope = pidScope();
  if (uid === undefined || scope === null) return 0;
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
      if (owner === undefined || owner.pid === process.pid || pidScopeRelation(owner.scope, scope) !== 'same') continue;
      // Alive with the same start time: still in use. A pid that now names another process is not its owner.
      const now = processStart(owner.pid);
      if (now === owner.start) continue;
      // A pid /proc has but could not read (too many files open): not judged, rather than taken for gone.
      if (now === null && existsSync(`/proc/${owner.pid}`)) continue;
      // The owner file last: a removal that fails half-way leaves a folder the next harness still judges.
      for (const entry of readdirSync(dir)) if (entry !== OWNER) rmSync(join(dir, entry), { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
      removed += 1;
    } catch {
      // gone meanwhile, or not ours to judge
    }
  }
  return removed;
}
