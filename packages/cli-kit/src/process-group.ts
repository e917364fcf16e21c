// The one way a quickloop binary ends a child and everything it started, and the one signal table.
//
// Every child that may start others is spawned `detached` (the leader of its own process group), so
// the group is the tree: one signal to -pgid reaches the helpers, servers and shells it left behind.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { constants } from 'node:os';

/**
 * The kernel's start time of a process (clock ticks since boot, /proc/PID/stat field 22), or null where
 * /proc cannot tell. With the pid, it names one process: a reused pid has another start time.
 */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Where this process's pids mean something: `NS BOOT`, its pid namespace's inode and the kernel's boot
 * id; null where /proc cannot tell. A pid recorded under another scope names nobody here.
 */
export function pidScope(): string | null {
  try {
    const ns = /^pid:\[(\d{1,20})\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return ns !== undefined && /^[0-9a-f-]{36}$/.test(boot) ? `${ns} ${boot}` : null;
  } catch {
    return null;
  }
}

/**
 * How a recorded pidScope() stands to this process's: the same scope (its pid can be judged here), an
 * earlier boot (whatever held it ended with that boot), another pid namespace of this boot (its pid
 * names some other process here, or none), or unknown (nothing recorded, or /proc cannot tell).
 */
export function pidScopeRelation(recorded: string | undefined, here: string | null = pidScope()): 'same' | 'earlier-boot' | 'other-namespace' | 'unknown' {
  const [ns, boot] = (recorded ?? '').trim().split(' ');
  if (!ns || !boot || here === null) return 'unknown';
  const [hereNs, hereBoot] = here.split(' ');
  if (boot !== hereBoot) return 'earlier-boot';
  return ns === hereNs ? 'same' : 'other-namespace';
}

/** A signal's number on this platform, from the kernel's own table; 0 for a name it does not know. */
export function signalNumber(name: string): number {
  return (constants.signals as Record<string, number | undefined>)[name] ?? 0;
}

/**
 * What a shell reports for a child: its exit code, or 128 + n when signal n ended it (`fallback` when
 * neither is known).
 */
export function exitCodeOf(code: number | null, signal: string | null, fallback = 1): number {
  if (code !== null) return code;
  return signal ? 128 + signalNumber(signal) : fallback;
}

/** Sends a signal to a whole group; false when nobody is left in it (ESRCH). */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** True while any process of the group exists (a zombie counts until its parent reaps it). */
export function groupAlive(pgid: number): boolean {
  return signalGroup(pgid, 0);
}

/**
 * True while a process of the group still runs. Unlike groupAlive, zombies do not count: an orphan
 * killed inside a container whose init never reaps keeps its group "alive" forever but runs nothing.
 * Where /proc cannot be read, every member counts.
 */
export function groupRunning(pgid: number): boolean {
  if (!groupAlive(pgid)) return false;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^[0-9]+$/.test(name));
  } catch {
    return true;
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Ends each group: SIGTERM, then SIGKILL to whatever is left after `graceMs` (0: SIGKILL at once).
 * Resolves once nothing of any group runs (zombies aside, see groupRunning), or at the latest
 * `settleMs` after the SIGKILL, so a caller can promise that nothing is left running.
 */
export async function endGroups(pgids: Iterable<number>, graceMs: number, settleMs = 1000): Promise<void> {
  let alive = [...pgids];
  if (graceMs > 0) {
    alive = alive.filter((g) => signalGroup(g, 'SIGTERM'));
    const step = Math.min(25, graceMs);
    for (let waited = 0; waited < graceMs && alive.length > 0; waited += step) {
      await pause(step);
      alive = alive.filter(groupRunning);
    }
  }
  alive = alive.filter((g) => signalGroup(g, 'SIGKILL'));
  // SIGKILL is asynchronous: wait for the kernel to remove them.
  for (let waited = 0; waited < settleMs && alive.length > 0; waited += 5) {
    await pause(5);
    alive = alive.filter(groupRunning);
  }
}

export function endGroup(pgid: number, graceMs: number, settleMs?: number): Promise<void> {
  return endGroups([pgid], graceMs, settleMs);
}
