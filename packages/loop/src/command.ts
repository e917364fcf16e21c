// The shape of a `loop` subcommand: adding one is a file in commands/ and a line in commands/index.ts.
import type { Io } from '@quickloop/cli-kit';
import type { Argv } from 'yargs';

export interface LoopCommand {
  /** The word after `loop`. */
  name: string;
  /** One line for `loop --help`. */
  summary: string;
  /** The synopsis, e.g. `loop compile SPEC [--out DIR]`. */
  synopsis: string;
  /** How many positionals it takes (a usage error otherwise). */
  positionals: { min: number; max: number; names: string };
  /** Adds the subcommand's own flags (yargs, strict). */
  configure(y: Argv): Argv;
  /** Does the work. `args` are the parsed flags plus `positionals`. Returns the exit code. */
  run(args: Record<string, unknown> & { positionals: string[] }, io: Io): Promise<number>;
}
