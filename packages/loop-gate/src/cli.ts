// loop-gate's argv: SPEC GATE [ARTIFACT] and a few flags; without ARTIFACT the artifacts come from stdin events.
import { UsageError } from '@quickloop/cli-kit/errors';
import { fastFlagsOf, helpText, parseFast, type FlagSpec } from '@quickloop/cli-kit/fast-args';
import type { Io } from '@quickloop/cli-kit/io';
import { logLevel } from '@quickloop/cli-kit/logger';
import { runBin } from '@quickloop/cli-kit/run-bin';
import { VERSION } from './version.generated.js';

const int = (v: unknown, name: string, min: number): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min} (see loop-gate --help)`);
  return n;
};

const USAGE = '$0 SPEC GATE [ARTIFACT]\n\nOne gate round (plan|delivery) on ARTIFACT, or on each artifact.written event read from stdin. Exit 0 pass, 1 revise, 2 error.';

// Declared once, for node:util's parser (an ordinary command line never loads yargs, whose start-up
// alone is as long as the rest of a short round), for yargs (which words every mistake) and for --help.
const OPTIONS: Record<string, FlagSpec> = {
  review: { type: 'string', describe: 'Write the review here when the round does not pass' },
  round: { type: 'string', default: '1', describe: 'The round number shown in events' },
  iteration: { type: 'string', describe: 'The {n} checks see (default: from delivery-<n>.md, 0 for plan.md)' },
  revision: { type: 'string', default: '0', describe: 'Host revisions so far (fixed_passes asks for another pass below max_revisions)' },
  events: { type: 'string', describe: 'Also write the events (NDJSON) to FILE; on a terminal stdout shows progress instead' },
  consent: { type: 'string', multiple: true, describe: 'Consent to sending to this member (repeatable); others are asked on stdin' },
  retries: { type: 'string', default: '2', describe: 'Extra attempts for a transient model CLI failure' },
  'retry-delay-ms': { type: 'string', default: '1000', describe: 'Base of the jittered backoff between attempts' },
};
const FLAGS = fastFlagsOf(OPTIONS);

type Args = Record<string, unknown> & { _: (string | number)[]; quiet: boolean; verbose: boolean };

/** yargs words every usage error, in the same words as every other binary. */
async function parseWithYargs(argv: string[], io: Io): Promise<Args> {
  const { parseArgs } = await import('@quickloop/cli-kit/args');
  return parseArgs(argv, { name: 'loop-gate', version: VERSION, usage: USAGE, positionals: 3, out: io.stdout }, (y) => {
    for (const [name, spec] of Object.entries(OPTIONS)) {
      y.option(name, { type: spec.type, describe: spec.describe, ...(spec.multiple ? { array: true, default: [] as string[] } : spec.default !== undefined ? { default: spec.default } : {}) });
    }
    return y;
  }) as unknown as Args;
}

export async function cli(argv: string[], io: Io): Promise<number> {
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) {
    io.stdout.write(helpText('loop-gate', USAGE, OPTIONS));
    return 0;
  }
  if (argv.length === 1 && argv[0] === '--version') {
    io.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const fast = parseFast(argv, FLAGS);
  // yargs reads `--consent a b` as two ids (a greedy array) where node:util sees an id and a
  // positional, so a command line with --consent keeps yargs' reading.
  const plain = fast !== undefined && fast._.length <= 3 && (fast.consent as unknown[]).length === 0;
  const args: Args = plain ? fast : await parseWithYargs(argv, io);
  const [spec, gate, artifact] = args._.map(String);
  if (spec === undefined || gate === undefined) throw new UsageError('loop-gate needs SPEC and GATE (see loop-gate --help)');
  // Loaded only once the arguments are good: --help and a usage error never pay for the runner.
  const { run } = await import('./run.js');
  return run(
    {
      spec,
      gate,
      ...(artifact !== undefined ? { artifact } : {}),
      ...(args.review !== undefined ? { review: String(args.review) } : {}),
      round: int(args.round ?? '1', 'round', 1),
      ...(args.iteration !== undefined ? { iteration: int(args.iteration, 'iteration', 0) } : {}),
      revision: int(args.revision ?? '0', 'revision', 0),
      consent: ((args.consent as unknown[] | undefined) ?? []).map(String),
      ...(args.events !== undefined ? { events: String(args.events) } : {}),
      retries: int(args.retries ?? '2', 'retries', 0),
      retryDelayMs: int(args['retry-delay-ms'] ?? '1000', 'retry-delay-ms', 0),
      level: logLevel(args),
    },
    io,
  );
}

export async function main(): Promise<void> {
  await runBin(cli, { name: 'loop-gate', family: 'loop' });
}
