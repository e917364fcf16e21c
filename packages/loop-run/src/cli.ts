// loop-run's argv: the spec path as the sole positional argument, a few optional flags.
import { UsageError } from '@quickloop/cli-kit/errors';
import { fastFlagsOf, helpText, parseFast, type FlagSpec } from '@quickloop/cli-kit/fast-args';
import type { Io } from '@quickloop/cli-kit/io';
import { logLevel } from '@quickloop/cli-kit/logger';
import { runBin } from '@quickloop/cli-kit/run-bin';
import { VERSION } from './version.generated.js';

/** A bad number is a usage error (exit 2), never a NaN that quietly turns retries off. */
const int = (v: unknown, name: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be an integer ≥ 0 (see loop-run --help)`);
  return n;
};

const USAGE = '$0 SPEC\n\nRun a compiled Looper loop (loop.resolved.json, or loop.yaml) under the runner contract.';

// Declared once, for node:util's parser (an ordinary command line never loads yargs, whose start-up
// alone is as long as the rest of a short run), for yargs (which words every mistake) and for --help.
const OPTIONS: Record<string, FlagSpec> = {
  retries: { type: 'string', default: '2', describe: 'Extra attempts for a transient model CLI failure' },
  'retry-delay-ms': { type: 'string', default: '1000', describe: 'Base of the jittered backoff between attempts' },
  events: { type: 'string', describe: 'Also write the events (NDJSON) to FILE; on a terminal stdout shows progress instead' },
  consent: { type: 'string', multiple: true, describe: 'Consent to sending to this member up front (repeatable); others are asked on stdin' },
};
const FLAGS = fastFlagsOf(OPTIONS);

type Args = Record<string, unknown> & { _: (string | number)[]; quiet: boolean; verbose: boolean };

/** yargs words every usage error, in the same words as every other binary. */
async function parseWithYargs(argv: string[], io: Io): Promise<Args> {
  const { parseArgs } = await import('@quickloop/cli-kit/args');
  return parseArgs(argv, { name: 'loop-run', version: VERSION, usage: USAGE, positionals: 1, out: io.stdout }, (y) => {
    for (const [name, spec] of Object.entries(OPTIONS)) {
      y.option(name, { type: spec.type, describe: spec.describe, ...(spec.multiple ? { array: true, default: [] as string[] } : spec.default !== undefined ? { default: spec.default } : {}) });
    }
    return y;
  }) as unknown as Args;
}

export async function cli(argv: string[], io: Io): Promise<number> {
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) {
    io.stdout.write(helpText('loop-run', USAGE, OPTIONS));
    return 0;
  }
  if (argv.length === 1 && argv[0] === '--version') {
    io.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const fast = parseFast(argv, FLAGS);
  // yargs reads `--consent a b` as two ids (a greedy array) where node:util sees an id and a
  // positional, so a command line with --consent keeps yargs' reading.
  const plain = fast !== undefined && fast._.length <= 1 && (fast.consent as unknown[]).length === 0;
  const args: Args = plain ? fast : await parseWithYargs(argv, io);
  if (args._.length !== 1) throw new UsageError('loop-run needs the spec path (loop.resolved.json) as its one argument (see loop-run --help)');
  // Loaded only once the arguments are good: --help and a usage error never pay for the runner.
  const { run } = await import('./run.js');
  return run(
    {
      spec: String(args._[0]),
      retries: int(args.retries ?? '2', 'retries'),
      retryDelayMs: int(args['retry-delay-ms'] ?? '1000', 'retry-delay-ms'),
      consent: ((args.consent as unknown[] | undefined) ?? []).map(String),
      ...(args.events !== undefined ? { events: String(args.events) } : {}),
      level: logLevel(args),
    },
    io,
  );
}

export async function main(): Promise<void> {
  await runBin(cli, { name: 'loop-run', family: 'loop' });
}
