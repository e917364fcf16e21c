// invokeCli: one model CLI call — argv only, prompt on stdin, a deadline that kills the whole tree, retries, parsing.
import { existsSync } from 'node:fs';
import { InterruptedError } from '@quickloop/cli-kit/errors';
import { withRetries, type RetryPolicy } from '../retry.js';
import { addUsage, type ErrorKind, type Usage } from '../types.js';
import { cliEnv } from './env.js';
import { endGroup, groupAlive } from '@quickloop/cli-kit/process-group';
import { parseCliOutput, type OutputMode, type ParsedOutput } from './parse.js';

export interface InvokeCliOptions {
  /** The command and its arguments; never run through a shell. */
  argv: string[];
  /** Written to stdin, then stdin is closed. */
  prompt: string;
  cwd: string;
  /** The CLI's whole environment, used as given. Default: the safe subset of this process's (`cliEnv`). */
  env?: Record<string, string>;
  /** The deadline for the call, retries and backoff included. */
  timeoutMs: number;
  /** Aborting kills the tree and rejects with InterruptedError. */
  signal?: AbortSignal;
  outputMode?: OutputMode;
  /** Per stream; more output than this kills the CLI and is a harness error (default 16 MiB). */
  maxOutputBytes?: number;
  /**
   * What more output than maxOutputBytes means: `kill` (the default) ends the call as a harness error;
   * `tail` lets the CLI finish and keeps the last maxOutputBytes of stdout (`outputTruncated` says so).
   */
  overflow?: 'kill' | 'tail';
  /** Between SIGTERM and SIGKILL (default 2000 ms). */
  killGraceMs?: number;
  /** Retries for transient failures (rate limits, overload, 5xx); `{ retries: 0 }` turns them off. */
  retry?: RetryPolicy;
  /** Called before each backoff wait with the failed attempt (1-based) and its result, e.g. to emit an event. */
  onRetry?: (failed: { attempt: number; waitMs: number; result: CliResult }) => void;
}

export interface CliResult {
  /** The answer: stdout in text mode, the parsed message in JSON modes ('' when there is none). */
  text: string;
  /** The last attempt's exit code; 127 when the binary was not found, null when killed by a signal. */
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  attempts: number;
  /** Known only in the JSON output modes. */
  usage?: Usage;
  costUsd?: number;
  /** Absent on success. */
  errorKind?: ErrorKind;
  /** One line on what went wrong. */
  message?: string;
  /** The last 2000 characters of stderr of the last attempt. */
  stderrTail: string;
  /** With `overflow: 'tail'`: stdout was longer than maxOutputBytes and only its tail was kept. */
  outputTruncated?: boolean;
}

