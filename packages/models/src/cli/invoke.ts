// invokeCli: one model CLI call — argv only, prompt on stdin, a deadline that kills the whole tree, retries, parsing.
import { existsSync } from 'node:fs';
import { InterruptedError } from '@quickloop/cli-kit/errors';
import { withRetries, type RetryPolicy } from '../retry.js';
import { addUsage, type ErrorKind, type Usage } from '../types.js';
import { cliEnv } from './env.js';
import { runChild } from '@quickloop/cli-kit/process-group';
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
  /** Keep a BOM the output starts with (Python's utf-8 text mode keeps it; the default drops it). */
  keepBom?: boolean;
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

const DEFAULT_MAX_OUTPUT = 16 * 1024 * 1024;
/** Spawn failures that say this machine ran short for a moment, not that the CLI cannot run. */
const OUT_OF_RESOURCES = new Set(['EMFILE', 'ENFILE', 'EAGAIN', 'ENOMEM']);
const TAIL = 2000;

interface AttemptResult {
  result: CliResult;
  transient: boolean;
}

async function attemptOnce(options: InvokeCliOptions, remainingMs: number, started: number): Promise<AttemptResult> {
  const file = options.argv[0];
  const grace = options.killGraceMs ?? 2000;
  const env = options.env ?? cliEnv(process.env);
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const done = await runChild(options.argv, {
    cwd: options.cwd,
    env,
    input: options.prompt,
    timeoutMs: remainingMs,
    killGraceMs: grace,
    maxOutputBytes: maxBytes,
    overflow: options.overflow ?? 'kill',
    ...(options.keepBom ? { keepBom: true } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (done.aborted) throw new InterruptedError(`model CLI ${file} interrupted`);
  const { stdout, stderr, timedOut } = done;
  const tail = options.overflow === 'tail';
  const base = {
    exitCode: done.exitCode,
    signal: done.signal,
    timedOut,
    durationMs: Math.round(performance.now() - started),
    attempts: 1,
    stderrTail: stderr.slice(-TAIL),
    ...(tail && done.outputExceeded ? { outputTruncated: true } : {}),
  };
  const code = done.spawnError?.code;
  if (code !== undefined && OUT_OF_RESOURCES.has(code)) {
    // This machine ran short (descriptors, processes, memory): nothing is wrong with the CLI, and a retry may start it.
    return { result: { ...base, text: '', exitCode: 127, errorKind: 'infra', message: `cannot start ${file} now: ${code}` }, transient: true };
  }
  if (code !== undefined) {
    // spawn itself failed: nothing ran. A missing cwd also reports ENOENT, so say which one it was.
    const what =
      code !== 'ENOENT' ? `cannot run ${file}: ${code}` : existsSync(options.cwd) ? `command not found: ${file}` : `working directory not found: ${options.cwd}`;
    return { result: { ...base, text: '', exitCode: 127, errorKind: 'config', message: what }, transient: false };
  }
  if (timedOut) {
    return { result: { ...base, text: '', errorKind: 'infra', message: `timed out; the process tree was killed` }, transient: false };
  }
  if (done.outputExceeded && !tail) {
    return { result: { ...base, text: '', errorKind: 'harness', message: `output exceeded ${maxBytes} bytes; the CLI was killed` }, transient: false };
  }
  if (done.exitCode === null) {
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
