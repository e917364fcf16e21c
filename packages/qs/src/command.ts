// What one `qs` subcommand is: a name, a line for `qs --help`, and a main over argv and Io.
import type { Io } from '@quickloop/cli-kit';

export interface Command {
  name: string;
  /** One line for `qs --help`. */
  summary: string;
  run(argv: string[], io: Io): Promise<number>;
}
