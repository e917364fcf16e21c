// The world a command runs in: streams, environment, clock, ids and an abort signal — all injectable.
import { randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';

export interface Io {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  cwd: string;
  /** Aborted on SIGINT/SIGTERM/SIGHUP; long work must stop and report `interrupted`. */
  signal: AbortSignal;
  /** The clock. Tests pin it so event streams are byte-for-byte reproducible. */
  now: () => Date;
  /** Fresh identifiers for runs and paired events. Tests make them sequential. */
  newId: () => string;
  /**
   * Set by a host that removes finished sandboxes itself (`qs run`, between attempts): the last stage
   * hands it each sandbox root to remove instead of removing it, so an attempt ends without waiting
   * for its folders to go. Absent, the stage removes them itself.
   */
  handOffRemoval?: (root: string) => void;
}

/** A short, sortable, collision-resistant id: 12 hex chars of time, 8 of randomness. */
export function defaultNewId(): string {
  return Date.now().toString(16).padStart(12, '0') + randomBytes(4).toString('hex');
}

/** Deterministic ids for tests and golden files: `id-1`, `id-2`, … */
export function sequentialIds(prefix = 'id-'): () => string {
  let n = 0;
  return () => `${prefix}${++n}`;
}

/** A clock that starts at `start` and advances `stepMs` per call. */
export function steppingClock(start = '2026-01-01T00:00:00.000Z', stepMs = 1): () => Date {
  let t = Date.parse(start);
  return () => {
    const d = new Date(t);
    t += stepMs;
    return d;
  };
}
