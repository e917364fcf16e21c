// Runs one process in its own group with a timeout, merged capped output, and a kill that reaches its children.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { endGroups, exitCodeOf, groupAlive, signalGroup } from '@quickloop/cli-kit/process-group';
import type { Readable } from 'node:stream';
import type { DenialScanner } from './denials.js';
import type { LimitScanner } from './limit-hits.js';
import { OutputCap } from './output.js';
import { closeEnds, pipeStream, takePipes } from './stdio-pipes.js';
import type { ExecResult } from './types.js';

export interface RunOptions {
  file: string;
  args: string[];
  /** A file the process gets open read-only as fd 3, opened afresh for each process (its offset is its own). */
  fd3?: string;
  env: Record<string, string>;
  cwd: string;
  timeoutMs?: number;
  maxOutputChars?: number;
  signal?: AbortSignal;
  /** Told the process group id as soon as it exists (a backend keeps it to kill at close). */
  onGroup?: (pgid: number) => void;
  /** Reads each stream for refused filesystem accesses as it arrives (the enforced backend's). */
  scanner?: DenialScanner;
  /** Reads each stream for the lines that say a limit was hit (the enforced backend's; decided after exit). */
  limitScanner?: LimitScanner;
}

/**
 * How long the pipes may stay open after the command exited. A background job (`server &`) inherits
 * them and would otherwise hold the result forever; its later output is not the command's. The
 * pipes are then drained and discarded, never closed: a server that logs to a closed pipe dies of
 * SIGPIPE, and the next command expects it to answer.
 */
const DRAIN_AFTER_EXIT_MS = 150;

/** Kills a whole process group at once (a sandboxed command gets no grace); a group already gone is fine. */
export function killGroup(pgid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  signalGroup(pgid, signal);
}

export const groupExists = groupAlive;

/** Kills groups and waits, bounded, until the kernel has removed them: close() promises none is left. */
export function killGroupsAndWait(pgids: Iterable<number>, maxWaitMs = 2000): Promise<void> {
  return endGroups(pgids, 0, maxWaitMs);
}

/** O_CLOEXEC, as /proc/PID/fdinfo's `flags` (octal) has it on Linux. */
const O_CLOEXEC = 0o2000000;

let inherited: number[] | undefined;
let devNull: number | undefined;

/**
 * The descriptors this process got from its parent without close-on-exec (Node marks only the low,
 * contiguous ones at start): every child would inherit them. A command's shell closes all but its
 * stdio first thing, but until then the processes that enter the sandbox hold them, and any process
 * of the sandbox may open another's through /proc (a file the harness's parent left open, a pipe
 * to it). Read once: a process gets inherited descriptors only at its start, and Node opens its own
 * close-on-exec.
 */
export function inheritedDescriptors(): number[] {
  if (inherited !== undefined) return inherited;
  const found: number[] = [];
  try {
    for (const name of readdirSync('/proc/self/fd')) {
      const fd = Number(name);
      if (!Number.isInteger(fd) || fd < 3) continue;
      try {
        const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
        if (flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC) === 0) found.push(fd);
      } catch {
        // The readdir's own descriptor, closed by now.
      }
    }
  } catch {
    // No /proc (not Linux): nothing to cover.
  }
  inherited = found.sort((a, b) => a - b);
  return inherited;
}

/**
 * The stdio a child gets: `given` at its positions, and /dev/null over every inherited descriptor
 * past them, so a child holds none of the harness's (libuv leaves a position it is not given as it is).
 */
export function coveredStdio<T>(given: readonly T[]): Array<T | number | 'ignore'> {
  const over = inheritedDescriptors().filter((fd) => fd >= given.length);
  if (over.length === 0) return [...given];
  devNull ??= openSync('/dev/null', 'r');
  const stdio: Array<T | number | 'ignore'> = [...given];
  for (const fd of over) {
    while (stdio.length < fd) stdio.push('ignore');
    stdio[fd] = devNull;
  }
  return stdio;
}

