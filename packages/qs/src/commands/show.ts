// `qs show FILE|-`: a saved or live stream rendered for people, on stdout (it is the output asked for, not a stage).
import { createReadStream } from 'node:fs';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { InputError, logLevel, parseArgs, QsExit, terminalSafe, wantsColour, type Io } from '@quickloop/cli-kit';
import { isTerminal, readEvents } from '@quickloop/events';
import { Chalk } from 'chalk';
import type { Command } from '../command.js';
import { createRenderer } from '../render.js';
import { VERSION } from '../version.js';

function open(file: string, io: Io): { stream: Readable; source: string } {
  if (file === '-') return { stream: io.stdin, source: 'stdin' };
  const stream = createReadStream(resolve(io.cwd, file));
  return { stream, source: file };
}

export const show: Command = {
  name: 'show',
  summary: 'Render an event stream (a file, or - for stdin) for people: stamped lines, failed commands with their output',
  async run(argv, io) {
    const args = parseArgs(argv, { name: 'qs show', version: VERSION, usage: '$0 FILE|- [--verbose]', out: io.stdout, positionals: 1 }, (y) => y);
    const file = String(args._[0] ?? '');
    if (file === '') throw new InputError('qs show: name a stream file, or - for stdin');
    const colour = wantsColour(io.stdout as { isTTY?: boolean }, io.env);
    const chalk = new Chalk({ level: colour ? 1 : 0 });
    const styles = { pass: chalk.green, fail: chalk.red, warn: chalk.yellow, dim: chalk.dim, bold: chalk.bold };
    const render = createRenderer({ verbose: logLevel(args) === 'verbose', style: (k, t) => styles[k](t) });
    const { stream, source } = open(file, io);
    const pending = new Map<string, boolean>();
    const write = (text: string): void => {
      io.stdout.write(text);
    };
    try {
      for await (const { event } of readEvents(stream, { source })) {
        if (!pending.has(event.run_id)) pending.set(event.run_id, false);
        if (isTerminal(event.type)) pending.set(event.run_id, true);
        const lines = render(event);
        if (lines.length > 0) write(`${lines.join('\n')}\n`);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new InputError(`qs show: ${file}: no such file`);
      if ((error as NodeJS.ErrnoException).code === 'EISDIR') throw new InputError(`qs show: ${file}: is a folder, not a stream file`);
      throw error;
    }
    const open_ = [...pending].filter(([, done]) => !done).map(([id]) => id);
    if (open_.length > 0) write(`(incomplete stream: no run.completed, run.failed or run.interrupted for run ${open_.map((id) => terminalSafe(id)).join(', ')})\n`);
    return QsExit.passed;
  },
};
