// run(opts, io): one `loop` subcommand with already-parsed options; what tests call in-process.
import { CliError } from '@quickloop/cli-kit/errors';
import { LoopExit } from '@quickloop/cli-kit/exit-codes';
import type { Io } from '@quickloop/cli-kit/io';
import { SpecError } from '@quickloop/loop-spec';
import { COMMANDS } from './commands/index.js';

export interface LoopOptions {
  /** The subcommand name, e.g. `compile`. */
  command: string;
  /** Positional arguments after the subcommand. */
  positionals: string[];
  /** Parsed flags (as yargs gives them). */
  [flag: string]: unknown;
}

/**
 * Runs a subcommand. Every failure becomes `loop: error: …` on stderr and an exit code (2 for a bad
 * spec or usage, per the loop family): never a stack trace, never an uncaught throw.
 */
export async function run(opts: LoopOptions, io: Io): Promise<number> {
  const entry = COMMANDS.find((c) => c.name === opts.command);
  try {
    if (!entry) throw new CliError('usage', `unknown command '${opts.command}' (try: ${COMMANDS.map((c) => c.name).join(', ')})`);
    return await (await entry.load()).run(opts, io);
  } catch (error) {
    return reportLoopError(error, io);
  }
}

/** The one place a `loop` failure is put into words. Exported for cli.ts, which fails before run(). */
export function reportLoopError(error: unknown, io: Pick<Io, 'stderr' | 'env'>): number {
  if (error instanceof SpecError) {
    io.stderr.write(`loop: error: ${error.describe()}\n`);
    return LoopExit.error;
  }
  if (error instanceof CliError) {
    if (error.message) io.stderr.write(`loop: error: ${error.message}\n`);
    return error.exitCode ?? (error.kind === 'interrupted' ? 130 : LoopExit.error);
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr.write(`loop: error: ${message}\n`);
  if (io.env.QUICKLOOP_DEBUG && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
  return LoopExit.error;
}
