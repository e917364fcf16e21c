// state.json: loaded once, rewritten whole and atomically (temp file + rename) on every save; and the run lock.
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, linkSync, openSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { InputError } from '@quickloop/cli-kit/errors';
import { pidScope, pidScopeRelation, processStart } from '@quickloop/cli-kit/process-group';
import type { Payload } from '@quickloop/events';
import type { ConsentRecord } from '@quickloop/loop-engine';
import { PyFloat, pyJsonDumps, type PyValue } from '@quickloop/loop-spec';

export type Usage = Payload<'loop.completed'>['usage'];

export interface GateProgress {
  gate: string;
  iteration: number;
  /** Host revisions already made to this gate's artifact: a resume continues the count. */
  revision: number;
  /** The gate ran out of revisions on this artifact: a re-run does not start its count again. */
  exhausted?: boolean;
  /**
   * The state's updated_at when we last saved it. Looper's runner keeps keys it does not know but
   * sets its own updated_at: a mismatch means it ran after us, and this progress no longer holds.
   */
  saved_at?: string;
}

export interface LoopState {
  status: string;
  failure?: string;
  run_id?: string;
  started_at: string;
  updated_at?: string;
  completed_at?: string;
  iteration: number;
  wall_clock_used_sec: number;
  warnings: string[];
  consent: Record<string, ConsentRecord>;
  no_progress: { gate: string; signature: string; count: number; threshold?: number; updated_at?: string };
  blocking_issues?: string[];
  last_review?: string;
  /** The plan and the plan gate that passed, by hash: any other plan (or gate) is gated again. */
  plan_gate?: { passed_at: string; sha256?: string; gate_sha256?: string };
  delivery_gate?: { passed_at: string };
  final_delivery?: string;
  gate_progress?: GateProgress;
  /** A delivery's progress set aside while the plan is gated again (the plan gate's rounds use gate_progress). */
  gate_progress_parked?: GateProgress;
  /** The last review round number of each gate, so review files are never overwritten. */
  review_rounds: Record<string, number>;
  checkpoints?: Record<string, string>;
  usage: Usage;
  /** Each member's largest call in tokens: a resumed run must not forget what a call can cost. */
  largest_call_tokens?: Record<string, number>;
  [key: string]: unknown;
}

export const emptyUsage = (): Usage => ({
  input_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  output_tokens: 0,
  reasoning_tokens: 0,
  usd: null,
  calls: 0,
  calls_without_usage: 0,
});

/** Sorted keys at every level, like Looper's `sort_keys=True`, so state files diff cleanly. */
export function sortedJson(value: unknown, indent?: number): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v as object)
          .sort()
          .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return JSON.stringify(sort(value), null, indent);
}

