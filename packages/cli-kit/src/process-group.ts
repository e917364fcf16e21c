// The one way a quickloop binary runs a child to completion and ends it with everything it started, and the one signal table.
//
// Every child that may start others is spawned `detached` (the leader of its own process group), so
// the group is the tree: one signal to -pgid reaches the helpers, servers and shells it left behind.
import { spawn } from 'node:child_process';
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

export interface RunChildOptions {
  cwd: string;
  /** The child's whole environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, then stdin is closed (default: nothing, closed at once). */
  input?: string;
  /** The group is ended (SIGTERM, then SIGKILL after killGraceMs) once this passes; at most 2^31-1 ms (about 24.8 days) is kept. */
  timeoutMs: number;
  /** Aborting ends the group the same way; one aborted already starts nothing. */
  signal?: AbortSignal;
  /** Between SIGTERM and SIGKILL (default 1000 ms; 0: SIGKILL at once). */
  killGraceMs?: number;
  /** Per stream (default: unbounded). */
  maxOutputBytes?: number;
  /**
   * What more output than maxOutputBytes means: `kill` (the default) ends the group and says so;
   * `tail` lets the child finish and keeps the last maxOutputBytes of stdout and 64 KiB of stderr.
   */
  overflow?: 'kill' | 'tail';
  /** Every chunk of stdout as it arrives, before any bound drops it (a search that must see all of it). */
  onStdout?: (chunk: Buffer) => void;
  /** Keep a BOM the output starts with, as Python's utf-8 text mode does (the default drops it). */
  keepBom?: boolean;
}

export interface ChildResult {
  /** Null when a signal ended the child, or when it never started (spawnError, or an abort before the call). */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Decoded as UTF-8; a bad byte (or a cut through a character) becomes U+FFFD. */
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  /** `kill`: the child was ended for its output. `tail`: stdout passed maxOutputBytes and only its tail was kept. */
  outputExceeded: boolean;
  /** Set when the program could not be started at all (`ENOENT`, `EACCES`, a bad argument…). */
  spawnError?: { code: string; message: string };
  durationMs: number;
}

/** The longest delay one setTimeout holds; a longer one (Infinity too) would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The last `max` bytes of a stream, held in chunks so a long output never sits in memory whole. */
class Capture {
  readonly #max: number;
  readonly #tail: boolean;
  readonly #keepBom: boolean;
  #chunks: Buffer[] = [];
  #bytes = 0;
  exceeded = false;
  constructor(max: number, tail: boolean, keepBom = false) {
    this.#max = max;
    this.#tail = tail;
    this.#keepBom = keepBom;
  }
  /** False once the stream is past its bound in `kill` mode. */
  push(chunk: Buffer): boolean {
    if (this.exceeded && !this.#tail) return false;
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    if (this.#bytes <= this.#max) return true;
    this.exceeded = true;
    if (!this.#tail) return false;
    // Drop whole chunks while the rest still holds the bound (with a bound of 0, until none is left).
    while (this.#chunks.length > 0 && this.#bytes - this.#chunks[0]!.length >= this.#max) this.#bytes -= this.#chunks.shift()!.length;
    return true;
  }
  text(): string {
    let all = Buffer.concat(this.#chunks);
    if (all.length > this.#max) all = all.subarray(all.length - this.#max);
    return new TextDecoder('utf-8', { ignoreBOM: this.#keepBom }).decode(all);
  }
}

/**
 * Runs one argv (never a shell) to completion as the leader of its own process group, so a deadline,
 * an abort or too much output ends the whole tree it started. Never rejects: the result says what
 * happened. Strays left in the group once the child has exited are ended too.
 */
export function runChild(argv: readonly string[], options: RunChildOptions): Promise<ChildResult> {
  const started = performance.now();
  const grace = options.killGraceMs ?? 1000;
  const max = options.maxOutputBytes ?? Number.POSITIVE_INFINITY;
  const tail = options.overflow === 'tail';
  const out = new Capture(max, tail, options.keepBom);
  // In tail mode stderr keeps its own 64 KiB, whatever the stdout bound: a short bound must not cut an error message.
  const err = new Capture(tail ? 64 * 1024 : max, tail, options.keepBom);
  return new Promise((resolve) => {
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let ending: Promise<void> | undefined;
    const result = (r: Pick<ChildResult, 'exitCode' | 'signal'> & { spawnError?: ChildResult['spawnError'] }): ChildResult => ({
      ...r,
      stdout: out.text(),
      stderr: err.text(),
      timedOut,
      aborted,
      outputExceeded: tail ? out.exceeded : out.exceeded || err.exceeded,
      durationMs: Math.round(performance.now() - started),
    });
    // An abort signalled before the call starts nothing: started and then ended, a program may already have acted.
    if (options.signal?.aborted) {
      aborted = true;
      resolve(result({ exitCode: null, signal: null }));
      return;
    }
    // No input: /dev/null, which a child may also open as /dev/stdin. Node's pipes are sockets, which
    // cannot be opened anew: `cat /dev/stdin` or `echo x > /dev/stdout` fails on them with ENXIO.
    const input = options.input ?? '';
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(argv[0] ?? '', argv.slice(1), { cwd: options.cwd, env: options.env ?? process.env, stdio: [input.length > 0 ? 'pipe' : 'ignore', 'pipe', 'pipe'], detached: true });
    } catch (error) {
      // A bad argument (a NUL in argv, say) throws before anything runs.
      const e = error as NodeJS.ErrnoException;
      resolve(result({ exitCode: null, signal: null, spawnError: { code: e.code ?? 'EINVAL', message: e.message } }));
      return;
    }
    const pgid = child.pid;
    const stop = (): Promise<void> => (ending ??= pgid === undefined ? Promise.resolve() : endGroup(pgid, grace));
    const timer = setTimeout(() => {
      timedOut = true;
      void stop();
    }, Math.min(Math.max(0, options.timeoutMs), MAX_TIMER_MS));
    const onAbort = (): void => {
      aborted = true;
      void stop();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let drainTimer: NodeJS.Timeout | undefined;
    const finish = (r: ChildResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drainTimer);
      options.signal?.removeEventListener('abort', onAbort);
      // Strays the child left behind in its group must not outlive the call.
      if (r.spawnError === undefined && pgid !== undefined) signalGroup(pgid, 'SIGKILL');
      void (ending ?? Promise.resolve()).then(() => resolve(r));
    };
    // A spawn that fails for want of descriptors (EMFILE, ENFILE) leaves the child without pipes.
    child.stdout?.on('data', (c: Buffer) => {
      options.onStdout?.(c);
      if (!out.push(c)) void stop();
    });
    child.stderr?.on('data', (c: Buffer) => {
      if (!err.push(c)) void stop();
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (pgid === undefined) finish(result({ exitCode: null, signal: null, spawnError: { code: error.code ?? 'EIO', message: error.message } }));
    });
    child.once('exit', () => {
      if (pgid === undefined) return;
      // The child answered in time: what is left (ending its leftovers, the pipes) is bounded and is no timeout.
      clearTimeout(timer);
      // A helper still in the group (`server &`) keeps the pipes open after the child exits: end it.
      if (groupAlive(pgid)) void stop();
      // One that left the group (setsid) and kept a pipe: stop waiting for the pipes once the group is done.
      void (ending ?? Promise.resolve()).then(() => {
        if (settled) return;
        drainTimer = setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
        }, Math.max(grace, 250));
      });
    });
    child.on('close', (code, signal) => {
      if (pgid !== undefined) finish(result({ exitCode: code, signal }));
    });
    // A child that exits without reading its input closes the pipe: that is its answer, not our error.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
}
