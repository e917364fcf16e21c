// qs-validate's command line: flags to ValidateOptions, then run() under runBin.
// Subpath imports only: yargs (in the package index) is loaded just for --help, --version or an error.
import { UsageError } from '@quickloop/cli-kit/errors';
import { parseFast, type FastFlag } from '@quickloop/cli-kit/fast-args';
import type { Io } from '@quickloop/cli-kit/io';
import { runBin } from '@quickloop/cli-kit/run-bin';
import { formatEndpoint, registryEndpoint } from '@quickloop/sandbox/hosts';
import { run, type ValidateOptions } from './run.js';

export { VERSION } from './version.generated.js';
import { VERSION } from './version.generated.js';

/** The flags of an ordinary run, decided without yargs (see parseFast). */
const FLAGS: Record<string, FastFlag> = {
  strict: { type: 'boolean' },
  'check-urls': { type: 'boolean' },
  'rate-limit': { type: 'string' },
  'allow-registry': { type: 'string', multiple: true },
  config: { type: 'string' },
  'no-config': { type: 'boolean' },
};

/** The same flags through yargs: help text, version, and the wording of every usage error. */
async function parseWithYargs(argv: string[], io: Pick<Io, 'stdout' | 'stderr'>): Promise<Record<string, unknown> & { _: (string | number)[]; quiet: boolean; verbose: boolean }> {
  const { parseArgs } = await import('@quickloop/cli-kit');
  return parseArgs(
    argv,
    { name: 'qs-validate', version: VERSION, usage: '$0 [FILE|DIR|GLOB|-]...', out: io.stdout, positionals: Number.POSITIVE_INFINITY },
    (y) =>
      y
        // cli-kit's settings, plus: an array flag takes one value per use and repeats accumulate.
        .parserConfiguration({ 'parse-numbers': false, 'parse-positional-numbers': false, 'duplicate-arguments-array': true, 'greedy-arrays': false })
        .option('strict', { type: 'boolean', default: false, describe: 'Warnings fail the run (exit 3)' })
        .option('check-urls', { type: 'boolean', default: false, describe: 'Also read every docs.path page over the network and warn about what would spoil a run' })
        .option('rate-limit', { type: 'string', describe: 'With --check-urls: minimum SECONDS between requests to one docs host (default 1)' })
        .option('allow-registry', { type: 'string', array: true, default: [] as string[], describe: 'Another registry the shell may reach: a URL, HOST:PORT, or HOST (port 443) (repeatable)' })
        .option('config', { type: 'string', describe: 'The project config to use (default: the nearest quickloop.yaml from here up)' })
        .option('no-config', { type: 'boolean', describe: 'Use no project config' }),
  ) as unknown as Record<string, unknown> & { _: (string | number)[]; quiet: boolean; verbose: boolean };
}

/** argv → ValidateOptions; throws UsageError on a bad flag (and ExitError(0) after --help). */
export async function parseOptions(argv: string[], io: Pick<Io, 'stdout' | 'stderr'>): Promise<ValidateOptions> {
  const args = parseFast(argv, FLAGS) ?? (await parseWithYargs(argv, io));
  if (args['no-config'] === true && typeof args.config === 'string') throw new UsageError('--config and --no-config contradict each other: give one');
  return {
    inputs: args._.map(String),
    strict: args.strict === true,
    checkUrls: args['check-urls'] === true,
    ...(args['rate-limit'] !== undefined ? { rateLimit: rateLimit(String(args['rate-limit'])) } : {}),
    allowRegistry: (args['allow-registry'] as string[]).map((value) => {
      const e = registryEndpoint(String(value));
      if (e === undefined) throw new UsageError(`--allow-registry '${String(value)}' is not a registry URL, host:port or host name (see qs-validate --help)`);
      return formatEndpoint(e.host, e.port);
    }),
    level: args.verbose ? 'verbose' : args.quiet ? 'quiet' : 'normal',
    config: args['no-config'] === true || args.config === false ? false : typeof args.config === 'string' ? args.config : undefined,
  };
}

function rateLimit(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 3600) throw new UsageError(`--rate-limit ${value}: expected SECONDS between 0 and 3600`);
  return n;
}

export async function cli(argv: string[], io: Io): Promise<number> {
  return run(await parseOptions(argv, io), io);
}

export async function main(): Promise<void> {
  await runBin(cli, { name: 'qs-validate', family: 'qs' });
}
