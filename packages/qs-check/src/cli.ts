// qs-check's command line: flags to CheckOptions, then run() under runBin.
import { logLevel, parseArgs, runBin, type Io } from '@quickloop/cli-kit';
import { installCacheDir } from '@quickloop/sandbox';
import { run } from './run.js';

export { VERSION } from './version.generated.js';
import { VERSION } from './version.generated.js';

export async function cli(argv: string[], io: Io): Promise<number> {
  const args = parseArgs(argv, { name: 'qs-check', version: VERSION, usage: '$0 [--keep] [--install-cache DIR] < events', out: io.stdout }, (y) =>
    y
      .option('keep', { type: 'boolean', default: false, describe: 'Keep every workspace for a later `qs-check < saved.ndjson`' })
      .option('install-cache', { type: 'string', describe: "Take the verified npm blobs each run's home holds into this install cache (qs run --install-cache)" }),
  );
  return run({ keep: args.keep, level: logLevel(args), ...(args['install-cache'] !== undefined ? { installCache: installCacheDir(String(args['install-cache']), io.cwd) } : {}) }, io);
}

export async function main(): Promise<void> {
  await runBin(cli, { name: 'qs-check', family: 'qs' });
}
