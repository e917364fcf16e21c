// argv -> a subcommand and its typed options (yargs, strict), then run(); runBin owns the exit code.
import { readFileSync } from 'node:fs';
import { ExitError, UsageError, parseArgs, runBin, type Io } from '@quickloop/cli-kit';
import { COMMANDS } from './commands/index.js';
import { reportLoopError, run } from './run.js';

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return ['Usage: loop <command> [options]', '', 'Commands:', ...lines, '', 'Run `loop <command> --help` for its options.', ''].join('\n');
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
  const command = COMMANDS.find((c) => c.name === name);
  try {
    if (!command) throw new UsageError(`unknown command '${name}' (try: ${COMMANDS.map((c) => c.name).join(', ')})`);
    const args = parseArgs(rest, { name: `loop ${command.name}`, version: VERSION, usage: command.synopsis, positionals: command.positionals.max, out: io.stdout },
      (y) => command.configure(y),
    ) as unknown as Record<string, unknown> & { _: (string | number)[] };
    const positionals = args._.map(String);
    const { min, max, names } = command.positionals;
    if (positionals.length < min || positionals.length > max) {
      throw new UsageError(`${command.synopsis}: expected ${names}, got ${positionals.length} argument(s)`);
    }
    return await run({ ...args, command: command.name, positionals }, io);
  } catch (error) {
    if (error instanceof ExitError && error.exitCode === 0) return 0;
    return reportLoopError(error, io);
  }
}

export async function main(): Promise<void> {
  await runBin((argv, io) => cli(argv, io), { name: 'loop', family: 'loop' });
}
