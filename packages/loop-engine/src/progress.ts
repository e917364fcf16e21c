// Where a loop's events go: NDJSON to stdout when it is a pipe or a file, a readable view when it is a
// terminal, and NDJSON to --events FILE on request (with either).
import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '@quickloop/cli-kit/errors';
import type { Io } from '@quickloop/cli-kit/io';
import { createLogger } from '@quickloop/cli-kit/logger';
import { terminalSafe } from '@quickloop/cli-kit/safe-text';
import { EventWriter, createEmitter, detachableEvents, type EventType, type Payload } from '@quickloop/events';

type Emit = <T extends EventType>(type: T, payload: Payload<T>, meta?: { id?: string; parent_id?: string }) => void;

export interface EventSinks {
  emit: Emit;
  /** Passes a line read from stdin on, unchanged (loop-gate reading artifact.written events). */
  forward(raw: string): Promise<void>;
  flush(): Promise<void>;
  /** True when a person reads the run on a terminal: progress lines replace the info log. */
  readonly viewing: boolean;
}

// What a model, a CLI or a spec wrote, shown on one line: the writer keeps SGR (the view's own colours),
// so a judge's `\x1b[8m` (conceal) or `\x1b[31m` would act on the operator's terminal unless made text here.
const shown = (text: unknown): string => terminalSafe(String(text), 'line');

