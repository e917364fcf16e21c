// Finds the processes a stage's commands left running, so that killing them at close is also on the record.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** The command line, NULs as spaces, at most 200 characters. */
  command: string;
}

/** At most this many are named: a fork bomb must not become a huge event. */
export const MAX_NAMED = 20;

const PAUSE = new Int32Array(new SharedArrayBuffer(4));
const commandLine = (pid: number): string => readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+$/, '').replace(/\0/g, ' ');

function info(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name in parentheses may itself hold spaces and parentheses: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    let raw = commandLine(pid);
    // A process in the middle of an exec has no command line for a moment: look again, briefly.
    for (let i = 0; raw === '' && i < 5; i++) {
      Atomics.wait(PAUSE, 0, 0, 1);
      raw = commandLine(pid);
    }
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

/** The children of a process, over all its threads (a node server forks from any of them). */
export function childrenOf(pid: number): number[] {
  const found: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) if (c.trim() !== '') found.push(Number(c));
      } catch {
        // The thread ended while we looked.
      }
    }
  } catch {
    // The process is gone.
  }
  return found;
}

/**
 * In a bwrap namespace: the processes that outlived the command that started them. An orphan is
 * re-parented to the namespace's init, so they are the init's children other than its own helpers
 * (`baseline`: the forwarders, whose forks stay under them), and their descendants. A command still
 * running was entered with nsenter from outside, so it is not under the init at all. Only the
 * namespace's own tree is read, never the whole host's process table.
 */
export function namespaceLeftovers(init: number, baseline: ReadonlySet<number>): ProcInfo[] {
  const left: ProcInfo[] = [];
  const stack = childrenOf(init).filter((c) => !baseline.has(c));
  const seen = new Set<number>();
  while (stack.length > 0 && left.length < 4096) {
    const pid = stack.pop() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const p = info(pid);
    if (p) left.push(p);
    stack.push(...childrenOf(pid));
  }
  return left.sort((a, b) => a.pid - b.pid);
}

/** Under `local`: members of the commands' groups whose leader (the command's bash) has exited. */
export function groupLeftovers(groups: ReadonlySet<number>): ProcInfo[] {
  const all = processes();
  const alive = new Set(all.map((p) => p.pid));
  return all.filter((p) => groups.has(p.pgid) && !alive.has(p.pgid));
}
