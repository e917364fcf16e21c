// `qs show FILE|-`: a saved or live stream rendered for people, on stdout (it is the output asked for, not a stage).
import { closeSync, createReadStream, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { InputError, logLevel, parseArgs, QsExit, terminalSafe, wantsColour, type Io } from '@quickloop/cli-kit';
import { isTerminal, readEvents, type WireEvent } from '@quickloop/events';
import { Chalk } from 'chalk';
import type { Command } from '../command.js';
import { createRenderer } from '../render.js';
import { foldResults, foldRun } from '../results/fold.js';
import { rateText } from '../results/reports.js';
import { isQuickstartedLine, parseQuickstartedTrace, quickstartedLines } from '../results/trace.js';
import { VERSION } from '../version.js';

/** The first non-blank line of a saved file (from its first 64 KiB), to tell quickstarted's trace from our stream. */
function firstLine(path: string): string {
  let fd: number;
  try {
    if (!statSync(path).isFile()) return '';
    fd = openSync(path, 'r');
  } catch {
    return '';
  }
  try {
    const buf = Buffer.alloc(65536);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('utf8').split('\n').find((l) => l.trim() !== '') ?? '';
  } finally {
    closeSync(fd);
  }
}

/** A sweep's --out folder or its results.json, named as what they are, with the command that reads each. */
function notAStream(file: string, path: string, head: string): void {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    return;
  }
  if (isDir) {
    if (!existsSync(join(path, 'results.json')) && !existsSync(join(path, 'plan.ndjson'))) throw new InputError(`qs show: ${file}: is a folder, not a stream file`);
    const one = firstAttemptStream(path);
    throw new InputError(`qs show: ${file}: is a sweep's --out folder, not a stream file (qs results ${file} sums it up, qs report ${file} renders it${one ? `; qs show ${join(file, one)} shows one attempt` : ''})`);
  }
  // Pretty-printed (`{` alone on its first line), or on one line: no event of a stream has a schema_version.
  if (head !== '{' && !(head.startsWith('{') && head.includes('"schema_version"'))) return;
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return;
  }
  if (typeof doc === 'object' && doc !== null && 'schema_version' in doc) throw new InputError(`qs show: ${file}: is a results document, not a stream file (qs report ${file} renders it)`);
}

/** The first attempt's stream in a sweep's folder (TASK/N/events.ndjson), for the hint. */
function firstAttemptStream(dir: string): string | undefined {
  const list = (d: string): string[] => {
    try {
      return readdirSync(d).sort();
    } catch {
      return [];
    }
  };
  for (const task of list(dir)) for (const n of list(join(dir, task))) if (existsSync(join(dir, task, n, 'events.ndjson'))) return join(task, n, 'events.ndjson');
  return undefined;
}

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
    // quickstarted's trace.jsonl is a format of its own: rendered in the same manner, not refused.
    // A saved file's first line, read once: it tells quickstarted's trace and a results document from a stream.
    const head = file === '-' ? '' : firstLine(resolve(io.cwd, file)).trim();
    if (file !== '-' && isQuickstartedLine(head)) {
      const events = parseQuickstartedTrace(readFileSync(resolve(io.cwd, file), 'utf8'), `qs show: ${file}`);
      io.stdout.write(terminalSafe(`${quickstartedLines(events, logLevel(args) === 'verbose').join('\n')}\n`, 'block'));
      return QsExit.passed;
    }
    if (file !== '-') notAStream(file, resolve(io.cwd, file), head);
    const render = createRenderer({ verbose: logLevel(args) === 'verbose', style: (k, t) => styles[k](t) });
    const { stream, source } = open(file, io);
    const runs = new Map<string, WireEvent[]>();
    const write = (text: string): void => {
      io.stdout.write(text);
    };
    try {
      for await (const { event } of readEvents(stream, { source })) {
        const list = runs.get(event.run_id) ?? [];
        list.push(event);
        runs.set(event.run_id, list);
        const lines = render(event);
        if (lines.length > 0) write(`${lines.join('\n')}\n`);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new InputError(`qs show: ${file}: no such file`);
      if ((error as NodeJS.ErrnoException).code === 'EISDIR') throw new InputError(`qs show: ${file}: is a folder, not a stream file`);
      throw error;
    }
    // A saved file with no event is a run that was not saved; an empty stdin is a pipe with nothing upstream.
    if (runs.size === 0 && file !== '-') throw new InputError(`qs show: ${file}: no events (an empty stream)`);
    // A loop-gate stream is one or more gate rounds and no terminal event: it is whole once every
    // round has its verdict. Anything else (a quickstart run, a loop) ends with a terminal event.
    const complete = (events: WireEvent[]): boolean => {
      if (events.some((e) => isTerminal(e.type))) return true;
      const rounds = events.filter((e) => e.type === 'gate.started').length;
      const gateOnly = rounds > 0 && !events.some((e) => e.type === 'loop.started' || e.type === 'task.loaded');
      return gateOnly && events.filter((e) => e.type === 'gate.verdict').length >= rounds;
    };
    const missing = (events: WireEvent[]): string =>
      events.some((e) => e.type === 'loop.started') ? 'no loop.completed or loop.failed' : events.some((e) => e.type === 'task.loaded') || !events.some((e) => e.type === 'gate.started') ? 'no run.completed, run.failed or run.interrupted' : 'a gate round without its gate.verdict';
    const open_ = new Map<string, string[]>();
    for (const [id, events] of runs) if (!complete(events)) open_.set(missing(events), [...(open_.get(missing(events)) ?? []), terminalSafe(id)]);
    for (const [what, ids] of open_) write(`(incomplete stream: ${what} for run ${ids.join(', ')})\n`);
    // Several task runs in one stream get their pass rates from the same fold as results.json.
    const perTask = new Map<string, number>();
    const attempts = [...runs.values()]
      .filter((events) => events.some((e) => e.type === 'task.loaded'))
      .map((events) => {
        const task = foldRun({ slug: '', attempt: 1, events }).task;
        const attempt = (perTask.get(task) ?? 0) + 1;
        perTask.set(task, attempt);
        return { slug: task, attempt, events };
      });
    if (attempts.length > 1) for (const t of foldResults(attempts, VERSION).tasks) write(`${terminalSafe(t.task)}: ${rateText(t)}${t.flaky ? ' FLAKY' : ''}\n`);
    return QsExit.passed;
  },
};
