// Commands that ran into the sandbox's own limits: the cgroup counters around each command, else the error lines of one that failed.
import type { Payload } from '@quickloop/events';
import type { LimitInForce } from './limits.js';
import { OutputLines, type Stream } from './output-lines.js';

/** One limit a command ran into, shaped as the payload of the sandbox.limit_hit event it becomes. */
export type LimitHit = Payload<'sandbox.limit_hit'>;

/** A cgroup counter as read at one moment: the file and key it is, and its value. */
export interface Counter {
  counter: string;
  value: number;
}

/** The sandbox's own counters of refusals and kills, one per limit a cgroup holds. */
export interface LimitCounters {
  processes?: Counter;
  memory?: Counter;
}

/** The private tmpfs mounts, by the names sandbox.ready gives them. */
export const TMPFS_MOUNTS = ['/tmp', '/var/tmp', '/dev/shm'] as const;

/** What one output line says ran out, before the rules decide whose limit it was. */
export interface LimitClaim {
  kind: 'processes' | 'memory' | 'space';
  /** The file an ENOSPC line names, when it names one. */
  path?: string;
}


// EAGAIN from fork, clone or a thread: the process limit (cgroup pids.max, RLIMIT_NPROC). A bare
// "Resource temporarily unavailable" is any EAGAIN (a non-blocking read, `flock -n`), so the line
// must say it was making a process or thread, or be Python's uncaught BlockingIOError (os.fork's).
const PROCESSES: RegExp[] = [
  /\b(fork|clone|vfork|posix_spawn|pthread_create|spawn)\b.*(Resource temporarily unavailable|\bEAGAIN\b)/i,
  /\bCannot fork\b/,
  /^BlockingIOError: \[Errno 11\]/,
  /failed to create new OS thread/, // Go
  /unable to create (new )?native thread/, // Java
  /uv_thread_create/, // node, when its platform threads cannot start
];

// ENOMEM and the runtimes' own out-of-memory errors: the memory limit (cgroup memory.max, RLIMIT_DATA).
const MEMORY: RegExp[] = [
  /(^|[\s.:_])(\w*MemoryError)\b(?!\w)/, // python: MemoryError, numpy's _ArrayMemoryError
  /Cannot allocate memory/,
  /\bENOMEM\b/,
  /JavaScript heap out of memory/,
  /std::bad_alloc/,
  /fatal error: runtime: out of memory/, // Go
  /^memory allocation of \d+ bytes failed/, // Rust
  /java\.lang\.OutOfMemoryError(?!: unable to create)/,
];

const SPACE = /No space left on device|\bENOSPC\b/i;
// The path an ENOSPC line names: node's `open '/tmp/x'`, python's `…: '/tmp/x'`, coreutils' `writing '/tmp/x'`.
const QUOTED_PATH = /['"‘`](\/[^'"’]+)['"’]/;

/** What ran out, by one output line's words, or undefined when the line says nothing of the kind. */
export function parseLimitLine(line: string): LimitClaim | undefined {
  if (SPACE.test(line)) {
    const path = QUOTED_PATH.exec(line)?.[1];
    return { kind: 'space', ...(path !== undefined ? { path } : {}) };
  }
  // A thread the process limit refused is reported by Java as an OutOfMemoryError: processes first.
  if (PROCESSES.some((r) => r.test(line))) return { kind: 'processes' };
  if (MEMORY.some((r) => r.test(line))) return { kind: 'memory' };
  return undefined;
}

const under = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);

/** Reads stdout and stderr line by line as they arrive (before truncation) and keeps the first line of each kind. */
export class LimitScanner {
  readonly #found = new Map<string, { stream: Stream; line: string; claim: LimitClaim }>();
  readonly #lines = new OutputLines((stream, line) => {
    if (this.#found.size >= 8) return;
    const claim = parseLimitLine(line);
    if (!claim) return;
    const key = `${claim.kind}\0${claim.path ?? ''}`;
    if (!this.#found.has(key)) this.#found.set(key, { stream, line: line.slice(0, 300), claim });
  });

  push(stream: Stream, chunk: Buffer): void {
    this.#lines.push(stream, chunk);
  }

