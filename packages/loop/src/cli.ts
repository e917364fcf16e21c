// argv -> a subcommand and its typed options (yargs, strict), then run(); runBin owns the exit code.
import { ExitError, UsageError } from '@quickloop/cli-kit/errors';
import { parseFast } from '@quickloop/cli-kit/fast-args';
import type { Io } from '@quickloop/cli-kit/io';
import { runBin } from '@quickloop/cli-kit/run-bin';
import type { LoopCommand } from './command.js';
import { COMMANDS } from './commands/index.js';
import { reportLoopError, run } from './run.js';

import { VERSION } from './version.generated.js';

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return ['Usage: loop <command> [options]', '', 'Commands:', ...lines, '', 'Run `loop <command> --help` for its options.', ''].join('\n');
}

type Parsed = Record<string, unknown> & { _: (string | number)[] };

/**
 * The zero-cost parse of an ordinary command line (yargs alone costs more start-up than the whole
 * compile); anything it does not decide goes to yargs, whose messages are the ones users see.
 */
function parsePlain(command: LoopCommand, argv: string[]): Parsed | undefined {
  return command.fastFlags ? parseFast(argv, command.fastFlags) : undefined;
}

/** Parses argv and runs the subcommand; returns the exit code (tests call this in-process too). */
export async function cli(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h') {
    (name === undefined ? io.stderr : io.stdout).write(overview());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version') {
    io.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  try {
    if (!entry) throw new UsageError(`unknown command '${name}' (try: ${COMMANDS.map((c) => c.name).join(', ')})`);
    const command = await entry.load();
    let args = parsePlain(command, rest);
    if (!args) {
      const { parseArgs } = await import('@quickloop/cli-kit');
      args = parseArgs(
        rest,
        { name: `loop ${command.name}`, version: VERSION, usage: command.synopsis, positionals: command.positionals.max, out: io.stdout, argparse: command.argparse !== false },
        (y) => command.configure(y),
      ) as unknown as Parsed;
    }
    const positionals = args._.map(String);
    const { min, max, names } = command.positionals;
    if (positionals.length > max) throw new UsageError(`unexpected argument '${positionals[max]}' (see loop ${command.name} --help)`);
    if (positionals.length < min) throw new UsageError(`${command.synopsis}: expected ${names}, got ${positionals.length} argument(s)`);
    return await run({ ...args, command: command.name, positionals }, io);
  } catch (error) {
    if (error instanceof ExitError && error.exitCode === 0) return 0;
    return reportLoopError(error, io);
  }
}

export async function main(): Promise<void> {
  await runBin((argv, io) => cli(argv, io), { name: 'loop', family: 'loop' });
}
