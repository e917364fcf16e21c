// Live progress of a sweep on stderr: one redrawn status line on a terminal, stamped lines otherwise.
import { terminalSafe } from '@quickloop/cli-kit';
import { Chalk } from 'chalk';

export interface ProgressOptions {
  stream: { write(text: string): unknown; isTTY?: boolean };
  colour: boolean;
  /** A redrawn status line (a terminal) instead of stamped lines (a log, CI). */
  live: boolean;
  quiet: boolean;
  total: number;
  now: () => number;
  /** GitHub Actions reads this stream for workflow commands (GITHUB_ACTIONS=true). */
  workflowCommands?: boolean;
}

export interface Progress {
  started(label: string): void;
  /** A line of a stage's stderr, said for one attempt. */
  line(label: string, text: string): void;
  finished(label: string, verdict: string, detail: string): void;
  /** A line that is not about one attempt (the summary, a warning). */
  say(text: string): void;
  close(): void;
}

/**
 * A line the Actions runner reads as text only. Its `::name::` form counts only at a line's start,
 * which a stamped line never is, but its legacy `##[name]` form counts anywhere in a line, and a
 * stage's line or a verdict's detail carries what a command from the docs printed: `##[add-mask]`
 * would hide words from the log, `##[stop-commands]` silence the annotations, `##[set-output]` set
 * the step's outputs. The second `#` is shown escaped, as terminalSafe shows a control.
 */
export const noWorkflowCommand = (text: string): string => text.replaceAll('##[', '#\\x23[');

export function createProgress(o: ProgressOptions): Progress {
  const chalk = new Chalk({ level: o.colour ? 1 : 0 });
  const t0 = o.now();
  const running = new Set<string>();
  const tally = { PASS: 0, FAIL: 0, INCONCLUSIVE: 0, SKIP: 0 } as Record<string, number>;
  let done = 0;
  let drawn = false;
  const stamp = (): string => `[${String(Math.round((o.now() - t0) / 1000)).padStart(4)}s]`;
  const paint = (verdict: string): string =>
    verdict === 'PASS' ? chalk.green(verdict) : verdict === 'FAIL' ? chalk.red(verdict) : verdict === 'SKIP' ? chalk.dim(verdict) : chalk.yellow(verdict);
  const clear = (): void => {
    if (drawn) o.stream.write('\r\x1b[K');
    drawn = false;
  };
  const draw = (): void => {
    if (!o.live) return;
    const names = [...running];
    const shown = names.slice(0, 3).join(', ') + (names.length > 3 ? ` +${names.length - 3}` : '');
    // Every finished attempt is in one count: an interrupted one too, when there is one.
    const counts = `${tally.PASS} pass · ${tally.FAIL} fail · ${tally.INCONCLUSIVE} inconclusive · ${tally.SKIP} skip${tally.INTERRUPTED ? ` · ${tally.INTERRUPTED} interrupted` : ''}`;
    const text = `${stamp()} ${done}/${o.total} done · ${counts}${shown ? ` · running ${shown}` : ''}`;
    // A status line longer than the terminal would wrap and leave a trail on every redraw.
    const columns = (o.stream as { columns?: number }).columns;
    // A pseudo-terminal nobody sized says 0 columns.
    const width = Math.max(20, (columns !== undefined && columns > 0 ? columns : 100) - 1);
    o.stream.write(text.length > width ? `${text.slice(0, width - 1)}…` : text);
    drawn = true;
  };
  const emit = (text: string): void => {
    clear();
    o.stream.write(`${o.workflowCommands === true ? noWorkflowCommand(text) : text}\n`);
    draw();
  };
  return {
    started(label) {
      running.add(label);
      if (o.quiet) return;
      if (o.live) {
        clear();
        draw();
      } else emit(`${stamp()} ${terminalSafe(label)} started`);
    },
    line(label, text) {
      if (o.quiet) return;
      emit(o.live ? `${terminalSafe(label)}  ${terminalSafe(text)}` : `${stamp()} ${terminalSafe(label)}  ${terminalSafe(text)}`);
    },
    finished(label, verdict, detail) {
      running.delete(label);
      done += 1;
      tally[verdict] = (tally[verdict] ?? 0) + 1;
      emit(`${stamp()} ${terminalSafe(label)} ${paint(verdict)} ${terminalSafe(detail)}`);
    },
    say(text) {
      emit(text);
    },
    close() {
      clear();
    },
  };
}
