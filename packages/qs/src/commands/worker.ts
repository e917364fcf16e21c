// `qs worker --queue URL [--concurrency N]`: one machine of a fleet. It takes attempts a `qs run
// --queue URL` enqueued, runs each in its own sandbox as a local sweep does, and sends back its stream.
import { logLevel, parseArgs, QsExit, terminalSafe, UsageError } from '@quickloop/cli-kit';
import type { Command } from '../command.js';
import { parseQueueUrl, work } from '../fleet/queue.js';
import { noWorkflowCommand } from '../sweep/progress.js';
import { VERSION } from '../version.js';

const USAGE = '$0 --queue redis://HOST:PORT/DB [--concurrency N] [--lock-seconds S] [--allow-unenforced] [-q|-v]';

export const worker: Command = {
  name: 'worker',
  summary: 'Take attempts from a fleet queue (qs run --queue), run each in its own sandbox, send back its stream',
  async run(argv, io) {
    const args = parseArgs(argv, { name: 'qs worker', version: VERSION, usage: USAGE, out: io.stdout }, (y) =>
      y
        .option('queue', { type: 'string', describe: 'The Redis the producer enqueued on: redis://HOST:PORT/DB' })
        .option('concurrency', { type: 'string', default: '1', describe: 'Attempts run at once, each in its own sandbox' })
        .option('lock-seconds', { type: 'string', default: '30', describe: 'How long an attempt stays with a worker that stopped answering before another takes it' })
        .option('allow-unenforced', { type: 'boolean', default: false, describe: 'Run attempts that ask for the local backend, which enforces nothing' }),
    );
    if (args.queue === undefined || String(args.queue) === '') throw new UsageError('qs worker: --queue redis://HOST:PORT/DB is required');
    const target = parseQueueUrl(String(args.queue));
    const concurrency = Number(args.concurrency);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) throw new UsageError(`qs worker: --concurrency must be a whole number from 1 to 64 (got ${String(args.concurrency)})`);
    const lock = Number(args['lock-seconds']);
    if (!Number.isFinite(lock) || lock < 1 || lock > 3600) throw new UsageError(`qs worker: --lock-seconds must be from 1 to 3600 (got ${String(args['lock-seconds'])})`);
    const quiet = logLevel(args) === 'quiet';
    const t0 = io.now().getTime();
    const stamp = (): string => `[${String(Math.round((io.now().getTime() - t0) / 1000)).padStart(5)}s]`;
    const say = (text: string): void => {
      if (quiet) return;
      const line = `${stamp()} ${terminalSafe(text)}`;
      io.stderr.write(`${io.env.GITHUB_ACTIONS === 'true' ? noWorkflowCommand(line) : line}\n`);
    };
    await work(
      {
        target,
        concurrency,
        lockMs: Math.round(lock * 1000),
        allowUnenforced: args['allow-unenforced'],
        progress: {
          started: (label) => say(`${label} started`),
          line: (label, text) => say(`${label} ${text}`),
          finished: (label, verdict, detail) => say(`${label} ${verdict} ${detail}`),
          say,
        },
      },
      io,
    );
    return QsExit.interrupted;
  },
};
