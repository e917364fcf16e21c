// One attempt's `qs-sandbox | qs-agent | qs-check` in one process: `qs run` starts this once per
// attempt instead of three Node processes. Starting Node and loading a stage was most of a short
// attempt's CPU, and the three started at once, so a lone attempt already kept more than one core
// busy and a second worker had little left to use.
//
// Each stage is its own `cli(argv, io)`, the function its binary runs, so what a stage does cannot
// drift from the typed pipe. What the processes had from the operating system is given here:
// - a pipe between stages, which ends once the writer has returned and its callbacks are done (when its
//   process exited), and breaks when the reader returns: the writer's next write fails with EPIPE,
//   which its EventWriter stops on;
// - each stage's own abort signal: on an interrupt, qs-sandbox and qs-agent are stopped at once, and
//   qs-check only once its check has started (before, it is still reading the upstream stages'
//   ends of their runs, which must reach the stream);
// - runBin's exit code for a throw (a usage error is 3, a closed pipe 0, a crash the internal code).
import { existsSync } from 'node:fs';
import { PassThrough, Writable, type Readable } from 'node:stream';
import { exitCodeFor, reportError, type Io } from '@quickloop/cli-kit';
import { removeLayout } from '@quickloop/sandbox';

export const HOSTED_STAGES = ['qs-sandbox', 'qs-agent', 'qs-check'] as const;
export type HostedStage = (typeof HOSTED_STAGES)[number];
export type StageCli = (argv: string[], io: Io) => Promise<number>;

/**
 * Resolves once `out` has drained and a whole turn of the event loop went by without a byte more:
 * what a stage's callbacks still write after its cli() settled (an EventWriter's scheduled flush).
 * A process lived on for those before it exited and its pipe closed; here the pipe waits for them.
 */
async function settled(out: Writable, written: () => number): Promise<void> {
  for (;;) {
    const before = written();
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (out.destroyed || out.writableEnded) return;
    if (out.writableNeedDrain) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          out.off('drain', done);
          out.off('close', done);
          resolve();
        };
        out.on('drain', done);
        out.on('close', done);
      });
    } else if (written() === before) return;
  }
}

/** A stage's cli() as runBin runs it: a throw becomes its one-line message and exit code. */
export async function callStage(name: string, cli: StageCli, argv: string[], io: Io, stdoutClosed: () => boolean): Promise<number> {
  try {
    return await cli(argv, io);
  } catch (error) {
    const code = reportError(error, { name, family: 'qs' }, io, stdoutClosed());
    return code === 0 && io.signal.aborted ? exitCodeFor('qs', 'interrupted') : code;
  }
}

/**
 * A pipe between two stages, as the kernel's behaves: the reader sees the end once the writer ends it;
 * once the reader has gone (its stage returned, or it stopped reading and let go of its stdin), the
 * writer's next write fails with EPIPE, and only a write does (runBin's rule for a throw after it).
 */
class StagePipe {
  readonly reader = new PassThrough();
  /** Bytes the writer has written (settled() watches it). */
  bytes = 0;
  /** A write failed because the reader had gone. */
  broken = false;
  #gone = false;
  readonly writer = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      if (this.#gone || this.reader.destroyed) return done(this.#epipe());
      this.onChunk?.(chunk);
      this.bytes += chunk.length;
      if (this.reader.write(chunk)) return done();
      // Backpressure as a full pipe's: the writer waits for the reader, or for its going.
      const settle = (): void => {
        this.reader.off('drain', settle);
        this.reader.off('close', settle);
        done(this.#gone || this.reader.destroyed ? this.#epipe() : undefined);
      };
      this.reader.on('drain', settle);
      this.reader.on('close', settle);
    },
    final: (done) => {
      if (!this.reader.destroyed) this.reader.end();
      done();
    },
  });

  constructor(readonly onChunk?: (chunk: Buffer) => void) {
    // A failed write is also an 'error' on the writer, which its EventWriter takes as the pipe closed.
    this.writer.on('error', () => undefined);
    this.reader.on('error', () => undefined);
  }

  /** The reader's stage has returned. */
  close(): void {
    this.#gone = true;
    this.reader.destroy();
  }

  #epipe(): Error {
    this.broken = true;
    return Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
  }
}

