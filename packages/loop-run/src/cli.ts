// loop-run's argv: the spec path as the sole positional argument, a few optional flags.
import { UsageError, logLevel, parseArgs, runBin, type Io } from '@quickloop/cli-kit';
import { VERSION } from './version.generated.js';

/** A bad number is a usage error (exit 2), never a NaN that quietly turns retries off. */
const int = (v: unknown, name: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be an integer ≥ 0 (see loop-run --help)`);
  return n;
};

export async function cli(argv: string[], io: Io): Promise<number> {
  const args = parseArgs(argv, { name: 'loop-run', version: VERSION, usage: '$0 SPEC\n\nRun a compiled Looper loop (loop.resolved.json, or loop.yaml) under the runner contract.', positionals: 1, out: io.stdout }, (y) =>
    y
      .option('retries', { type: 'string', default: '2', describe: 'Extra attempts for a transient model CLI failure' })
      .option('retry-delay-ms', { type: 'string', default: '1000', describe: 'Base of the jittered backoff between attempts' })
      .option('consent', { type: 'string', array: true, default: [] as string[], describe: 'Consent to sending to this member up front (repeatable); others are asked on stdin' }),
  );
  if (args._.length !== 1) throw new UsageError('loop-run needs the spec path (loop.resolved.json) as its one argument (see loop-run --help)');
  // Loaded only once the arguments are good: --help and a usage error never pay for the runner.
  const { run } = await import('./run.js');
  return run(
    {
      spec: String(args._[0]),
      retries: int(args.retries, 'retries'),
      retryDelayMs: int(args['retry-delay-ms'], 'retry-delay-ms'),
      consent: (args.consent as string[]).map(String),
      level: logLevel(args),
    },
    io,
  );
}

export async function main(): Promise<void> {
  await runBin(cli, { name: 'loop-run', family: 'loop' });
}
