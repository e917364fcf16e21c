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
