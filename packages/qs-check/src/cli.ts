// qs-check's command line: flags to CheckOptions, then run() under runBin.
import { logLevel, parseArgs, runBin, UsageError, type Io } from '@quickloop/cli-kit';
import { installCacheDir, registryOf } from '@quickloop/sandbox';
import { resolve } from 'node:path';
import { run } from './run.js';

export { VERSION } from './version.generated.js';
import { VERSION } from './version.generated.js';

export async function cli(argv: string[], io: Io): Promise<number> {
  const args = parseArgs(argv, { name: 'qs-check', version: VERSION, usage: '$0 [--keep] [--install-cache DIR [--npm-registry URL [--npm-cafile FILE]]] < events', out: io.stdout }, (y) =>
    y
      .option('keep', { type: 'boolean', default: false, describe: 'Keep every workspace for a later `qs-check < saved.ndjson`' })
      .option('install-cache', { type: 'string', describe: "Take into this install cache the verified npm blobs each run's home holds, and the files its pip installed, downloaded again from the index (qs run --install-cache)" })
      .option('npm-registry', { type: 'string', describe: "npm's registry, for the packuments the install cache fetches (default: asked of npm, once; qs run asks once per sweep)" })
      .option('npm-cafile', { type: 'string', describe: "npm's cafile, with --npm-registry" }),
  );
  const registry = args['npm-registry'] === undefined ? undefined : String(args['npm-registry']);
  const cafile = args['npm-cafile'] === undefined ? undefined : String(args['npm-cafile']);
  if (cafile !== undefined && registry === undefined) throw new UsageError('--npm-cafile goes with --npm-registry (see qs-check --help)');
  if (registry !== undefined && args['install-cache'] === undefined) throw new UsageError('--npm-registry goes with --install-cache: it is where the cache\'s packuments come from (see qs-check --help)');
  if (registry !== undefined && registryOf(registry) === undefined) throw new UsageError(`--npm-registry: '${registry}' is not an http(s) URL (see qs-check --help)`);
  return run(
    {
      keep: args.keep,
      level: logLevel(args),
      ...(args['install-cache'] !== undefined ? { installCache: installCacheDir(String(args['install-cache']), io.cwd) } : {}),
      ...(registry !== undefined ? { npm: { registry, ...(cafile !== undefined ? { cafile: resolve(io.cwd, cafile) } : {}) } } : {}),
    },
    io,
  );
}

export async function main(): Promise<void> {
  await runBin(cli, { name: 'qs-check', family: 'qs' });
}
