// `qs report RESULTS [--out FILE]`: one self-contained HTML page from a results.json or a `qs run --out`
// folder, read through the results fold; the transcripts come from the attempts' saved streams.
import { existsSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { InputError, parseArgs, QsExit } from '@quickloop/cli-kit';
import type { WireEvent } from '@quickloop/events';
import type { Command } from '../command.js';
import type { Results } from '../results/fold.js';
import { reportHtml } from '../results/html.js';
import { loadResults, readAttempts, readStreamFile, resultsFromDir } from '../results/load.js';
import { parseQuickstartedTrace, quickstartedLines } from '../results/trace.js';
import { VERSION } from '../version.js';

/** A run's `stream` as the fold writes it; anything else (`../`, an absolute path) is not read. */
const STREAM = /^[a-z0-9._-]+\/[1-9]\d*\/events\.ndjson$/;

/** `out/` → `out.html`, `out/results.json` → `out/results.html`. */
export function defaultOut(path: string): string {
  const p = path.replace(/\/+$/, '');
  return p.endsWith('.json') ? `${p.slice(0, -'.json'.length)}.html` : `${p}.html`;
}

/** A path as the disk has it (symlinks followed); one not yet there, by its folder's. */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

/** A task name the prior art could have made a folder of; anything else (`..`, a slash) is not looked up. */
const FOLDER_NAME = /^(?!\.\.?$)[A-Za-z0-9._-]+$/;

/**
 * quickstarted's traces for the runs of its results.json in `dir`, rendered as qs show renders them,
 * keyed as the page keys its runs (`run-TASK-RUN`): TASK/attempt-N/trace.jsonl, or TASK/trace.jsonl
 * for a task of one run (it writes attempt folders only with --repeat above 1).
 */
function quickstartedTraces(results: Results, dir: string, shown: string, read: Set<string>): Map<string, { file: string; text: string }> {
  const traces = new Map<string, { file: string; text: string }>();
  for (const [i, t] of results.tasks.entries()) {
    const runs = Array.isArray(t.runs) ? t.runs : [];
    if (typeof t.task !== 'string' || !FOLDER_NAME.test(t.task)) continue;
    for (const [j, r] of runs.entries()) {
      const run = (typeof r === 'object' && r !== null ? r : {}) as { stream?: unknown; attempt?: unknown };
      if (run.stream !== undefined) continue;
      const attempt = Number.isInteger(run.attempt) ? (run.attempt as number) : j + 1;
      const candidates = [join(t.task, `attempt-${attempt}`, 'trace.jsonl'), ...(runs.length === 1 ? [join(t.task, 'trace.jsonl')] : [])];
      const rel = candidates.find((c) => statSync(join(dir, c), { throwIfNoEntry: false })?.isFile() ?? false);
      if (rel === undefined) continue;
      const events = parseQuickstartedTrace(readFileSync(join(dir, rel), 'utf8'), join(shown, rel));
      read.add(join(dir, rel));
      traces.set(`run-${i}-${j}`, { file: rel, text: quickstartedLines(events, false).join('\n') });
    }
  }
  return traces;
}

/** The page's facts, and every file they were read from (never to be written over by the page). */
async function load(path: string, shown: string): Promise<{ results: Results; streams: Map<string, WireEvent[]>; traces?: Map<string, { file: string; text: string }>; fromFolder: boolean; read: Set<string> }> {
  if (!existsSync(path)) throw new InputError(`qs report: ${shown}: no such file or folder`);
  const streams = new Map<string, WireEvent[]>();
  const read = new Set<string>([path]);
  if (statSync(path).isDirectory()) {
    const attempts = await readAttempts(path, shown);
    for (const a of attempts) {
      streams.set(`${a.slug}/${a.attempt}/events.ndjson`, a.events);
      read.add(join(path, a.slug, String(a.attempt), 'events.ndjson'));
    }
    const file = join(path, 'results.json');
    read.add(file);
    if (existsSync(file)) {
      const results = await loadResults(file, join(shown, 'results.json'), VERSION);
      return { results, streams, traces: quickstartedTraces(results, path, shown, read), fromFolder: true, read };
    }
    if (attempts.length === 0) throw new InputError(`qs report: ${shown}: no results.json and no saved runs (expected SLUG/ATTEMPT/events.ndjson, as qs run --out writes)`);
    // The fold qs results makes of the folder (its plan, its refusals), from the streams already read.
    return { results: await resultsFromDir(path, VERSION, shown, attempts), streams, fromFolder: true, read };
  }
  const results = await loadResults(path, shown, VERSION);
  // A results.json still in its --out folder has its streams beside it.
  const dir = dirname(path);
  for (const t of results.tasks) {
    for (const r of Array.isArray(t.runs) ? t.runs : []) {
      const stream = (r as { stream?: unknown } | null)?.stream;
      if (typeof stream !== 'string' || !STREAM.test(stream) || streams.has(stream)) continue;
      const file = join(dir, stream);
      if (existsSync(file)) {
        streams.set(stream, await readStreamFile(file, join(dirname(shown), stream)));
        read.add(file);
      }
    }
  }
  return { results, streams, traces: quickstartedTraces(results, dir, dirname(shown), read), fromFolder: false, read };
}

export const report: Command = {
  name: 'report',
  summary: 'Write one self-contained HTML page from results (a results.json or an --out folder): pass rates, docs gaps, transcripts, egress, cost',
  async run(argv, io) {
    const args = parseArgs(argv, { name: 'qs report', version: VERSION, usage: '$0 RESULTS [--out FILE]', out: io.stdout, positionals: 1 }, (y) =>
      y.option('out', { alias: 'o', type: 'string', describe: 'Where to write the page (default: RESULTS with .html)' }),
    );
    const target = String(args._[0] ?? '');
    if (target === '') throw new InputError('qs report: name a results.json or the folder a `qs run --out DIR` wrote');
    const path = resolve(io.cwd, target);
    const { results, streams, traces, fromFolder, read } = await load(path, target);
    // The default is made from the resolved path, so `qs report .` writes ../NAME.html, not `..html`.
    const shownOut = args.out !== undefined ? String(args.out) : relative(io.cwd, defaultOut(path));
    if (args.out !== undefined && shownOut === '') throw new InputError('qs report: --out: name a file');
    const out = resolve(io.cwd, shownOut);
    if (out === path) throw new InputError(`qs report: --out ${shownOut}: is the results it reads`);
    const realOut = real(out);
    if ([...read].some((f) => real(f) === realOut)) throw new InputError(`qs report: --out ${shownOut}: is a file the report reads`);
    if (existsSync(out) && statSync(out).isDirectory()) throw new InputError(`qs report: --out ${shownOut}: is a folder, not a file`);
    const html = reportHtml(results, streams, { fromFolder, traces });
    try {
      writeFileSync(out, html);
    } catch (error) {
      throw new InputError(`qs report: --out ${shownOut}: cannot write (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    const transcripts = streams.size + (traces?.size ?? 0);
    const runs = results.tasks.reduce((s, t) => s + (Array.isArray(t.runs) ? t.runs.length : 0), 0);
    io.stderr.write(`qs report: wrote ${relative(io.cwd, out) || out} (${results.tasks.length} task${results.tasks.length === 1 ? '' : 's'}, ${runs} run${runs === 1 ? '' : 's'}, ${transcripts} transcript${transcripts === 1 ? '' : 's'})\n`);
    return QsExit.passed;
  },
};