/** What JSON.stringify would write, as Python values: keys holding undefined are left out, PyFloats kept. */
function pyValues(v: unknown): PyValue {
  if (v === undefined) return null;
  if (Array.isArray(v)) return v.map(pyValues);
  if (v instanceof PyFloat) return v;
  if (v && typeof v === 'object') {
    const out: Record<string, PyValue> = {};
    for (const [k, x] of Object.entries(v)) {
      if (x !== undefined) Object.defineProperty(out, k, { value: pyValues(x), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return v as PyValue;
}

/**
 * json.dumps(value, sort_keys=True[, indent]) as Looper's runner writes state.json and each run-log
 * line: non-ASCII escaped (`\u00fc`), `", "` and `": "` between items, keys in code-point order.
 */
export function looperJson(value: unknown, indent?: number): string {
  return pyJsonDumps(pyValues(value), { sortKeys: true, ...(indent === undefined ? {} : { indent }) });
}

export function loadState(path: string, now: string): { state: LoopState; existed: boolean; staleProgress?: GateProgress } {
  const fresh: LoopState = {
    status: 'initialized',
    started_at: now,
    iteration: 0,
    wall_clock_used_sec: 0,
    warnings: [],
    consent: {},
    no_progress: { count: 0, signature: '', gate: '' },
    review_rounds: {},
    usage: emptyUsage(),
  };
  if (!existsSync(path)) return { state: fresh, existed: false };
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new InputError(`could not parse ${path}: ${(error as Error).message} (move it away to start over)`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new InputError(`${path} must contain a JSON object`);
  const s = { ...fresh, ...(value as Partial<LoopState>) } as LoopState;
  // A state written by Looper's runner lacks quickloop's fields: fill them rather than refuse it.
  s.warnings = Array.isArray(s.warnings) ? s.warnings : [];
  s.consent = s.consent && typeof s.consent === 'object' ? s.consent : {};
  s.review_rounds = s.review_rounds && typeof s.review_rounds === 'object' ? s.review_rounds : {};
  s.usage = { ...emptyUsage(), ...(s.usage ?? {}) };
  if (s.largest_call_tokens !== undefined) {
    const ok = s.largest_call_tokens && typeof s.largest_call_tokens === 'object' && !Array.isArray(s.largest_call_tokens);
    s.largest_call_tokens = ok ? Object.fromEntries(Object.entries(s.largest_call_tokens).filter((e) => typeof e[1] === 'number' && Number.isFinite(e[1]))) : {};
  }
  s.wall_clock_used_sec = typeof s.wall_clock_used_sec === 'number' ? s.wall_clock_used_sec : 0;
  s.iteration = typeof s.iteration === 'number' ? s.iteration : 0;
  // Another runner (Looper's) saved the state after our gate progress: it may have re-gated that
  // artifact with a fresh budget and passed it, so our count and exhaustion are history.
  const parked = s.gate_progress_parked;
  if (parked !== undefined && !(parked && typeof parked === 'object' && parked.saved_at === s.updated_at)) delete s.gate_progress_parked;
  const p = s.gate_progress;
  if (p && typeof p === 'object' && typeof p.saved_at === 'string' && p.saved_at !== s.updated_at) {
    delete s.gate_progress;
    return { state: s, existed: true, staleProgress: p };
  }
  return { state: s, existed: true };
}

/** The state of a loop that already passed, read without writing anything; null otherwise. */
export function peekPassed(path: string): LoopState | null {
  if (!existsSync(path)) return null;
  let loaded;
  try {
    loaded = loadState(path, new Date(0).toISOString());
  } catch {
    return null; // the normal path refuses it, with the lock handling that goes with it
  }
  return loaded.state.status === 'passed' ? loaded.state : null;
}

/** A reader (or a kill -9) never sees half a state file: the new one replaces the old in one rename. */
export function writeStateAtomic(path: string, state: LoopState): void {
  const tmp = `${path}.${process.pid}.tmp`;
  // wall_clock_used_sec is a float in Looper's state (`round(x, 1)`): 3 s is written 3.0.
  writeFileSync(tmp, `${looperJson({ ...state, wall_clock_used_sec: new PyFloat(state.wall_clock_used_sec) }, 2)}\n`);
  renameSync(tmp, path);
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Whether /proc says the process is a loop runner (a lock from before start times were recorded). */
function looksLikeRunner(pid: number): boolean | null {
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return null;
  }
  return argv.some((a) => /(^|\/)(loop-run|loop)(\.js)?$/.test(a) || /\/(loop-run|loop)\/(bin|dist)\//.test(a));
}

/**
 * Whether the lock's holder is still the process that took it. A pid alone is not enough: after a
 * crash or a reboot the pid can belong to any live process, which would block the loop forever.
 */
function holderAlive(pid: number, start: string | undefined): boolean {
  if (!alive(pid)) return false;
  const now = processStart(pid);
  if (now === null) return true; // no /proc: the pid is all there is to go on
  if (start !== undefined) return now === start;
  return looksLikeRunner(pid) !== false;
}

/**
 * Makes `path` hold `content` in one step, or returns false when it exists: the lock is written beside
 * it and hard-linked into place, so no reader ever finds an empty lock and takes it for a stale one.
 * A filesystem without hard links gets the exclusive create and write it had before.
 */
function createHolding(path: string, content: string): boolean {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, content, { flag: 'wx' });
  try {
    linkSync(tmp, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw error;
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e;
    }
    writeFileSync(fd, content);
    closeSync(fd);
    return true;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** A lock's text, or undefined when it is gone. */
function readLock(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Throws when the lock's holder still runs (or cannot be checked from here); returns when it is stale. */
function refuseLiveHolder(path: string, text: string): void {
  const [pidLine, startLine, scopeLine] = text.split('\n');
  const pid = Number.parseInt(pidLine ?? '', 10);
  const start = startLine?.trim() ? startLine.trim() : undefined;
  // A holder of an earlier boot ended with it. One of another pid namespace (a container sharing
  // the folder) cannot be seen from here at all: its pid means some other process, or none.
  const scope = pidScopeRelation(scopeLine);
  if (scope === 'other-namespace') {
    throw new InputError(`the lock ${path} was taken by pid ${pidLine ?? '?'} of another pid namespace (a container sharing this folder?), which cannot be checked from here: remove the lock if that loop-run has ended`);
  }
  if (scope !== 'earlier-boot' && Number.isInteger(pid) && pid > 0 && pid !== process.pid && holderAlive(pid, start)) {
    throw new InputError(`another loop-run (pid ${pid}) is running this loop (lock ${path})`);
  }
}

const pause = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * One runner per workspace. A lock left by a dead process (kill -9), or by a pid now reused, is taken
 * over, by one taker at a time: two runs started together on a stale lock must not both remove it
 * (the second would remove the first's new lock and run beside it). A taker holds `<lock>.takeover`
 * while it checks the lock again and removes it; a takeover lock whose holder died is stale in turn.
 */
export function acquireLock(path: string): () => void {
  // The pid's start time and scope (pid namespace, boot): with them the pid names one process.
  const mine = `${process.pid}\n${processStart(process.pid) ?? ''}\n${pidScope() ?? ''}\n`;
  const takeover = `${path}.takeover`;
  for (let attempt = 0; attempt < 200; attempt += 1) {
    if (createHolding(path, mine)) {
      return () => {
        try {
          unlinkSync(path);
        } catch {
          /* already gone */
        }
      };
    }
    const seen = readLock(path);
    if (seen === undefined) continue;
    // Only a lock from before locks were linked into place, or cut short by a full disk, is empty:
    // give its writer a moment before calling it stale.
    if (seen.trim() === '' && attempt < 20) {
      pause(25);
      continue;
    }
    refuseLiveHolder(path, seen);
    if (!createHolding(takeover, mine)) {
      const other = readLock(takeover);
      try {
        if (other !== undefined) refuseLiveHolder(takeover, other);
        // Its taker died mid-takeover: clear it, unless a live one replaced it meanwhile.
        if (other !== undefined && readLock(takeover) === other) unlinkSync(takeover);
      } catch (error) {
        if (!(error instanceof InputError)) throw error;
        pause(10); // a live taker is at it: it needs a few milliseconds
      }
      continue;
    }
    try {
      // Still the stale lock judged above (not a live one a faster taker made meanwhile)?
      if (readLock(path) === seen) unlinkSync(path);
    } finally {
      rmSync(takeover, { force: true });
    }
  }
  throw new InputError(`could not take the lock ${path}`);
}
