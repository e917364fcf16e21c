// What `qs run` and `qs merge` do with a finished results document: JUnit, the summary, GitHub's
// annotations and step summary, and the exit code — one place, so a merged sweep reads as a run.
import { appendFileSync, closeSync, existsSync, lstatSync, openSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { QsExit, terminalSafe, UsageError, type Io } from '@quickloop/cli-kit';
import type { Results } from './fold.js';
import { githubAnnotations, junitXml, summaryMarkdown } from './reports.js';

export interface ReportPaths {
  junit?: string | undefined;
  summary?: string | undefined;
}

/** A report path that cannot be written is found before the work, not after it. */
export function checkReportPaths(paths: ReportPaths, cwd: string, command: string): void {
  for (const flag of ['junit', 'summary'] as const) {
    const value = paths[flag];
    if (value === undefined) continue;
    const file = resolve(cwd, value);
    if (value === '' || (existsSync(file) && statSync(file).isDirectory())) throw new UsageError(`${command}: --${flag} ${value}: name a file`);
    if (!existsSync(dirname(file))) throw new UsageError(`${command}: --${flag} ${value}: its folder does not exist`);
    // Tried, not guessed from modes: a root harness may write anywhere a mode says no, and nowhere
    // under /proc or a read-only mount, or below a file. A file made only to try is taken away again.
    // lstat: a link (dangling or not) is the user's and stays; only a file this try made is removed.
    let existed = false;
    try {
      existed = lstatSync(file, { throwIfNoEntry: false }) !== undefined;
    } catch {
      /* below a file (ENOTDIR): the try to write it says so */
    }
    try {
      closeSync(openSync(file, 'a'));
    } catch (error) {
      throw new UsageError(`${command}: --${flag} ${value}: cannot be written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    if (!existed) rmSync(file, { force: true });
  }
}

export function publishResults(results: Results, paths: ReportPaths, io: Io, command: string): void {
  if (paths.junit !== undefined) writeFileSync(resolve(io.cwd, paths.junit), junitXml(results));
  const summary = summaryMarkdown(results);
  if (paths.summary !== undefined) writeFileSync(resolve(io.cwd, paths.summary), summary);
  if (io.env.GITHUB_ACTIONS === 'true') {
    // Workflow commands are read from the step's output: stderr here, as stdout carries events only.
    for (const line of githubAnnotations(results)) io.stderr.write(`${line}\n`);
    const stepSummary = io.env.GITHUB_STEP_SUMMARY;
    try {
      if (stepSummary) appendFileSync(stepSummary, summary);
    } catch (error) {
      // The runner's file, not the user's input: say so, and let the verdict stand.
      io.stderr.write(`${command}: warning: could not append to GITHUB_STEP_SUMMARY (${terminalSafe((error as Error).message)})\n`);
    }
  }
}

/**
 * The exit-code table: 3 for an invalid file or a stage's usage error (after the rest ran), 1 any
 * docs gap, 2 no evidence — and 2 when an attempt of the plan was not run, which is never a pass.
 */
export function exitCode(results: Results, usage: number, strict: boolean): number {
  if (usage !== 0) return QsExit.usage;
  const c = results.counts;
  if (c.docs_gap > 0) return QsExit.docsGap;
  if ((c.not_run ?? 0) > 0) return QsExit.noEvidence;
  if (strict && c.inconclusive + c.interrupted > 0) return QsExit.noEvidence;
  return c.passed > 0 ? QsExit.passed : QsExit.noEvidence;
}
