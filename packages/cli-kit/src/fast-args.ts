// The zero-cost parse of an ordinary command line (node:util), so a binary loads yargs only to
// answer --help/--version or to word an error: yargs alone costs a third of a short run's start-up.
import { parseArgs as parseNode } from 'node:util';

export interface FastFlag {
  type: 'boolean' | 'string';
  short?: string;
  /** Repeatable: every use adds a value. */
  multiple?: boolean;
}

export type FastResult = Record<string, unknown> & { _: string[]; quiet: boolean; verbose: boolean };

/**
 * Parses argv against the binary's own flags plus --quiet/--verbose. Returns undefined for anything
 * it does not decide itself — help, version, an unknown or malformed flag, --quiet with --verbose —
 * and the caller then parses with yargs (`parseArgs`), whose messages are the ones users see. Flags
 * not given get their type's default (false, or [] when repeatable); strings have no default.
 */
export function parseFast(argv: readonly string[], flags: Record<string, FastFlag>): FastResult | undefined {
  if (argv.some((a) => a === '--help' || a === '-h' || a === '--version')) return undefined;
  let parsed: ReturnType<typeof parseNode>;
  try {
    parsed = parseNode({
      args: [...argv],
      options: { ...flags, quiet: { type: 'boolean', short: 'q' }, verbose: { type: 'boolean', short: 'v' } },
      allowPositionals: true,
      strict: true,
    });
  } catch {
    return undefined;
  }
  const { values, positionals } = parsed;
  if (values.quiet === true && values.verbose === true) return undefined;
  const result: FastResult = { _: positionals, quiet: values.quiet === true, verbose: values.verbose === true };
  for (const [name, flag] of Object.entries(flags)) {
    const value = values[name];
    if (flag.type === 'boolean') result[name] = value === true;
    else if (flag.multiple) result[name] = value ?? [];
    else if (value !== undefined) result[name] = value;
  }
  return result;
}

/** A flag as a binary declares it once: for node:util, for yargs, and for its help text. */
export interface FlagSpec extends FastFlag {
  describe: string;
  /** Shown in the help; the binary applies it. */
  default?: string;
}

export function fastFlagsOf(specs: Record<string, FlagSpec>): Record<string, FastFlag> {
  return Object.fromEntries(Object.entries(specs).map(([name, { type, short, multiple }]) => [name, { type, ...(short ? { short } : {}), ...(multiple ? { multiple } : {}) }]));
}

/**
 * The --help text, written without yargs (whose own start-up would be most of the answer's cost):
 * the usage, then one line per flag with its description and default, then the shared flags.
 */
export function helpText(name: string, usage: string, specs: Record<string, FlagSpec>): string {
  const rows: Array<[string, string]> = Object.entries(specs).map(([flag, spec]) => [
    `${spec.short ? `-${spec.short}, ` : '    '}--${flag}${spec.type === 'string' ? (spec.multiple ? ' VALUE (repeatable)' : ' VALUE') : ''}`,
    `${spec.describe}${spec.default !== undefined ? ` [default: ${spec.default}]` : ''}`,
  ]);
  rows.push(['-q, --quiet', 'Only errors on stderr'], ['-v, --verbose', 'More detail on stderr'], ['-h, --help', 'Show help'], ['    --version', 'Show version number']);
  const width = Math.max(...rows.map(([left]) => left.length));
  return `${usage.replaceAll('$0', name)}\n\nOptions:\n${rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`).join('\n')}\n`;
}
