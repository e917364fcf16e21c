// quickstarted's per-run trace (TASK/trace.jsonl, or TASK/attempt-N/trace.jsonl with --repeat):
// one JSON object a line, `{"ts": epoch seconds, "type": …}`, a format of its own beside its
// results.json. qs show and qs report read it so a prior-art run can be looked at without it.
import { InputError } from '@quickloop/cli-kit';
import { terminalSafe } from '@quickloop/cli-kit/safe-text';

export type TraceEvent = Record<string, unknown> & { type: string; ts: number };

/** Is this line the start of a quickstarted trace (a number `ts`, a `type`, none of our envelope)? */
export function isQuickstartedLine(line: string): boolean {
  try {
    const o = JSON.parse(line) as unknown;
    return typeof o === 'object' && o !== null && !Array.isArray(o) && typeof (o as TraceEvent).ts === 'number' && typeof (o as TraceEvent).type === 'string' && !('v' in o) && !('run_id' in o);
  } catch {
    return false;
  }
}

/** The trace's events; a line that is not one stops it with `SHOWN:LINE: message`. */
export function parseQuickstartedTrace(text: string, shown: string): TraceEvent[] {
  const events: TraceEvent[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '') continue;
    let o: unknown;
    try {
      o = JSON.parse(line);
    } catch {
      throw new InputError(`${shown}:${i + 1}: not JSON (a quickstarted trace has one event a line)`);
    }
    if (typeof o !== 'object' || o === null || Array.isArray(o) || typeof (o as TraceEvent).type !== 'string') throw new InputError(`${shown}:${i + 1}: not a quickstarted trace event (expected an object with a type)`);
    events.push(o as TraceEvent);
  }
  return events;
}

const raw = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
// A field as written by the run (a page's error, the model's text, a command): one line, its controls
// and newlines made visible, so it cannot forge a step or act on the terminal.
const s = (v: unknown): string => terminalSafe(raw(v));
const tail = (text: string, chars: number): string => (text.length > chars ? `…${text.slice(text.length - chars)}` : text);
const LABELS: Record<string, string> = { passed: 'PASS', docs_gap: 'FAIL', skipped: 'SKIP' };

/** The run for people, a stamped line a step, in qs show's manner; output only where a step failed (all with verbose). */
export function quickstartedLines(events: readonly TraceEvent[], verbose: boolean): string[] {
  const start = events.find((e) => typeof e.ts === 'number')?.ts ?? 0;
  const out: string[] = [];
  let task = '';
  const line = (e: TraceEvent, text: string): void => {
    const secs = typeof e.ts === 'number' ? Math.max(0, e.ts - start) : 0;
    out.push(`[${secs.toFixed(1).padStart(7)}s] ${text}`);
  };
  const output = (text: unknown, chars: number): void => {
    const t = raw(text).trimEnd();
    if (t !== '') for (const l of tail(t, chars).split('\n')) out.push(`    | ${terminalSafe(l, 'block')}`);
  };
  const command = (c: unknown): string => {
    // Every line of a heredoc indented under the first, as qs show shows our streams' commands.
    const lines = raw(c).replace(/\n+$/, '').split('\n').map((l) => terminalSafe(l, 'block'));
    return verbose || lines.length === 1 ? lines.join('\n      ') : `${lines[0] as string}  … (${lines.length - 1} more line${lines.length === 2 ? '' : 's'})`;
  };
  for (const e of events) {
    switch (e.type) {
      case 'run_start':
        task = s(e.task);
        line(e, `task ${task} (quickstarted trace)  attempt ${s(e.attempt)}`);
        line(e, `sandbox ${s(e.backend)}${e.enforced === true ? '' : ' UNENFORCED'}${e.image ? ` image ${s(e.image)}` : ''}`);
        line(e, `agent ${s(e.agent)}`);
        break;
      case 'setup':
        line(e, `setup $ ${command(e.command)}`);
        line(e, `exit ${s(e.exit_code)}`);
        if (verbose || e.exit_code !== 0) output(e.output, verbose ? 1200 : 400);
        break;
      case 'docs_read':
      case 'docs_fetch': {
        const notes = [typeof e.chars === 'number' ? `${e.chars} chars` : '', e.from_cache === true ? 'cached' : '', e.truncated === true ? (typeof e.original_chars === 'number' ? `TRUNCATED from ${e.original_chars}` : 'TRUNCATED') : ''].filter((n) => n !== '');
        line(e, `read ${s(e.url)}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`);
        break;
      }
      case 'docs_read_blocked':
      case 'fetch_blocked':
      case 'affordance_withheld':
        line(e, `read BLOCKED ${s(e.url)} (${e.type === 'affordance_withheld' ? 'affordance withheld' : s(e.reason) || 'not on the allow list'})`);
        break;
      case 'docs_read_error':
      case 'fetch_error':
        line(e, `read failed ${s(e.url)}: ${s(e.error)}`);
        break;
      case 'egress_blocked':
        line(e, `egress ${s(e.host)} BLOCKED (${s(e.reason)})`);
        break;
      case 'egress_error':
        line(e, `egress ${s(e.host)} failed: ${s(e.error)}`);
        break;
      case 'tool_call':
        if (e.tool === 'bash') line(e, `$ ${command(e.command)}`);
        else if (verbose) line(e, `${s(e.tool)} ${s(e.url)}`);
        break;
      case 'tool_result':
        if (e.tool !== 'bash') break;
        line(e, `exit ${s(e.exit_code)}${typeof e.duration === 'number' ? ` (${e.duration.toFixed(1)}s)` : ''}${e.timed_out === true ? ' TIMED OUT' : ''}`);
        if (verbose || e.exit_code !== 0) output(e.output, verbose ? 1200 : 400);
        break;
      case 'agent_final':
        {
          // The model's text keeps its lines, each indented under the step.
          const [first, ...rest] = tail(raw(e.text), 500).split('\n');
          line(e, `agent said: ${terminalSafe(first ?? '', 'block')}`);
          for (const l of rest) out.push(`    ${terminalSafe(l, 'block')}`);
        }
        break;
      case 'success_check':
        line(e, e.passed === true ? 'check passed' : `check failed, exit ${s(e.exit_code)}`);
        output(e.output, 1200);
        break;
      case 'run_end': {
        const c = s(e.classification);
        line(e, c === '' ? `run ended: stop reason ${s(e.stop_reason)}, no classification` : `${LABELS[c] ?? 'INCONCLUSIVE'} ${task}: ${c} (stop reason ${s(e.stop_reason)})`);
        break;
      }
      default:
        if (verbose) line(e, e.type);
    }
  }
  if (!events.some((e) => e.type === 'run_end')) out.push('(incomplete trace: no run_end)');
  return out;
}