export function runProcess(options: RunOptions): Promise<ExecResult> {
  const started = performance.now();
  const cap = new OutputCap(options.maxOutputChars);
  return new Promise<ExecResult>((resolve) => {
    let timedOut = false;
    let settled = false;
    // detached: a new process group (and session), so a timeout kills the command's children too.
    let child: ChildProcess;
    let fd3: number | undefined;
    // Real pipes where they can be had: a command may open /dev/stdout and /dev/stderr, as under any shell.
    const pipes = takePipes(2);
    try {
      if (options.fd3 !== undefined) fd3 = openSync(options.fd3, 'r');
      child = spawn(options.file, options.args, {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: coveredStdio<'ignore' | 'pipe' | number>(['ignore', pipes ? pipes[0]!.write : 'pipe', pipes ? pipes[1]!.write : 'pipe', ...(fd3 !== undefined ? [fd3] : [])]),
      });
    } catch (error) {
      if (pipes) closeEnds(pipes[0]!.read, pipes[1]!.read);
      // Node refuses some arguments before any process exists (a NUL byte), or fd3's file is gone: a result, never a throw.
      const output = `${options.file}: ${(error as Error).message}\n`;
      resolve({ exitCode: 127, output, originalChars: output.length, truncated: false, timedOut: false, durationMs: 0, denials: [], limitHits: [] });
      return;
    } finally {
      // The child has its own copies; the harness's would only leak (and keep the output from ever ending).
      if (fd3 !== undefined) closeSync(fd3);
      if (pipes) closeEnds(pipes[0]!.write, pipes[1]!.write);
    }
    // A spawn that fails for want of descriptors (EMFILE) leaves Node's own streams null.
    const stdout: Readable | null = pipes ? pipeStream(pipes[0]!.read) : child.stdout;
    const stderr: Readable | null = pipes ? pipeStream(pipes[1]!.read) : child.stderr;
    const pgid = child.pid;
    if (pgid !== undefined) options.onGroup?.(pgid);
    const scanner = options.scanner;
    const limitScanner = options.limitScanner;
    stdout?.on('data', (c: Buffer) => {
      cap.push(c);
      scanner?.push('stdout', c);
      limitScanner?.push('stdout', c);
    });
    stderr?.on('data', (c: Buffer) => {
      cap.push(c);
      scanner?.push('stderr', c);
      limitScanner?.push('stderr', c);
    });
    const stop = (): void => {
      if (pgid !== undefined) killGroup(pgid);
    };
    const timer = options.timeoutMs !== undefined && options.timeoutMs > 0 ? setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs) : undefined;
    const onAbort = (): void => stop();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) stop();

    const finish = (exitCode: number): void => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      const { output, originalChars, truncated } = cap.result();
      resolve({
        exitCode: timedOut ? 124 : exitCode,
        output,
        originalChars,
        truncated,
        lastLine: cap.lastLine(),
        timedOut,
        durationMs: Math.max(0, Math.round(performance.now() - started)),
        denials: scanner?.end() ?? [],
        // Decided by the backend once the command is over (open.ts): it alone has the counters.
        limitHits: [],
      });
    };
    child.once('error', (error) => {
      cap.push(`${options.file}: ${error.message}\n`);
      finish(127);
    });
    child.once('exit', (code, signal) => {
      const exitCode = exitCodeOf(code, signal, 129);
      let open = 2;
      const done = (): void => {
        open -= 1;
        if (open === 0) finish(exitCode);
      };
      for (const stream of [stdout, stderr]) {
        if (stream === null || stream.readableEnded) done();
        else stream.once('end', done);
      }
      setTimeout(() => {
        for (const stream of [stdout, stderr]) {
          if (stream === null) continue;
          stream.removeAllListeners('data');
          stream.on('data', () => undefined);
          // A job that escaped the group (setsid under `local`) must not keep the stage alive.
          (stream as unknown as { unref?: () => void }).unref?.();
        }
        finish(exitCode);
      }, DRAIN_AFTER_EXIT_MS).unref();
    });
  });
}
