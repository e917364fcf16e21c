// Real pipes for a command's output. Node gives a child a socketpair where it is asked for a pipe,
// and a program that opens /dev/stdout or /dev/stderr (`echo x > /dev/stderr`, `tee /dev/stdout`,
// `curl -o /dev/stdout`) fails on a socket with ENXIO: the kernel opens /proc/self/fd/N anew, which
// a pipe allows and a socket does not. Under a terminal, make or Python those commands work, so in
// the sandbox they would fail for no fault of the docs. A FIFO is a pipe Node can open: made with
// mkfifo, opened at both ends, unlinked at once.
//
// One way a FIFO differs from pipe(2): once every reader is gone, opening it for writing waits for
// the next reader instead of succeeding (and dying of SIGPIPE at the first write). runProcess keeps
// reading a command's output for as long as anything holds it, and what holds it lives no longer
// than the sandbox, so inside the sandbox that never shows. The model CLIs and a loop's checks, run
// on the host with cli-kit's runChild, keep Node's own pipes: a stray there could wait for good, and
// a refill (a process of its own) would cost a loop call a few milliseconds.
import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One pipe's two ends, each a descriptor of its own (so making ours non-blocking leaves the child's as it is). */
export interface PipeEnds {
  read: number;
  write: number;
}

/** Made a batch at a time (one mkfifo process, a few milliseconds), handed out one at a time: four commands' worth, eight idle descriptors at most. */
const BATCH = 8;
const pool: PipeEnds[] = [];
/** Refills that failed in a row; after a few (no mkfifo, a TMPDIR without room or without FIFOs) the caller's fallback is taken for good. */
let failures = 0;
const MAX_FAILURES = 3;

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

function refill(): void {
  let dir: string | undefined;
  const before = pool.length;
  try {
    dir = mkdtempSync(join(tmpdir(), 'ql-pipes-'));
    const names = Array.from({ length: BATCH }, (_, i) => join(dir as string, String(i)));
    // Open to anyone: a command under another uid (the sandbox's user) opens /proc/self/fd/1 by the
    // inode's mode. Nobody else can reach them: made in a folder only we may enter, unlinked at once.
    const made = spawnSync('mkfifo', ['-m', '666', ...names], { stdio: 'ignore' });
    if (made.error !== undefined || made.status !== 0) return;
    for (const name of names) {
      // Opened read-write first, a FIFO has a reader and a writer, so neither blocking open below waits.
      const both = openSync(name, constants.O_RDWR);
      let read: number | undefined;
      try {
        read = openSync(name, constants.O_RDONLY);
        const write = openSync(name, constants.O_WRONLY);
        pool.push({ read, write });
        read = undefined;
      } finally {
        if (read !== undefined) closeQuietly(read);
        closeSync(both);
      }
    }
  } catch {
    // Out of descriptors, say: what was opened stays in the pool, and the caller falls back to Node's own.
  } finally {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    failures = pool.length > before ? 0 : failures + 1;
  }
}

/**
 * `count` pipes for one child's output, or undefined when they cannot be had (no mkfifo, no
 * descriptors left): the caller then gives the child Node's own stdio. The caller owns the
 * descriptors: it passes the write ends to spawn, closes them once the child has its copies, and
 * reads the read ends with `pipeStream`. Output only: a FIFO opened anew for reading (/dev/stdin)
 * once every writer is gone waits for the next writer for good, where a pipe(2) gives end of file.
 */
export function takePipes(count: number): PipeEnds[] | undefined {
  if (failures >= MAX_FAILURES && pool.length < count) return undefined;
  if (pool.length < count) refill();
  if (pool.length < count) return undefined;
  return pool.splice(0, count);
}

/** The read end of a child's stdout or stderr as a stream. */
export function pipeStream(fd: number): Socket {
  return new Socket({ fd, readable: true, writable: false });
}

/** Closes descriptors whatever state they are in (the child's ends, once it has its copies). */
export function closeEnds(...fds: number[]): void {
  for (const fd of fds) closeQuietly(fd);
}
