// The shape of a `loop` subcommand: adding one is a file in commands/ and a line in commands/index.ts.
import type { FastFlag } from '@quickloop/cli-kit/fast-args';
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
  /**
   * The same flags for node:util's parseArgs, which costs nothing to load. When given, a plain
   * command line is parsed with it and yargs is loaded only for --help, --version or a mistake,
   * which keeps `loop compile` inside its start-up budget. Must declare exactly what configure does.
   */
  fastFlags?: Record<string, FastFlag>;
  /**
   * Looper's argparse semantics (the default): a repeated flag keeps its last value and an array flag
   * takes every word after it (`--invoke claude -p`). `false` for the commands that stand for
   * quickloop's own stages (`run`, `gate`), where a repeated flag adds up (`--consent a --consent b`).
   */
  argparse?: boolean;
  /** Does the work. `args` are the parsed flags plus `positionals`. Returns the exit code. */
  run(args: Record<string, unknown> & { positionals: string[] }, io: Io): Promise<number>;
}

/**
 * A registry entry: the name and summary `loop --help` needs, and the module loaded only when the
 * subcommand is chosen — so `loop compile` never pays for the runner's model SDKs at start-up.
 */
export interface CommandEntry {
  name: string;
  summary: string;
  load(): Promise<LoopCommand>;
}
