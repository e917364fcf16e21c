// Finds the processes a stage's commands left running, so that killing them at close is also on the record.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** The command line, NULs as spaces, at most 200 characters. */
  command: string;
}

/** At most this many are named: a fork bomb must not become a huge event. */
export const MAX_NAMED = 20;

function info(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name in parentheses may itself hold spaces and parentheses: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+$/, '').replace(/\0/g, ' ');
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    return { pid, ppid: Number(fields[1]), pgid: Number(fields[2]), command: (raw || `[${name}]`).slice(0, 200) };
  } catch {
    return undefined; // gone while we looked
  }
}

/** Every live process on the host, seen from the harness's pid namespace. */
export function processes(): ProcInfo[] {
  const found: ProcInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const p = info(Number(entry));
    if (p) found.push(p);
  }
  return found;
}

/** The pid namespace of a process (`pid:[4026532181]`), or undefined when it cannot be read. */
export function pidNamespace(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

/**
 * In a bwrap namespace: processes that outlived the command that started them. An orphan is
 * re-parented to the namespace's init, so a leftover is a process whose ancestry reaches `init`
 * without passing through the init's own helpers (`baseline`: the forwarders and their forks), and
 * not through a process outside (a command still running, entered with nsenter).
 */
export function namespaceLeftovers(init: number, baseline: ReadonlySet<number>): ProcInfo[] {
  const ns = pidNamespace(init);
  if (ns === undefined) return [];
  const all = processes();
  const byPid = new Map(all.map((p) => [p.pid, p]));
  const inside = (pid: number): boolean => pidNamespace(pid) === ns;
  const left: ProcInfo[] = [];
  for (const p of all) {
    if (p.pid === init || baseline.has(p.pid) || !inside(p.pid)) continue;
    let up = byPid.get(p.ppid);
    let reachesInit = p.ppid === init;
    for (let hops = 0; !reachesInit && up && hops < 64; hops++) {
      if (up.pid === init) reachesInit = true;
      else if (baseline.has(up.pid) || !inside(up.pid)) break;
      else up = byPid.get(up.ppid);
    }
    if (reachesInit) left.push(p);
  }
  return left;
}

/** Under `local`: members of the commands' groups whose leader (the command's bash) has exited. */
export function groupLeftovers(groups: ReadonlySet<number>): ProcInfo[] {
  const all = processes();
  const alive = new Set(all.map((p) => p.pid));
  return all.filter((p) => groups.has(p.pgid) && !alive.has(p.pgid));
}
