// qs-check's command line: flags to CheckOptions, then run() under runBin.
import { logLevel, parseArgs, runBin, type Io } from '@quickloop/cli-kit';
import { run } from './run.js';

export { VERSION } from './version.generated.js';
import { VERSION } from './version.generated.js';

export async function cli(argv: string[], io: Io): Promise<number> {
  const args = parseArgs(argv, { name: 'qs-check', version: VERSION, usage: '$0 [--keep] < events', out: io.stdout }, (y) =>
    y.option('keep', { type: 'boolean', default: false, describe: 'Keep every workspace for a later `qs-check < saved.ndjson`' }),
  );
  return run({ keep: args.keep, level: logLevel(args) }, io);
}

export async function main(): Promise<void> {
  await runBin(cli, { name: 'qs-check', family: 'qs' });
}
