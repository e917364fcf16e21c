// `loop gate SPEC GATE [ARTIFACT]`: delegates to loop-gate (one gate round); exit 0 pass, 1 revise, 2 error.
import { logLevel } from '@quickloop/cli-kit/logger';
import { run as loopGate } from '@quickloop/loop-gate';
import type { LoopCommand } from '../command.js';
import { intFlag } from '../int-flag.js';

export const gateCommand: LoopCommand = {
  name: 'gate',
  summary: 'One gate round (plan|delivery) on an artifact, or on artifact.written events from stdin; same as loop-gate',
  synopsis: 'loop gate SPEC GATE [ARTIFACT] [--review FILE] [--consent ID]...',
  // The stages' own flags, as loop-run and loop-gate parse them: --consent adds up when repeated.
  argparse: false,
  positionals: { min: 2, max: 3, names: 'SPEC GATE [ARTIFACT]' },
  configure: (y) =>
    y
      .option('review', { type: 'string', describe: 'Write the review here when the round does not pass' })
      .option('round', { type: 'string', default: '1', describe: 'The round number shown in events' })
      .option('iteration', { type: 'string', describe: 'The {n} checks see (default: from delivery-<n>.md)' })
      .option('revision', { type: 'string', default: '0', describe: 'Host revisions so far (fixed_passes)' })
      .option('events', { type: 'string', describe: 'Also write the events (NDJSON) to FILE; on a terminal stdout shows progress instead' })
      .option('consent', { type: 'string', array: true, default: [] as string[], describe: 'Consent to sending to this member (repeatable)' })
      .option('retries', { type: 'string', default: '2', describe: 'Extra attempts for a transient model CLI failure' })
      .option('retry-delay-ms', { type: 'string', default: '1000', describe: 'Base of the jittered backoff between attempts' }),
  run: (args, io) => {
    const [spec, gate, artifact] = args.positionals as [string, string, string | undefined];
    return loopGate(
      {
        spec,
        gate,
        ...(artifact !== undefined ? { artifact } : {}),
        ...(args.review !== undefined ? { review: String(args.review) } : {}),
        round: intFlag(args.round, 'round', 1, 'gate'),
        ...(args.iteration !== undefined ? { iteration: intFlag(args.iteration, 'iteration', 0, 'gate') } : {}),
        revision: intFlag(args.revision, 'revision', 0, 'gate'),
        consent: (args.consent as unknown[]).map(String),
        ...(args.events !== undefined ? { events: String(args.events) } : {}),
        retries: intFlag(args.retries, 'retries', 0, 'gate'),
        retryDelayMs: intFlag(args['retry-delay-ms'], 'retry-delay-ms', 0, 'gate'),
        level: logLevel({ quiet: args.quiet === true, verbose: args.verbose === true }),
      },
      io,
    );
  },
};
