// run(opts, io): loop-run as tests call it — events on stdout, people on stderr, answers from stdin.
import { LoopExit } from '@quickloop/cli-kit/exit-codes';
import type { Io } from '@quickloop/cli-kit/io';
import { createLogger, type LogLevel } from '@quickloop/cli-kit/logger';
import { terminalSafe } from '@quickloop/cli-kit/safe-text';
import { LineReader, answerOrInterrupt, checkConsentIds, loadSpec, openEvents, refusePlaceholders } from '@quickloop/loop-engine';
import { runLoop } from './runner.js';

export interface RunOptions {
  /** The resolved spec (or loop.yaml); its directory is the loop directory. */
  spec: string;
  /** Extra attempts for a transient model CLI failure. */
  retries: number;
  /** Base of the jittered exponential backoff between attempts. */
  retryDelayMs: number;
  /** Members consented to up front (`--consent ID`); everyone else is asked on stdin. */
  consent: string[];
  level: LogLevel;
  /** Also write the events to this file (NDJSON), whatever stdout is. */
  events?: string;
}

export async function run(opts: RunOptions, io: Io): Promise<number> {
  const log = createLogger({ stream: io.stderr, env: io.env, level: opts.level });
  const runId = io.newId();
  const answers = new LineReader(() => io.stdin);
  // A reader that went away (`| head`) stops the events, not the loop: exit 0 must keep meaning
  // "passed", so the run goes on and its state and exit code stay the record.
  // On a terminal a person reads a progress view instead of NDJSON (which goes to --events FILE).
  const { emit, flush, viewing } = openEvents({ io, stage: 'loop-run', runId: () => runId, ...(opts.events ? { eventsFile: opts.events } : {}) });
  try {
    let code: number;
    try {
      const loaded = loadSpec(opts.spec, io.cwd, io.env);
      checkConsentIds(loaded.spec, opts.consent);
      refusePlaceholders(loaded);
      const outcome = await runLoop(
        loaded,
        {
          emit,
          ask: async (question) => {
            // A prompt quotes the spec (commands, file names): shown with its controls made visible.
            io.stderr.write(terminalSafe(question.endsWith(' ') ? question : `${question}\n`, 'block'));
            // A signal must not wait for an answer that may never come (a TTY left open).
            return answerOrInterrupt(answers, io.signal);
          },
          info: (l) => {
            if (!viewing) log.info(l);
          },
          // Warnings quote models and their CLIs (issues, stderr); the logger keeps SGR, so make them text first.
          warn: (l) => log.warn(log.color.yellow(terminalSafe(l, 'block'))),
          now: io.now,
          newId: io.newId,
          viewing,
        },
        { env: io.env, signal: io.signal, retries: opts.retries, retryBaseMs: opts.retryDelayMs, consentFlags: new Set(opts.consent), runId },
      );
      code = outcome.code;
    } catch (error) {
      // Refused before anything was written (bad spec, escape, lock): the stream still ends with a terminal event.
      const message = error instanceof Error ? error.message : String(error);
      emit('loop.failed', {
        status: 'failed',
        failure: message,
        exit_code: LoopExit.error,
        iteration: 0,
        wall_clock_used_sec: 0,
        usage: { input_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, output_tokens: 0, reasoning_tokens: 0, usd: null, calls: 0, calls_without_usage: 0 },
      });
      await flush();
      throw error;
    }
    await flush();
    return code;
  } finally {
    answers.close();
  }
}
