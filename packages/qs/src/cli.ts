// `qs SUBCOMMAND ...`: picks the subcommand and hands it the rest of argv, under runBin.
import { runBin, UsageError, type Io } from '@quickloop/cli-kit';
import { COMMANDS } from './commands/index.js';
import { VERSION } from './version.js';

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return ['usage: qs COMMAND [options]', '', 'commands:', ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`), '', 'qs COMMAND --help for its options', ''].join('\n');
}

export async function cli(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) throw new UsageError(`no command given\n${usage()}`);
  if (name === '--help' || name === '-h') {
    io.stdout.write(usage());
    return 0;
  }
  if (name === '--version') {
    io.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    // quickstarted's `validate` is a binary of its own here, the head of every pipeline.
    const hint = name === 'validate' ? '; task files are validated by qs-validate: qs-validate [FILE|DIR|GLOB]...' : '';
    throw new UsageError(`unknown command '${name}' (known: ${COMMANDS.map((c) => c.name).join(', ')})${hint}`);
  }
  return command.run(rest, io);
}

export async function main(): Promise<void> {
  await runBin(cli, { name: 'qs', family: 'qs' });
}