  /** The claims found, one per kind (and per tmpfs path), in the order first seen; flushes a last line. */
  end(): Array<{ stream: Stream; line: string; claim: LimitClaim }> {
    this.#lines.end();
    return [...this.#found.values()];
  }
}

/** What a backend lends the decision: its limits, its counters now, how full each tmpfs is, and its own folders. */
export interface LimitWitness {
  limits: readonly LimitInForce[];
  /** Folders of the layout, which are the host's disk even when they sit under /tmp on the host. */
  layout: readonly string[];
  /** Whether a private tmpfs is full now (undefined when it cannot be read from outside). */
  tmpfsFull?: (mount: string) => boolean | undefined;
  /** The host disk that holds the layout: its size, and whether it is full now (undefined when it cannot be read). */
  disk?: () => { bytes: number; full: boolean } | undefined;
}

/**
 * The host's disk that holds the workspace, home and tmp, as a limit hit names it. No limit of the
 * sandbox's (nothing here caps it, hence `none`; its value is the disk's size), but a command it
 * stopped is no more the docs' doing than one a full tmpfs stopped.
 */
export const DISK = 'disk';

function hitOf(limit: LimitInForce, exitCode: number, fields: Partial<LimitHit> & Pick<LimitHit, 'detected_from'>): LimitHit {
  return { limit: limit.name, value: limit.value, unit: limit.unit, enforced_by: limit.enforced_by, exit_code: exitCode, ...fields };
}

/**
 * The limits one command ran into. A counter that moved while it ran is a hit whatever the command
 * exited with (it is on the record, and the classification asks whether the command failed). The
 * text is read only for a command that failed: a test suite that prints "MemoryError" and passes ran
 * into nothing. An out-of-memory line with a memory cgroup in force is still a hit: the kernel
 * refuses an allocation larger than the machine before the cgroup is ever charged, and under the
 * sandbox's limit it would have been refused anyway.
 */
export function limitHits(
  witness: LimitWitness,
  exitCode: number,
  before: LimitCounters,
  after: LimitCounters,
  lines: ReturnType<LimitScanner['end']>,
): LimitHit[] {
  const out: LimitHit[] = [];
  const limit = (name: string): LimitInForce | undefined => witness.limits.find((l) => l.name === name && l.enforced_by !== 'none');
  for (const kind of ['processes', 'memory'] as const) {
    const l = limit(kind);
    if (!l) continue;
    const said = exitCode !== 0 ? lines.find((x) => x.claim.kind === kind) : undefined;
    const b = before[kind];
    const a = after[kind];
    const moved = a !== undefined && b !== undefined && a.counter === b.counter ? a.value - b.value : 0;
    if (moved > 0) out.push(hitOf(l, exitCode, { detected_from: 'counter', counter: (a as Counter).counter, count: moved, ...(said ? { line: said.line } : {}) }));
    else if (said) out.push(hitOf(l, exitCode, { detected_from: said.stream, line: said.line }));
  }
  if (exitCode === 0) return out;
  const space = lines.filter((x) => x.claim.kind === 'space');
  const seen = new Set<string>();
  const disk = (s: (typeof space)[number], from: LimitHit['detected_from']): void => {
    if (seen.has(DISK)) return;
    const d = witness.disk?.();
    if (d === undefined) return;
    seen.add(DISK);
    out.push({ limit: DISK, value: d.bytes, unit: 'bytes', enforced_by: 'none', exit_code: exitCode, detected_from: from, line: s.line });
  };
  for (const s of space) {
    const path = s.claim.path;
    if (path !== undefined) {
      // A named file: its tmpfs, unless it is in the layout: the host's disk, wherever the layout is.
      if (witness.layout.some((d) => under(path, d))) {
        disk(s, s.stream);
        continue;
      }
      const mount = TMPFS_MOUNTS.find((m) => under(path, m));
      const l = mount !== undefined ? limit(mount) : undefined;
      if (l && !seen.has(l.name)) {
        seen.add(l.name);
        out.push(hitOf(l, exitCode, { detected_from: s.stream, line: s.line }));
      }
      continue;
    }
    // No file named (`write error`, `error writing 'standard output'`): a tmpfs that is full now ran
    // out; the workspace's disk is not a tmpfs, so a full disk there is never taken for one, but it
    // is the host's disk running out when that is full now.
    for (const mount of TMPFS_MOUNTS) {
      const l = limit(mount);
      if (!l || seen.has(l.name) || witness.tmpfsFull?.(mount) !== true) continue;
      seen.add(l.name);
      out.push(hitOf(l, exitCode, { detected_from: 'statfs', line: s.line }));
    }
    if (witness.disk?.()?.full === true) disk(s, 'statfs');
  }
  return out;
}
