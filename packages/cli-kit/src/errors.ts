// Typed errors: libraries throw these; only runBin turns them into an exit code.
import type { ErrorKind } from './exit-codes.js';

/** Base of every error that the entry point knows how to report in one line. */
export class CliError extends Error {
  readonly kind: ErrorKind;
  /** An explicit exit code overrides the family's mapping of `kind`. */
  readonly exitCode: number | undefined;
  constructor(kind: ErrorKind, message: string, options?: { exitCode?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.kind = kind;
    this.exitCode = options?.exitCode;
  }
}

/** A bad flag or argument. */
export class UsageError extends CliError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('usage', message, options);
  }
}

/** Bad input data: a task file, a stream line, a spec. The message names file:line or field. */
export class InputError extends CliError {
  constructor(message: string, options?: { exitCode?: number; cause?: unknown }) {
    super('input', message, options);
  }
}

/** The run was interrupted by a signal (or a spend cap). */
export class InterruptedError extends CliError {
  constructor(message = 'interrupted', options?: { exitCode?: number }) {
    super('interrupted', message, options);
  }
}

/** Ends the process with a given code and an optional message, e.g. a verdict already reported. */
export class ExitError extends CliError {
  constructor(exitCode: number, message = '') {
    super('internal', message, { exitCode });
  }
}

/** Thrown by writers once the downstream reader has gone away (`| head`): a quiet, successful end. */
export class PipeClosedError extends Error {
  constructor() {
    super('downstream pipe closed');
    this.name = 'PipeClosedError';
  }
}

export function isPipeClosed(error: unknown): boolean {
  if (error instanceof PipeClosedError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED' || code === 'ERR_STREAM_WRITE_AFTER_END';
}