const seconds = (ms: number): string => (ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`);

/**
 * What the view needs to keep a live line under the log while calls are out: a model call can take
 * minutes, and a person should see that it is still going and for how long. The line is redrawn with
 * a carriage return and spaces, no escape sequence, so NO_COLOR and a dumb terminal read it the same.
 */
export interface LiveLine {
  now(): number;
  /** Calls `fn` every `ms` until the returned function is called (the timer must not hold the process open). */
  every(ms: number, fn: () => void): () => void;
  write(text: string): void;
  /** The terminal's width, when it is known (a pseudo-terminal nobody sized says 0). */
  columns(): number | undefined;
}

/** A call must have been out this long before the live line names it (a quick call never flickers). */
const LIVE_AFTER_MS = 1000;
/**
 * A timer fires by the event loop's clock, which can trail the wall clock a call's start was read
 * from: the first tick may come a few ms short of LIVE_AFTER_MS by that clock. Ages are read with
 * this much slack, so that tick still shows the call (as 1 s) instead of skipping to the next.
 */
const TIMER_SLACK_MS = 50;

/**
 * Turns events into lines for a person: phase, iteration, who is called and for how long, each
 * verdict with its first blocking issue and the review file to open, and a last line with the cause.
 */
export class ProgressView {
  readonly #line: (text: string) => void;
  readonly #c: ReturnType<typeof createLogger>['color'];
  readonly #calls = new Map<string, { member: string; purpose: string; since: number }>();
  readonly #live: LiveLine | undefined;
  #stopTicking: (() => void) | undefined;
  /** The width of the live line on screen now (0: none is shown). */
  #shownWidth = 0;
  #lastVerdict: { gate: string; failures: string[]; review: string | null } | null = null;
  /** What each failed check of the current round said (or what it ran, when it said nothing). */
  #checkNotes = new Map<string, string>();

  constructor(line: (text: string) => void, color: ReturnType<typeof createLogger>['color'], live?: LiveLine) {
    this.#c = color;
    this.#live = live;
    this.#line = (text) => {
      this.#clearLive();
      line(text);
    };
  }

  /** Stops the live line (the run is over, or was cut short with calls still out). */
  close(): void {
    this.#stopTicking?.();
    this.#stopTicking = undefined;
    this.#clearLive();
  }

  #clearLive(): void {
    if (this.#shownWidth === 0 || !this.#live) return;
    this.#live.write(`\r${' '.repeat(this.#shownWidth)}\r`);
    this.#shownWidth = 0;
  }

  #drawLive(): void {
    const live = this.#live;
    if (!live) return;
    const now = live.now();
    const age = (c: { since: number }): number => now - c.since + TIMER_SLACK_MS;
    const out = [...this.#calls.values()].filter((c) => age(c) >= LIVE_AFTER_MS);
    if (out.length === 0) return;
    let text = `  … waiting on ${out.map((c) => `${shown(c.member)} (${shown(c.purpose)}) ${Math.floor(age(c) / 1000)} s`).join(', ')}`;
    // One row only: a line that wraps cannot be taken back with a carriage return.
    const width = Math.max(20, (live.columns() || 80) - 1);
    if (text.length > width) text = `${text.slice(0, width - 1)}…`;
    live.write(`\r${text}${' '.repeat(Math.max(0, this.#shownWidth - text.length))}`);
    this.#shownWidth = Math.max(this.#shownWidth, text.length);
  }

  #callStarted(id: string, member: string, purpose: string): void {
    this.#calls.set(id, { member, purpose, since: this.#live?.now() ?? 0 });
    if (this.#live && !this.#stopTicking) this.#stopTicking = this.#live.every(LIVE_AFTER_MS, () => this.#drawLive());
  }

  #callEnded(id: string | undefined): { member: string; purpose: string } | undefined {
    const call = id === undefined ? undefined : this.#calls.get(id);
    if (id !== undefined) this.#calls.delete(id);
    if (this.#calls.size === 0) this.close();
    return call;
  }

  on(type: EventType, p: Record<string, any>, meta: { id?: string; parent_id?: string } = {}): void {
    const c = this.#c;
    switch (type) {
      case 'loop.started':
        this.#line(`${c.bold('loop')} ${p.spec} ${c.dim(`(workspace ${p.workspace}${p.resumed ? `, resuming from ${p.status}` : ''})`)}`);
        break;
      case 'iteration.started':
        this.#line(c.bold(`iteration ${p.iteration} of ${p.max_iterations}`));
        break;
      case 'artifact.written':
        this.#line(`  wrote ${p.path}${p.phase === 'revise' ? ' (revised)' : ''}`);
        break;
      case 'gate.started':
        this.#checkNotes.clear();
        this.#line(`${c.bold(p.gate)} round ${p.round} on ${p.artifact}${p.revision ? ` (after revision ${p.revision})` : ''}`);
        break;
      case 'model.call':
        this.#line(`  calling ${p.member} (${p.role}: ${p.purpose}) …`);
        // Questions (consent, human checks) are all asked before a round's calls start: none waits under the live line.
        if (meta.id) this.#callStarted(meta.id, p.member, p.purpose);
        break;
      case 'model.result': {
        const call = this.#callEnded(meta.parent_id);
        const what = `${p.member}${call ? ` (${call.purpose})` : ''}`;
        if (p.ok) this.#line(`  ${what} answered in ${seconds(p.duration_ms)}`);
        else this.#line(c.red(`  ${what} failed after ${seconds(p.duration_ms)}${p.timed_out ? ' (timed out)' : ''}: ${shown(String(p.error ?? `exit ${p.exit_code}`).split('\n')[0])}`));
        break;
      }
      case 'gate.check': {
        const note = p.passed || p.kind !== 'programmatic' ? undefined : typeof p.said === 'string' ? shown(p.said) : Array.isArray(p.argv) ? `${shown(p.argv.join(' '))} printed nothing` : undefined;
        if (note) this.#checkNotes.set(`Programmatic check failed: ${p.criterion}`, note);
        this.#line(`  ${p.passed ? c.green('✓') : c.red('✗')} ${p.criterion} (${p.kind}${p.exit_code !== null && p.exit_code !== undefined ? `, exit ${p.exit_code}` : ''})${note ? `: ${note}` : ''}`);
        break;
      }
      case 'review.completed':
        this.#line(`  review from ${p.member} (${p.chars} chars)`);
        break;
      case 'gate.verdict': {
        // A failed check's entry carries what it said: the last line then names the cause, not only the check.
        const failures = (p.failures as string[]).map((f) => (this.#checkNotes.has(f) ? `${f} (${this.#checkNotes.get(f)})` : f));
        this.#lastVerdict = { gate: p.gate, failures, review: p.review };
        if (p.verdict === 'pass') this.#line(`${c.bold(p.gate)}: ${c.green('pass')}`);
        else if (p.verdict === 'blocked') this.#line(`${c.bold(p.gate)}: ${c.red('blocked')} — ${shown(p.failures[0] ?? 'no answer')}`);
        else {
          const first = shown(p.failures[0] ?? 'another pass');
          const more = p.failures.length > 1 ? ` (+${p.failures.length - 1} more)` : '';
          this.#line(`${c.bold(p.gate)}: ${c.yellow('revise')} — ${first}${more}${p.review ? ` — see ${p.review}` : ''}`);
        }
        break;
      }
      case 'gate.revision':
        this.#line(`  host revised ${p.artifact} (revision ${p.revision})`);
        break;
      case 'no_progress.detected':
        this.#line(c.yellow(`no progress: ${p.gate} failed the same way ${p.count} times (${shown(p.failures[0] ?? '')})`));
        break;
      case 'consent.answered':
        this.#line(`  consent for ${p.member}: ${p.granted ? 'granted' : p.how === 'end_of_input' ? 'refused (stdin closed)' : 'refused'}`);
        break;
      case 'redaction.applied':
        this.#line(c.yellow(`  scrubbed flagged content from ${p.sources.join(', ')} out of ${p.where}`));
        break;
      case 'loop.completed':
        this.#line(c.green(`${c.bold('PASSED')}${p.already_passed ? ' (already)' : ''}: ${p.final_delivery || 'the loop'} — iteration ${p.iteration}, ${p.usage.calls} call(s), ${p.wall_clock_used_sec} s`));
        break;
      case 'loop.failed':
        this.#line(c.red(`${c.bold(String(p.status).toUpperCase())}: ${this.cause(p.failure)}`));
        break;
      default:
        break;
    }
  }

  /** The failure and, for a gate that never passed, what still blocked it and where the review is. */
  cause(failure: string): string {
    const v = this.#lastVerdict;
    if (!v || v.failures.length === 0 || !/max_iterations|max_revisions|no_progress/.test(failure)) return shown(failure.split('\n')[0] ?? failure);
    return `${shown(failure)} — ${v.gate} still blocked by: ${shown(v.failures.join('; '))}${v.review ? ` (see ${v.review})` : ''}`;
  }

  /** loop-gate's own last line: the round's outcome. */
  verdictLine(passed: boolean): void {
    const v = this.#lastVerdict;
    if (passed) this.#line(this.#c.green(this.#c.bold('PASS')));
    else this.#line(this.#c.yellow(`${this.#c.bold('REVISE')}${v ? `: ${shown(v.failures.join('; ') || 'another pass')}${v.review ? ` (see ${v.review})` : ''}` : ''}`));
  }
}

export function openEvents(o: { io: Io; stage: 'loop-run' | 'loop-gate'; runId: () => string; eventsFile?: string }): EventSinks & { view: ProgressView | null } {
  const { io } = o;
  const tty = (io.stdout as { isTTY?: boolean }).isTTY === true;
  const sinks: { emit: Emit; forward(raw: string): Promise<void>; flush(): Promise<void> }[] = [];
  let file: WriteStream | undefined;
  if (!tty) {
    const writer = new EventWriter(io.stdout);
    sinks.push(detachableEvents({ emitter: createEmitter({ stage: o.stage, writer, now: io.now }), writer, runId: o.runId }));
  }
  if (o.eventsFile) {
    // Opened now, not by the stream later: a stream's open error would only detach the sink, and the
    // record asked for would be lost without a word while the run went on and paid for its calls.
    let fd: number;
    try {
      fd = openSync(resolve(io.cwd, o.eventsFile), 'w');
    } catch (error) {
      throw new UsageError(`cannot write --events ${o.eventsFile}: ${(error as Error).message}`);
    }
    file = createWriteStream('', { fd });
    const writer = new EventWriter(file);
    sinks.push(detachableEvents({ emitter: createEmitter({ stage: o.stage, writer, now: io.now }), writer, runId: o.runId }));
  }
  // The view is on the terminal itself; NO_COLOR (and a terminal that is not one) turn colour off.
  const log = createLogger({ stream: io.stdout as Io['stderr'], env: io.env });
  const out = io.stdout as Io['stdout'] & { columns?: number };
  const live: LiveLine = {
    now: () => io.now().getTime(),
    every: (ms, fn) => {
      const timer = setInterval(fn, ms);
      timer.unref();
      return () => clearInterval(timer);
    },
    write: (text) => {
      try {
        out.write(text);
      } catch {
        /* a closed terminal never stops the run */
      }
    },
    columns: () => out.columns,
  };
  const view = tty ? new ProgressView((l) => log.error(l), log.color, live) : null;
  return {
    viewing: tty,
    view,
    emit: (type, payload, meta) => {
      for (const s of sinks) s.emit(type, payload, meta);
      view?.on(type, payload as Record<string, any>, meta);
    },
    forward: async (raw) => {
      for (const s of sinks) await s.forward(raw);
    },
    flush: async () => {
      view?.close();
      for (const s of sinks) await s.flush();
      if (file) {
        const f = file;
        file = undefined;
        await new Promise<void>((res, rej) => f.end((e?: Error | null) => (e ? rej(e) : res())));
      }
    },
  };
}
