// Runs one argv (never a shell) with input on stdin and a deadline, reporting as a shell would: 124 on timeout, 127 when it cannot start.
import { exitCodeOf, runChild } from '@quickloop/cli-kit/process-group';

export interface ExecResult {
  /** 124 on timeout, 127 when the program cannot be started, 128+n on a signal. */
  exitCode: number;
  /** The last CHECK_OUTPUT_BYTES of stdout. */
  stdout: string;
  /** The last 64 KiB of stderr. */
  stderr: string;
  timedOut: boolean;
  durationMs: number;
  /** The spawn error when the program could not be started at all. */
  spawnError?: string;
}

export interface ExecOptions {
  cwd: string;
  input?: string;
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** The grace between SIGTERM and SIGKILL once a call has to end. */
  killGraceMs?: number;
}

/** What of a check's stdout is kept: its last 16 MiB (a check that floods its output must not exhaust memory). */
export const CHECK_OUTPUT_BYTES = 16 * 1024 * 1024;

export async function runArgv(argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
  const r = await runChild(argv, { ...options, maxOutputBytes: CHECK_OUTPUT_BYTES, overflow: 'tail' });
  if (r.spawnError) {
    const exitCode = r.spawnError.code === 'ENOENT' || r.spawnError.code === 'EACCES' ? 127 : 126;
    return { exitCode, stdout: '', stderr: `${argv[0]}: ${r.spawnError.message}\n`, timedOut: false, durationMs: r.durationMs, spawnError: r.spawnError.message };
  }
  return { exitCode: r.timedOut ? 124 : exitCodeOf(r.exitCode, r.signal), stdout: r.stdout, stderr: r.stderr, timedOut: r.timedOut, durationMs: r.durationMs };
}
