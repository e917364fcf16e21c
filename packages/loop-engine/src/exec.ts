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
  /** stdout passed CHECK_OUTPUT_BYTES, so `stdout` is only its tail. */
  truncated: boolean;
  /** Whether `contains` (when asked for) appeared anywhere in stdout, also before the kept tail. */
  containsSeen?: boolean;
}

export interface ExecOptions {
  cwd: string;
  input?: string;
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** The grace between SIGTERM and SIGKILL once a call has to end. */
  killGraceMs?: number;
  /** Text to look for in the whole of stdout as it streams (stdout_contains): the kept tail may have lost it. */
  contains?: string;
}

/** What of a check's stdout is kept: its last 16 MiB (a check that floods its output must not exhaust memory). */
export const CHECK_OUTPUT_BYTES = 16 * 1024 * 1024;

/** The warning for output cut to its tail: what is missing from a review or context.md is said, never silent. */
export const tailKeptWarning = (what: string): string => `${what} printed more than ${CHECK_OUTPUT_BYTES / 2 ** 20} MiB; only its last ${CHECK_OUTPUT_BYTES / 2 ** 20} MiB were kept`;

/**
 * Output as Looper's runner reads it (Python's universal newlines): `\r\n` and a lone `\r` are each
 * one `\n`. So a CLI or a check that prints CRLF, or redraws a spinner with `\r`, writes the same
 * artifact, context and review here as there, and stdout_contains matches the same lines.
 */
export const universalNewlines = (text: string): string => text.replace(/\r\n?/g, '\n');

export async function runArgv(argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
  const search = options.contains === undefined ? undefined : streamSearch(options.contains);
  const { contains: _contains, ...childOptions } = options;
  // keepBom: read as Python's utf-8 text mode reads it, a leading BOM kept.
  const r = await runChild(argv, { ...childOptions, maxOutputBytes: CHECK_OUTPUT_BYTES, overflow: 'tail', keepBom: true, ...(search ? { onStdout: search.push } : {}) });
  if (r.spawnError) {
    const exitCode = r.spawnError.code === 'ENOENT' || r.spawnError.code === 'EACCES' ? 127 : 126;
    return { exitCode, stdout: '', stderr: `${argv[0]}: ${r.spawnError.message}\n`, timedOut: false, truncated: false, durationMs: r.durationMs, spawnError: r.spawnError.message, ...(search ? { containsSeen: false } : {}) };
  }
  // The decoded tail is asked too: a needle holding U+FFFD can match text the decoder made.
  const stdout = universalNewlines(r.stdout);
  const containsSeen = search ? search.seen() || stdout.includes(options.contains!) : undefined;
  return { exitCode: r.timedOut ? 124 : exitCodeOf(r.exitCode, r.signal), stdout, stderr: universalNewlines(r.stderr), timedOut: r.timedOut, truncated: r.outputExceeded, durationMs: r.durationMs, ...(containsSeen === undefined ? {} : { containsSeen }) };
}

/**
 * Looks for `text` in a byte stream chunk by chunk, carrying the bytes a match could straddle. A
 * valid UTF-8 needle is found in the bytes exactly where it is found in their decoding (a decoder
 * never merges a whole, valid sequence with the bytes around it). The stream is searched with its
 * newlines made universal, as the kept text is: a `\r` at a chunk's end waits for the next byte.
 */
function streamSearch(text: string): { push: (chunk: Buffer) => void; seen: () => boolean } {
  const needle = Buffer.from(text, 'utf8');
  let carry = Buffer.alloc(0);
  let found = needle.length === 0;
  let heldCr = false;
  const search = (chunk: Buffer): void => {
    const window = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    if (window.indexOf(needle) !== -1) {
      found = true;
      return;
    }
    carry = Buffer.from(window.subarray(Math.max(0, window.length - (needle.length - 1))));
  };
  return {
    push(raw) {
      if (found) return;
      let bytes = heldCr ? Buffer.concat([CR, raw]) : raw;
      heldCr = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d;
      if (heldCr) bytes = bytes.subarray(0, -1);
      // CR and LF are single bytes that never occur inside a UTF-8 sequence: latin1 maps bytes one to one.
      search(bytes.includes(0x0d) ? Buffer.from(universalNewlines(bytes.toString('latin1')), 'latin1') : bytes);
    },
    seen: () => {
      if (heldCr && !found) search(LF);
      heldCr = false;
      return found;
    },
  };
}

const CR = Buffer.from('\r');
const LF = Buffer.from('\n');

