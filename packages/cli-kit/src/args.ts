// yargs in strict mode: an unknown flag is a usage error, help and version are answered without exiting.
import yargs, { type Argv } from 'yargs';
import { ExitError, UsageError } from './errors.js';

export interface ArgsMeta {
  /** Binary name, shown in usage and errors. */
  name: string;
  version: string;
  /** One-line synopsis, e.g. `$0 [FILE..]`. */
  usage: string;
  /** How many positional arguments are accepted (default 0); more is a usage error. */
  positionals?: number;
  /** Where help and version text go (stdout: asked for explicitly, not part of an event stream). */
  out: { write(s: string): unknown };
  /**
   * Read the command line as Python's argparse reads Looper's (the `loop` drop-in): a list flag takes
   * every word after it up to the next flag (`--invoke claude -p`), and a flag given twice keeps its
   * last use. Default false: a list flag takes one value per use and collects every use, so it never
   * swallows positionals.
   */
  argparse?: boolean;
}

/** The flags every binary shares. */
export interface CommonOptions {
  quiet: boolean;
  verbose: boolean;
}

// Lives beside the logger, so a binary that parses without yargs (fast-args) can use it without loading yargs.
export { logLevel } from './logger.js';

/**
 * Parses argv with the binary's own options added by `configure`. Throws UsageError on a bad flag
 * and ExitError(0) after printing --help or --version, so callers never see a half-parsed result.
 */
export function parseArgs<T>(
  argv: readonly string[],
  meta: ArgsMeta,
  configure: (y: Argv) => Argv<T>,
): T & CommonOptions & { _: (string | number)[] } {
  const base = yargs([...argv])
    .scriptName(meta.name)
    .usage(meta.usage)
    .option('quiet', { alias: 'q', type: 'boolean', describe: 'Only errors on stderr' })
    .option('verbose', { alias: 'v', type: 'boolean', describe: 'More detail on stderr' })
    .strictOptions()
    .parserConfiguration({ 'parse-numbers': false, 'parse-positional-numbers': false, 'duplicate-arguments-array': meta.argparse !== true, 'greedy-arrays': meta.argparse === true })
    .help('help')
    .alias('help', 'h')
    .version('version', 'Show version number', meta.version)
    .wrap(Math.min(100, process.stderr.columns ?? 100))
    .exitProcess(false);
  let failure: string | undefined;
  let output = '';
  const parsed = configure(base).fail((msg, err) => {
    failure = msg || err?.message || 'invalid arguments';
  });
  const result = parsed.parse([...argv], {}, (_err, _argv, out) => {
    output = out;
  }) as unknown as T & CommonOptions & { _: (string | number)[]; help?: boolean; version?: boolean };
  if (failure !== undefined) throw new UsageError(`${failure} (see ${meta.name} --help)`);
  // yargs reads `--flag=anything` as false for a boolean flag: `--strict=yes` would quietly turn it off.
  const options = (parsed as unknown as { getOptions(): { boolean: string[]; string: string[]; array: string[]; default: Record<string, unknown> } }).getOptions();
  const booleans = new Set(options.boolean);
  for (const arg of argv) {
    if (arg === '--') break;
    const m = /^--(?:no-)?([^=]+)=(.*)$/s.exec(arg);
    if (m && booleans.has(m[1]!) && !/^(true|false)$/.test(m[2]!)) {
      throw new UsageError(`--${m[1]!} is a switch: give it alone (or =true/=false), not '${m[2]!}' (see ${meta.name} --help)`);
    }
  }
  // yargs reads a flag with no value (`--agent --out x`, `--agent $UNSET`) as its default: a typo or an
  // empty variable would quietly run something else than what was asked for.
  const defaulted = new Set(options.string.filter((k) => options.default[k] !== undefined && !booleans.has(k)));
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === '--') break;
    const next = argv[i + 1];
    if (arg.startsWith('--') && defaulted.has(arg.slice(2)) && (next === undefined || (next.startsWith('-') && !/^-\d/.test(next)))) {
      throw new UsageError(`${arg} needs a value (see ${meta.name} --help)`);
    }
  }
  // A repeatable flag collects every use (`--docs-map A --docs-map B`) and takes one value per use, so
  // it never swallows the positionals after it; any other flag given twice keeps its last value.
  const arrays = new Set(options.array.flatMap((k) => [k, k.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase())]));
  for (const [key, value] of Object.entries(result as Record<string, unknown>)) {
    if (key !== '_' && !arrays.has(key) && Array.isArray(value)) (result as Record<string, unknown>)[key] = value.at(-1);
  }
  // checked here rather than with yargs' conflicts(), which counts a default as given
  if (result.quiet && result.verbose) throw new UsageError(`--quiet and --verbose cannot be used together (see ${meta.name} --help)`);
  if (output) {
    meta.out.write(output.endsWith('\n') ? output : `${output}\n`);
    throw new ExitError(0);
  }
  const max = meta.positionals ?? 0;
  if (result._.length > max) {
    throw new UsageError(`unexpected argument '${String(result._[max])}' (see ${meta.name} --help)`);
  }
  result.quiet = result.quiet === true;
  result.verbose = result.verbose === true;
  return result;
}
