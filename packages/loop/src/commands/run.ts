// `loop run SPEC`: delegates to loop-run (the runner contract); the same flags, events and exit codes.
import { logLevel } from '@quickloop/cli-kit/logger';
import { run as loopRun } from '@quickloop/loop-run';
import type { LoopCommand } from '../command.js';
import { intFlag } from '../int-flag.js';

export const runCommand: LoopCommand = {
  name: 'run',
  summary: 'Run a loop (loop.resolved.json or loop.yaml) under the runner contract; same as loop-run',
  synopsis: 'loop run SPEC [--consent ID]... [--retries N] [--retry-delay-ms MS]',
  // The stages' own flags, as loop-run and loop-gate parse them: --consent adds up when repeated.
  argparse: false,
  positionals: { min: 1, max: 1, names: 'SPEC' },
  configure: (y) =>
    y
      .option('events', { type: 'string', describe: 'Also write the events (NDJSON) to FILE; on a terminal stdout shows progress instead' })
      .option('consent', { type: 'string', array: true, default: [] as string[], describe: 'Consent to sending to this member up front (repeatable)' })
      .option('retries', { type: 'string', default: '2', describe: 'Extra attempts for a transient model CLI failure' })
      .option('retry-delay-ms', { type: 'string', default: '1000', describe: 'Base of the jittered backoff between attempts' }),
  run: (args, io) =>
    loopRun(
      {
        spec: args.positionals[0] as string,
        consent: (args.consent as unknown[]).map(String),
        ...(args.events !== undefined ? { events: String(args.events) } : {}),
        retries: intFlag(args.retries, 'retries', 0, 'run'),
        retryDelayMs: intFlag(args['retry-delay-ms'], 'retry-delay-ms', 0, 'run'),
        level: logLevel({ quiet: args.quiet === true, verbose: args.verbose === true }),
      },
      io,
    ),
};
