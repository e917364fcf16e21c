// The one place a quickloop process decides its exit code: errors, signals and a closed stdout.
import { CliError, InterruptedError, isPipeClosed } from './errors.js';
import { exitCodeFor, type Family } from './exit-codes.js';
import { defaultNewId, type Io } from './io.js';
import { terminalSafe } from './safe-text.js';

export type Main = (argv: string[], io: Io) => Promise<number>;

export interface RunBinOptions {
  name: string;
  family: Family;
}

/**
 * Runs `main` against the real process and sets process.exitCode — the only code that does.
 * SIGINT/SIGTERM/SIGHUP abort `io.signal`; a second signal ends the process at once with 130.
 * SIGHUP is a closed terminal or a dropped ssh session: left to Node's default, it would end the
 * process before it removed its sandboxes or wrote what it had.
 */
export async function runBin(main: Main, options: RunBinOptions): Promise<void> {
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) process.exit(130);
    controller.abort(new InterruptedError(`interrupted by ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  // A reader that went away (`| head`) is a normal ending: never an uncaught EPIPE.
  let stdoutClosed = false;
  process.stdout.on('error', (error) => {
    if (isPipeClosed(error)) stdoutClosed = true;
  });
  // Nor one that stopped reading our log lines (`2>&1 | head`, a parent that has exited): the run goes
  // on to its end (its sandbox removed, its state written), unheard.
  process.stderr.on('error', (error) => {
    if (!isPipeClosed(error)) throw error;
  });
  const io: Io = {
    // On first use: creating process.stdin loads the stream machinery, a few ms that --help and
    // every stage that never reads its stdin would otherwise pay on each start.
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
    now: () => new Date(),
    newId: defaultNewId,
  };
  let code: number;
  try {
    code = await main(process.argv.slice(2), io);
  } catch (error) {
    code = reportError(error, options, io, stdoutClosed);
    // On Ctrl-C the whole pipeline stops, and the reader downstream may go first: the stage was
    // still interrupted, not ended by its reader.
    if (code === 0 && controller.signal.aborted) code = exitCodeFor(options.family, 'interrupted');
  }
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  process.off('SIGHUP', onSignal);
  process.exitCode = code;
}

/** Turns any thrown value into a one-line message on stderr and an exit code. Exported for tests. */
export function reportError(error: unknown, options: RunBinOptions, io: Pick<Io, 'stderr' | 'env'>, stdoutClosed = false): number {
  if (stdoutClosed || isPipeClosed(error)) return 0;
  if (error instanceof CliError) {
    // A message may quote input (a bad line, a path): shown with its controls made visible.
    // A subcommand's message that names itself (`qs report: …`) is not prefixed again (`qs: qs report: …`).
    const named = error.message.startsWith(`${options.name} `) || error.message.startsWith(`${options.name}:`);
    if (error.message) io.stderr.write(`${named ? '' : `${options.name}: `}${terminalSafe(error.message, 'block')}\n`);
    return error.exitCode ?? exitCodeFor(options.family, error.kind);
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr.write(`${options.name}: internal error: ${terminalSafe(message, 'block')}\n`);
  if (io.env.QUICKLOOP_DEBUG && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
  return exitCodeFor(options.family, 'internal');
}
