// The exit-code tables (ARCHITECTURE.md): one per family, never changed once published.

/** Exit codes of `qs-*` binaries and `qs`. */
export const QsExit = {
  /** Every evidential run passed (or, for qs-validate, every file is valid). */
  passed: 0,
  /** A negative verdict: the docs did not get the agent to the goal. */
  docsGap: 1,
  /** Only inconclusive or skipped runs: nothing to judge the docs by. */
  noEvidence: 2,
  /** Usage error or invalid input (a bad flag, task file or stream line). */
  usage: 3,
  /** Interrupted (SIGINT/SIGTERM/SIGHUP) or stopped by a spend cap. */
  interrupted: 130,
} as const;

/** Exit codes of `loop-*` binaries and `loop` (Looper's runner contract). */
export const LoopExit = {
  /** The loop passed every gate. */
  passed: 0,
  /** It ran and failed: caps, no progress, or a revise verdict. */
  failed: 1,
  /** Refusal or error: bad spec, workspace escape, consent refused, no interactive input. */
  error: 2,
} as const;

export type Family = 'qs' | 'loop';

/** What went wrong, independent of the family's numbering. */
export type ErrorKind = 'usage' | 'input' | 'interrupted' | 'internal';

/** Maps an error kind to the family's exit code. A crash never leaks as 1 (a verdict). */
export function exitCodeFor(family: Family, kind: ErrorKind): number {
  if (family === 'qs') {
    switch (kind) {
      case 'usage':
      case 'input':
        return QsExit.usage;
      case 'interrupted':
        return QsExit.interrupted;
      case 'internal':
        return QsExit.noEvidence;
    }
  }
  return kind === 'interrupted' ? 130 : LoopExit.error;
}
