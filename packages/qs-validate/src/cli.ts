// qs-validate's command line: flags to ValidateOptions, then run() under runBin.
import { UsageError, logLevel, parseArgs, runBin, type Io } from '@quickloop/cli-kit';
import { normaliseHost } from '@quickloop/registries';
import { run, type ValidateOptions } from './run.js';

export const VERSION = '0.1.0';

/** argv → ValidateOptions; throws UsageError on a bad flag (and ExitError(0) after --help). */
export function parseOptions(argv: string[], io: Pick<Io, 'stderr'>): ValidateOptions {
  const args = parseArgs(
    argv,
    { name: 'qs-validate', version: VERSION, usage: '$0 [FILE|DIR|GLOB|-]...', out: io.stderr, positionals: Number.POSITIVE_INFINITY },
    (y) =>
      y
        // cli-kit's settings, plus: an array flag takes one value per use and repeats accumulate.
        .parserConfiguration({ 'parse-numbers': false, 'parse-positional-numbers': false, 'duplicate-arguments-array': true, 'greedy-arrays': false })
        .option('strict', { type: 'boolean', default: false, describe: 'Warnings fail the run (exit 3)' })
        .option('check-urls', { type: 'boolean', default: false, describe: 'Also read every docs.path page over the network and warn about what would spoil a run' })
        .option('allow-registry', { type: 'string', array: true, default: [] as string[], describe: 'Another registry host the shell may reach (repeatable)' }),
  );
  return {
    inputs: args._.map(String),
    strict: args.strict,
    checkUrls: args['check-urls'] as boolean,
    allowRegistry: (args['allow-registry'] as string[]).map((value) => {
      const host = normaliseHost(String(value));
      if (host === undefined) throw new UsageError(`--allow-registry '${String(value)}' is not a host name or a registry URL (see qs-validate --help)`);
      return host;
    }),
    level: logLevel(args),
  };
}

export async function cli(argv: string[], io: Io): Promise<number> {
  return run(parseOptions(argv, io), io);
}

export async function main(): Promise<void> {
  await runBin(cli, { name: 'qs-validate', family: 'qs' });
}
