// In-memory streams for calling run(opts, io) in tests: stdin from a string, stdout/stderr captured.
import { PassThrough, Readable } from 'node:stream';
import type { Io } from './io.js';
import { sequentialIds, steppingClock } from './io.js';

export interface MemoryIo extends Io {
  /** Everything written to stdout so far. */
  out(): string;
  /** Everything written to stderr so far. */
  err(): string;
  abort(reason?: unknown): void;
}

export function memoryIo(options: { stdin?: string | Readable; env?: Record<string, string | undefined>; cwd?: string } = {}): MemoryIo {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const controller = new AbortController();
  const stdin = options.stdin instanceof Readable ? options.stdin : Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]);
  return {
    stdin,
    stdout,
    stderr,
    env: options.env ?? { NO_COLOR: '1' },
    cwd: options.cwd ?? process.cwd(),
    signal: controller.signal,
    now: steppingClock(),
    newId: sequentialIds(),
    out: () => out,
    err: () => err,
    abort: (reason) => controller.abort(reason),
  };
}