/** The last `max` bytes of a stream, held in chunks so a long output never sits in memory whole. */
class Tail {
  readonly #max: number;
  #chunks: Buffer[] = [];
  #bytes = 0;
  dropped = false;
  constructor(max: number) {
    this.#max = max;
  }
  push(chunk: Buffer | string): void {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.#chunks.push(b);
    this.#bytes += b.length;
    while (this.#bytes - (this.#chunks[0]?.length ?? 0) >= this.#max) {
      this.#bytes -= this.#chunks.shift()!.length;
      this.dropped = true;
    }
  }
  text(): string {
    let all = Buffer.concat(this.#chunks);
    if (all.length > this.#max) {
      all = all.subarray(all.length - this.#max);
      this.dropped = true;
    }
    // A cut through a multi-byte character becomes U+FFFD, never an exception.
    return new TextDecoder('utf-8').decode(all);
  }
}

const DEFAULT_MAX_OUTPUT = 16 * 1024 * 1024;
const TAIL = 2000;

interface AttemptResult {
  result: CliResult;
  transient: boolean;
}

async function attemptOnce(options: InvokeCliOptions, remainingMs: number, started: number): Promise<AttemptResult> {
  const [file, ...args] = options.argv;
  const grace = options.killGraceMs ?? 2000;
  const env = options.env ?? cliEnv(process.env);
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const tails = options.overflow === 'tail' ? { out: new Tail(maxBytes), err: new Tail(64 * 1024) } : undefined;
  // Loaded at the first call, not at start-up: a binary that never calls a model CLI (--help, a
  // loop that stops before its host) does not pay for it.
  const { execa } = await import('execa');
  const subprocess = execa(file!, args, {
    input: options.prompt,
    cwd: options.cwd,
    env,
    extendEnv: false,
    // Its own process group, so a timeout can end the CLI and every helper it started.
    detached: true,
    reject: false,
    stripFinalNewline: false,
    encoding: 'utf8',
    maxBuffer: maxBytes,
    windowsHide: true,
    // Tail mode reads the streams itself, so nothing is buffered whole and nothing is killed for its length.
    ...(tails ? { buffer: false } : {}),
  });
  if (tails) {
    subprocess.stdout?.on('data', (c: Buffer | string) => tails.out.push(c));
    subprocess.stderr?.on('data', (c: Buffer | string) => tails.err.push(c));
  }
  const pgid = subprocess.pid;
  let timedOut = false;
  let aborted = false;
  let killing: Promise<void> | undefined;
  const killAll = () => (killing ??= pgid === undefined ? Promise.resolve() : endGroup(pgid, grace));
  const timer = setTimeout(() => {
    timedOut = true;
    void killAll();
  }, Math.max(0, remainingMs));
  const onAbort = () => {
    aborted = true;
    void killAll();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  // A helper the CLI left behind can hold stdout open after the CLI exits; end the group so the call ends too.
  subprocess.once('exit', () => {
    if (pgid !== undefined && groupAlive(pgid)) void killAll();
  });
  const done = await subprocess;
  clearTimeout(timer);
  options.signal?.removeEventListener('abort', onAbort);
  if (killing) await killing;
  if (aborted) throw new InterruptedError(`model CLI ${file} interrupted`);

  const stdout = tails ? tails.out.text() : typeof done.stdout === 'string' ? done.stdout : '';
  const stderr = tails ? tails.err.text() : typeof done.stderr === 'string' ? done.stderr : '';
  const base = {
    exitCode: done.exitCode ?? null,
    signal: done.signal ?? null,
    timedOut,
    durationMs: Math.round(performance.now() - started),
    attempts: 1,
    stderrTail: stderr.slice(-TAIL),
    ...(tails?.out.dropped ? { outputTruncated: true } : {}),
  };
  const code = (done as { code?: string }).code;
  if (done.exitCode === undefined && done.signal === undefined && code) {
    // spawn itself failed: nothing ran. A missing cwd also reports ENOENT, so say which one it was.
    const what =
      code !== 'ENOENT' ? `cannot run ${file}: ${code}` : existsSync(options.cwd) ? `command not found: ${file}` : `working directory not found: ${options.cwd}`;
    return { result: { ...base, text: '', exitCode: 127, errorKind: 'config', message: what }, transient: false };
  }
  if (timedOut) {
    return { result: { ...base, text: '', errorKind: 'infra', message: `timed out; the process tree was killed` }, transient: false };
  }
  if (done.isMaxBuffer) {
    return { result: { ...base, text: '', errorKind: 'harness', message: `output exceeded ${options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT} bytes; the CLI was killed` }, transient: false };
  }
  if (done.exitCode === undefined) {
    return { result: { ...base, text: '', errorKind: 'infra', message: `killed by ${done.signal ?? 'an unknown cause'}` }, transient: false };
  }
  const parsed: ParsedOutput = parseCliOutput(options.outputMode ?? 'text', stdout, stderr, done.exitCode);
  const result: CliResult = { ...base, text: parsed.text };
  if (parsed.usage) result.usage = parsed.usage;
  if (parsed.costUsd !== undefined) result.costUsd = parsed.costUsd;
  if (parsed.errorKind) result.errorKind = parsed.errorKind;
  if (parsed.message) result.message = parsed.message;
  return { result, transient: parsed.transient === true };
}

/**
 * Calls a model CLI once, retrying transient failures with jittered backoff while the deadline allows.
 * Never throws for a failed call (the result says why); throws InterruptedError on abort, TypeError on an empty argv.
 */
export async function invokeCli(options: InvokeCliOptions): Promise<CliResult> {
  if (options.argv.length === 0 || !options.argv[0]) throw new TypeError('invokeCli: argv must name a command');
  if (options.signal?.aborted) throw new InterruptedError('model CLI call interrupted before it started');
  const policy = options.retry ?? {};
  const now = policy.now ?? (() => performance.now());
  const started = performance.now();
  const deadline = now() + options.timeoutMs;
  let usageSoFar: Usage | undefined;
  let costSoFar: number | undefined;
  const { value, attempts } = await withRetries<CliResult>(
    async () => {
      const { result, transient } = await attemptOnce(options, deadline - now(), started);
      // Failed attempts still spent tokens when the CLI says so; a budget must see them.
      if (result.usage) usageSoFar = usageSoFar ? addUsage(usageSoFar, result.usage) : result.usage;
      if (result.costUsd !== undefined) costSoFar = (costSoFar ?? 0) + result.costUsd;
      return { value: result, retry: transient };
    },
    policy,
    {
      deadline,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onRetry ? { onRetry: ({ attempt, waitMs, value }: { attempt: number; waitMs: number; value: CliResult }) => options.onRetry?.({ attempt, waitMs, result: value }) } : {}),
    },
  ).catch((error: unknown) => {
    if (options.signal?.aborted) throw new InterruptedError('model CLI call interrupted');
    throw error;
  });
  const final: CliResult = { ...value, attempts, durationMs: Math.round(performance.now() - started) };
  if (usageSoFar) final.usage = usageSoFar;
  if (costSoFar !== undefined) final.costUsd = costSoFar;
  return final;
}