/**
 * Runs the three stages, stdin to stdout, and resolves with their exit codes in pipe order. With
 * `handOff`, the sandbox folders the attempt is done with are handed to it instead of removed here.
 */
export async function hostAttempt(clis: Record<HostedStage, StageCli>, argvOf: Record<HostedStage, string[]>, io: Io, handOff?: (root: string) => void): Promise<number[]> {
  const controllers = HOSTED_STAGES.map(() => new AbortController());
  let checking = false;
  const interrupt = (): void => {
    controllers[0]?.abort(io.signal.reason);
    controllers[1]?.abort(io.signal.reason);
    if (checking) controllers[2]?.abort(io.signal.reason);
  };
  if (io.signal.aborted) interrupt();
  else io.signal.addEventListener('abort', interrupt, { once: true });

  // qs-check's stream is watched for check.started: from then on an interrupt is for it too.
  let partial = '';
  let lastBytes = 0;
  const last = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!checking) {
        const lines = (partial + chunk.toString('utf8')).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) {
          if (!line.includes('check.started')) continue;
          try {
            if ((JSON.parse(line) as { type?: unknown }).type === 'check.started') checking = true;
          } catch {
            // not an event: qs-check's own reader is the one to say so
          }
        }
        if (checking) {
          partial = '';
          if (io.signal.aborted) controllers[2]?.abort(io.signal.reason);
        }
      }
      lastBytes += chunk.length;
      io.stdout.write(chunk, done);
    },
  });
  last.on('error', () => undefined);

  // The sandbox qs-sandbox made, seen on its way to qs-agent: qs-check removes it at the end of a run,
  // but a stage that refused its flags or input ends the pipeline before qs-check sees a run.
  let made: { root: string; keep: boolean } | null = null;
  let sandboxPartial = '';
  const watchSandbox = (chunk: Buffer): void => {
    if (made !== null) return;
    const lines = (sandboxPartial + chunk.toString('utf8')).split('\n');
    sandboxPartial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('sandbox.ready')) continue;
      try {
        const e = JSON.parse(line) as { type?: unknown; root?: unknown; keep?: unknown };
        if (e.type === 'sandbox.ready' && typeof e.root === 'string') made = { root: e.root, keep: e.keep === true };
      } catch {
        // not an event: qs-agent's reader is the one to say so
      }
    }
  };
  const pipes = HOSTED_STAGES.slice(1).map((_, i) => new StagePipe(i === 0 ? watchSandbox : undefined));
  const codes = HOSTED_STAGES.map(async (name, i) => {
    const pipe = pipes[i];
    const stdin: Readable = i === 0 ? io.stdin : (pipes[i - 1] as StagePipe).reader;
    const stdout: Writable = pipe === undefined ? last : pipe.writer;
    const signal = (controllers[i] as AbortController).signal;
    const stageIo: Io = { stdin, stdout, stderr: io.stderr, env: io.env, cwd: io.cwd, signal, now: io.now, newId: io.newId, ...(handOff !== undefined && pipe === undefined ? { handOffRemoval: handOff } : {}) };
    const code = await callStage(name, clis[name], argvOf[name], stageIo, () => pipe?.broken === true);
    await settled(stdout, () => (pipe === undefined ? lastBytes : pipe.bytes));
    // As when the process exits: the reader downstream sees the end, the writer upstream a closed pipe.
    pipe?.writer.end();
    pipes[i - 1]?.close();
    return code;
  });
  const done = await Promise.all(codes);
  io.signal.removeEventListener('abort', interrupt);
  const left = made as { root: string; keep: boolean } | null;
  if (left !== null && !left.keep && handOff !== undefined) handOff(left.root);
  else if (left !== null && !left.keep && existsSync(left.root)) {
    try {
      // Only a folder with the layout's marker in it is removed.
      removeLayout({ root: left.root });
    } catch (error) {
      io.stderr.write(`qs: ${(error as Error).message}\n`);
    }
  }
  await new Promise<void>((resolve) => last.end(resolve));
  return done;
}
