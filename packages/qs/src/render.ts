// Renders any quickloop event stream for people: stamped lines, failed commands with their output.
import { terminalSafe } from '@quickloop/cli-kit/safe-text';
import type { WireEvent } from '@quickloop/events';

export interface RenderOptions {
  /** Every command's output, allowed egress and unknown event types too. */
  verbose: boolean;
  /** Wraps a span in a style; identity without colour. */
  style?: (kind: 'pass' | 'fail' | 'warn' | 'dim' | 'bold', text: string) => string;
}

const CLIP = 400;
const CLIP_VERBOSE = 1200;

/** A multi-line command (a heredoc) shows its first line and how many follow, all of it with --verbose. */
function commandText(command: string, verbose: boolean): string {
  const lines = command.replace(/\n+$/, '').split('\n').map((l) => terminalSafe(l, 'block'));
  if (verbose || lines.length === 1) return lines.join('\n      ');
  return `${lines[0]}  … (${lines.length - 1} more line${lines.length === 2 ? '' : 's'})`;
}

// Every field of a stream may come from inside the sandbox (or from a forged file): shown as one
// line with its controls made visible, so it can neither act on the terminal nor forge a line.
const raw = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));
const str = (v: unknown): string => terminalSafe(raw(v));

/** Output as `| ` lines, clipped from the front so the end (where errors are) survives. */
function outputLines(output: string, limit: number): string[] {
  let text = output.replace(/\n+$/, '');
  if (text === '') return [];
  if (text.length > limit) text = `…${text.slice(text.length - limit)}`;
  return text.split('\n').map((l) => `    | ${terminalSafe(l, 'block')}`);
}

/** `1.5 MiB`: sizes for people. */
function bytes(v: unknown): string {
  if (typeof v !== 'number' || !Number.isFinite(v)) return str(v);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let n = v;
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i += 1;
  }
  return `${i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
}

/** `processes 1024 (cgroup v1)`, `memory 4 GiB (rlimit, per process)`, `/tmp 1 GiB (tmpfs)`. */
function limitText(limit: unknown): string {
  const l = (limit ?? {}) as Record<string, unknown>;
  const value = l.unit === 'bytes' ? bytes(l.value) : str(l.value);
  const by = raw(l.enforced_by).replace('_', ' ');
  const scope = l.scope === 'process' ? ', per process' : l.scope === 'user' ? ', per user' : '';
  return `${str(l.name)} ${value} (${by === 'none' ? 'NOT enforced' : terminalSafe(by)}${scope})`;
}

/** `1,234`: token counts for people. */
const count = (v: unknown): string => (typeof v === 'number' && Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : str(v));

/** `1,200 in + 900 cache read + 200 cache write, 56 out (12 reasoning)`: the five counters, zeros left out. */
function tokensText(usage: unknown): string {
  const u = (usage ?? {}) as Record<string, unknown>;
  const extra = [
    typeof u.cache_read_tokens === 'number' && u.cache_read_tokens > 0 ? ` + ${count(u.cache_read_tokens)} cache read` : '',
    typeof u.cache_write_tokens === 'number' && u.cache_write_tokens > 0 ? ` + ${count(u.cache_write_tokens)} cache write` : '',
  ].join('');
  const reasoning = typeof u.reasoning_tokens === 'number' && u.reasoning_tokens > 0 ? ` (${count(u.reasoning_tokens)} reasoning)` : '';
  return `${count(u.input_tokens)} in${extra}, ${count(u.output_tokens)} out${reasoning}`;
}

/** `$0.0123`, or a plain statement when the price book had no price (never a made-up $0). */
function usdText(v: unknown): string {
  if (typeof v !== 'number' || !Number.isFinite(v)) return 'cost unknown';
  return `$${v < 0.01 ? v.toFixed(4) : v.toFixed(2)}`;
}

/** A loop's usage: its model calls, tokens and cost, and how many calls reported no usage. */
function loopUsage(usage: unknown): string {
  const u = (usage ?? {}) as Record<string, unknown>;
  const calls = typeof u.calls === 'number' ? u.calls : 0;
  const without = typeof u.calls_without_usage === 'number' && u.calls_without_usage > 0 ? ` (${u.calls_without_usage} without usage)` : '';
  return `${count(calls)} model call${calls === 1 ? '' : 's'}${without}, ${tokensText(u)}, ${usdText(u.usd)}`;
}

/** A stateful renderer: feed it events in order, get the lines to print for each. */
export function createRenderer(options: RenderOptions): (event: WireEvent) => string[] {
  const style = options.style ?? ((_k, t) => t);
  const clip = options.verbose ? CLIP_VERBOSE : CLIP;
  let start: number | undefined;
  let lastRun: string | undefined;
  const commands = new Map<string, string>();
  const seenRuns = new Set<string>();
  /** Indentation by event id: a model turn's tool calls, and their results, are folded under it. */
  const indent = new Map<string, string>();
  /** Runs with a gate round begun and not yet decided. */
  const openGate = new Set<string>();

  return (event) => {
    const t = Date.parse(event.ts);
    if (start === undefined && Number.isFinite(t)) start = t;
    const secs = start === undefined || !Number.isFinite(t) ? 0 : (t - start) / 1000;
    const stamp = style('dim', `[${secs.toFixed(1).padStart(7)}s]`);
    const out: string[] = [];
    const eAny = event as { id?: unknown; parent_id?: unknown };
    const parent = typeof eAny.parent_id === 'string' ? eAny.parent_id : undefined;
    // A judge's or reviewer's model call names no parent, but belongs to the gate round it runs in.
    const inGate = parent === undefined && event.type === 'model.call' && openGate.has(event.run_id);
    const pad = parent !== undefined ? (indent.get(parent) ?? '') : inGate ? '    ' : '';
    if (pad !== '' && typeof eAny.id === 'string') indent.set(eAny.id, pad);
    const line = (text: string): void => {
      out.push(`${stamp} ${pad}${text}`);
    };
    if (event.run_id !== lastRun && seenRuns.size > 0 && !seenRuns.has(event.run_id)) out.push('');
    lastRun = event.run_id;
    seenRuns.add(event.run_id);
    const e = event as Record<string, unknown>;
    switch (event.type) {
      case 'task.loaded': {
        const task = e.task as { name?: string; goal?: string } | undefined;
        line(style('bold', `task ${str(task?.name)} (${str(e.mode)})`) + style('dim', `  run ${str(event.run_id)}`));
        if (options.verbose && task?.goal) line(`goal: ${str(task.goal)}`);
        break;
      }
      case 'diagnostic':
        line(`${e.severity === 'error' ? style('fail', 'error') : style('warn', str(e.severity))} ${str(e.code)} ${str(e.path)}: ${str(e.message)}`);
        break;
      case 'sandbox.ready': {
        const enforced = e.enforced === true;
        line(`sandbox ${str(e.backend)}${enforced ? '' : style('warn', ' (UNENFORCED)')} ${style('dim', str(e.workspace))}`);
        if (Array.isArray(e.limits) && e.limits.length > 0) line(`limits ${e.limits.map(limitText).join(' · ')}`);
        break;
      }
      case 'sandbox.usage': {
        if (!options.verbose) break;
        const note = e.complete === false ? style('warn', ' (at least: the walk stopped early)') : '';
        line(style('dim', `disk ${str(event.stage)}: workspace ${bytes(e.workspace_bytes)}, home ${bytes(e.home_bytes)}, tmp ${bytes(e.tmp_bytes)}, ${str(e.files)} entries`) + note);
        break;
      }
      case 'setup.started':
        if (typeof e.id === 'string') commands.set(e.id, raw(e.command));
        line(`setup $ ${commandText(raw(e.command), options.verbose)}`);
        break;
      case 'setup.completed': {
        const failed = e.exit_code !== 0;
        line(`setup exit ${str(e.exit_code)}${failed ? style('fail', ' FAILED') : ''}`);
        if (failed || options.verbose) out.push(...outputLines(raw(e.output), clip));
        break;
      }
      case 'setup.failed':
        line(style('fail', `setup failed: ${str(e.detail)}`));
        break;
      case 'agent.started':
        line(`agent ${str(e.agent)}${e.model ? ` (${str(e.model)})` : ''}`);
        break;
      case 'agent.turn': {
        if (typeof e.id === 'string') indent.set(e.id, '    ');
        const secsTaken = typeof e.duration_ms === 'number' ? `, ${(e.duration_ms / 1000).toFixed(1)}s` : '';
        const retried = typeof e.attempts === 'number' && e.attempts > 1 ? `, ${e.attempts} attempts` : '';
        line(style('bold', `turn ${str(e.turn)}`) + ` ${str(e.model)}: ${tokensText(e.usage)}, ${usdText(e.usd)}${style('dim', `${secsTaken}${retried}`)}${e.stop === 'refusal' ? style('fail', ' REFUSED') : e.stop === 'max_tokens' ? style('warn', ' cut at max tokens') : ''}`);
        for (const b of Array.isArray(e.blocks) ? (e.blocks as Array<Record<string, unknown>>) : []) {
          if (b.type !== 'text' || raw(b.text).trim() === '') continue;
          const text = raw(b.text).trim();
          const shown = options.verbose || text.length <= 200 ? text : `${text.slice(0, 199)}…`;
          for (const l of shown.split('\n')) line(`    ${style('dim', terminalSafe(l, 'block'))}`);
        }
        break;
      }
      case 'agent.retry':
        line(style('warn', `retry turn ${str(e.turn)} after attempt ${str(e.attempt)}`) + `: ${e.status === null ? 'connection failed' : `HTTP ${str(e.status)}`}, waiting ${(Number(e.wait_ms) / 1000).toFixed(1)}s` + style('dim', ` (${str(e.error)})`));
        break;
      case 'tool.call':
        if (e.tool === 'bash') line(`$ ${commandText(raw(e.command), options.verbose)}`);
        else if (e.tool === 'read_docs') {
          if (options.verbose || pad !== '') line(style('dim', `read_docs ${str(e.url)}${e.page !== undefined ? ` page ${str(e.page)}` : ''}`));
        } else line(`${str(e.tool)} ${style('dim', terminalSafe(JSON.stringify(e.input ?? {}).slice(0, 200)))}`);
        break;
      case 'tool.error':
        line(`${style('fail', 'tool error')}: ${str(e.error)}`);
        break;
      case 'tool.result': {
        const failed = e.exit_code !== 0;
        const secsTaken = typeof e.duration_ms === 'number' ? ` (${(e.duration_ms / 1000).toFixed(1)}s)` : '';
        line(`${failed ? style('fail', `exit ${str(e.exit_code)}`) : `exit ${str(e.exit_code)}`}${e.timed_out === true ? style('fail', ' TIMED OUT') : ''}${style('dim', secsTaken)}`);
        if (failed || options.verbose) out.push(...outputLines(raw(e.output), clip).map((l) => `${pad}${l}`));
        break;
      }
      case 'docs.read': {
        // A page in parts is never cut: `truncated` says the agent was given one part of it.
        const parts = typeof e.pages === 'number' && e.pages > 1 ? `page ${str(e.page)} of ${str(e.pages)}, ` : '';
        const note = e.truncated === true && parts === '' ? style('warn', ` TRUNCATED from ${str(e.original_chars)} to ${str(e.chars)} chars`) : ` (${parts}${str(e.chars)} chars${e.from === 'map' ? ', mapped' : e.from === 'cache' ? ', cached' : ''}${e.robots_ignored === true ? ', robots.txt ignored' : ''})`;
        const moved = typeof e.resolved_to === 'string' ? ` → ${str(e.resolved_to)}` : '';
        line(`read ${str(e.url)}${moved}${note}`);
        break;
      }
      case 'docs.error':
        line(`${style('fail', 'read error')} ${str(e.url)}: ${str(e.error)}`);
        break;
      case 'docs.changed':
        line(`${style('warn', 'docs changed')} ${str(e.url)} since the cached copy${typeof e.previous_fetched_at === 'string' ? ` of ${str(e.previous_fetched_at)}` : ''}`);
        break;
      case 'docs.affordances': {
        const probes = Array.isArray(e.probes) ? (e.probes as Array<Record<string, unknown>>) : [];
        const found = probes.map((p) => `${str(p.kind)} ${p.present === true ? `yes (${str(p.bytes)} bytes)` : 'no'}`).join(', ');
        line(`affordances${e.affordances === 'none' ? ' (withheld from the agent)' : ''}: ${found}`);
        break;
      }
      case 'egress.blocked': {
        const target = `${str(e.host)}${e.port !== undefined ? `:${str(e.port)}` : ''}`;
        if (/docs/.test(str(e.reason))) line(`${style('warn', 'shell blocked')} from docs host ${target} (use read_docs)`);
        else line(`${style('warn', 'BLOCKED')} ${target} (${str(e.reason)})`);
        break;
      }
      case 'sandbox.denied':
        line(`${style('warn', 'DENIED')} ${str(e.operation)} ${str(e.path)} (${e.reason === 'hidden' ? 'hidden by the sandbox' : 'read-only outside the workspace'})`);
        break;
      case 'sandbox.limit_hit': {
        // What a command ran into, and how that was seen: a counter that rose, or the line that said so.
        const seen = e.detected_from === 'counter' ? `${str(e.counter)} rose by ${str(e.count ?? 1)}` : str(e.line ?? e.detected_from);
        line(`${style('warn', 'LIMIT')} ${str(e.limit)} ${e.unit === 'bytes' ? bytes(e.value) : str(e.value)} (${str(e.enforced_by)}): ${seen}`);
        break;
      }
      case 'egress.error':
        line(`${style('warn', 'egress error')} ${str(e.host)}: ${str(e.error ?? e.reason)}`);
        break;
      case 'egress.allowed':
        if (options.verbose) line(style('dim', `egress ${str(e.host)}:${str(e.port)} allowed (${str(e.reason)})`));
        break;
      case 'agent.completed':
        line(`agent stopped: ${str(e.stop_reason)}${e.detail ? ` — ${str(e.detail)}` : ''}`);
        if (typeof e.turns === 'number') {
          line(`model total: ${e.turns} turn${e.turns === 1 ? '' : 's'}${e.usage ? `, ${tokensText(e.usage)}` : ''}, ${usdText(e.usd)}${e.usd === null ? ' (a model not in the price book)' : ''}`);
        }
        if (typeof e.final_text === 'string' && e.final_text.trim() !== '') {
          const text = e.final_text.trim();
          const shown = options.verbose || text.length <= 600 ? text : `${text.slice(0, 599)}…`;
          line('final answer:');
          for (const l of shown.split('\n')) line(`    ${terminalSafe(l, 'block')}`);
        }
        if (Array.isArray(e.left_running) && e.left_running.length > 0) {
          line(style('warn', `killed at the end of the stage, still running: ${e.left_running.map(str).join(' · ')}`));
        }
        break;
      case 'check.started':
        line(`check (QS_PORT=${str(e.port)})`);
        break;
      case 'check.completed': {
        const passed = e.passed === true;
        line(`check ${passed ? style('pass', 'passed') : style('fail', `failed, exit ${str(e.exit_code)}`)}${e.timed_out === true ? style('fail', ' TIMED OUT') : ''}`);
        if (!passed || options.verbose) out.push(...outputLines(raw(e.output), clip));
        if (!passed && e.reason) line(`reason: ${str(e.reason)}`);
        break;
      }
      case 'run.completed': {
        const lab = str(e.label);
        const coloured = lab === 'PASS' ? style('pass', lab) : lab === 'FAIL' ? style('fail', lab) : style('warn', lab);
        line(style('bold', `${coloured} ${str(e.task)}: ${str(e.classification)}`) + (e.enforced === false ? style('warn', ' (UNENFORCED)') : ''));
        // Only a docs gap points at the docs: an inconclusive run's last page says nothing about them (as in qs diff and the report).
        if (e.classification === 'docs_gap' && typeof e.suspect_page === 'string') line(`where to look first: ${str(e.suspect_page)}`);
        if (typeof e.docs_bypass_attempts === 'number' && e.docs_bypass_attempts > 0) line(`docs bypass attempts: ${e.docs_bypass_attempts}`);
        if (typeof e.workspace_kept === 'string') line(style('dim', `workspace kept: ${str(e.workspace_kept)}`));
        break;
      }
      case 'run.failed':
        line(style('fail', `RUN FAILED in ${str(e.failed_stage)}: ${str(e.error)}`));
        break;
      case 'run.interrupted':
        line(style('warn', `INTERRUPTED (${str(e.signal)}) during ${str(e.phase)}`));
        break;
      // A loop's stream: the spec, its context, each gate round with its checks, reviews and verdict
      // folded under it, the model CLIs called and what they cost, and how the loop ended.
      case 'loop.started':
        line(style('bold', `loop ${str(e.spec)}${e.resumed === true ? ` (resumed, was ${str(e.status)}, ${str(e.wall_clock_used_sec)}s used)` : ''}`) + style('dim', `  workspace ${str(e.workspace)}`));
        break;
      case 'loop.context': {
        const status = str(e.status);
        const note = status === 'read' || status === 'ran' ? status : style('warn', status.replace(/_/g, ' '));
        line(`context ${str(e.index)} ${str(e.source)}: ${note}${typeof e.exit_code === 'number' ? ` (exit ${e.exit_code})` : ''}`);
        break;
      }
      case 'iteration.started':
        line(style('bold', `iteration ${str(e.iteration)} of ${str(e.max_iterations)}`));
        break;
      case 'consent.asked': {
        if (typeof e.id === 'string') indent.set(e.id, '    ');
        const list = (v: unknown): string => (Array.isArray(v) ? v.map(str).join(', ') : '');
        line(`consent asked for ${str(e.member)}: sends ${list(e.sends) || 'nothing'}${Array.isArray(e.redact) && e.redact.length > 0 ? `; redacts ${list(e.redact)}` : ''}`);
        for (const w of Array.isArray(e.warnings) ? e.warnings : []) line(`    ${style('warn', 'warning')}: ${str(w)}`);
        break;
      }
      case 'consent.answered':
        line(`consent ${str(e.member)}: ${e.granted === true ? style('pass', 'granted') : style('fail', 'REFUSED')} (${str(e.how).replace(/_/g, ' ')})`);
        break;
      case 'redaction.applied':
        line(`${style('warn', 'redacted')} ${Array.isArray(e.sources) ? e.sources.map(str).join(', ') : ''} in ${str(e.where)}`);
        break;
      case 'redaction.blind_spot':
        line(`${style('warn', 'redaction blind spot')} ${str(e.source)}: ${str(e.reason)} (a leak of it would go undetected)`);
        break;
      case 'model.call':
        if (typeof e.id === 'string') indent.set(e.id, `${pad}    `);
        line(`model ${str(e.member)} (${str(e.role)}) ${str(e.purpose)}: ${str(e.argv0)}, ${count(e.prompt_chars)} prompt chars${typeof e.attempt === 'number' && e.attempt > 1 ? `, attempt ${e.attempt}` : ''}`);
        break;
      case 'model.result': {
        const secsTaken = typeof e.duration_ms === 'number' ? `, ${(e.duration_ms / 1000).toFixed(1)}s` : '';
        const used = e.usage === null || e.usage === undefined ? 'no usage reported' : tokensText(e.usage);
        const retried = typeof e.attempts === 'number' && e.attempts > 1 ? `, ${e.attempts} attempts` : '';
        const state = e.ok === true ? `exit ${str(e.exit_code)}` : style('fail', `FAILED exit ${str(e.exit_code)}`);
        line(`${state}${e.timed_out === true ? style('fail', ' TIMED OUT') : ''}: ${count(e.output_chars)} chars out, ${used}, ${usdText(e.usd)}${style('dim', `${secsTaken}${retried}`)}`);
        if (typeof e.error === 'string' && e.error !== '') line(`${style('fail', 'error')}: ${str(e.error)}`);
        break;
      }
      case 'artifact.written':
        line(`wrote ${str(e.path)} (${str(e.phase)}${typeof e.iteration === 'number' && e.iteration > 0 ? `, iteration ${e.iteration}` : ''})`);
        break;
      case 'gate.started':
        openGate.add(event.run_id);
        if (typeof e.id === 'string') indent.set(e.id, '    ');
        line(style('bold', `gate ${str(e.gate)} round ${str(e.round)}`) + ` on ${str(e.artifact)}${typeof e.revision === 'number' && e.revision > 0 ? ` (revision ${e.revision})` : ''}`);
        break;
      case 'gate.check': {
        const argv = Array.isArray(e.argv) && (options.verbose || e.passed !== true) ? style('dim', `  ${e.argv.map(str).join(' ')}`) : '';
        line(`check ${str(e.criterion)} (${str(e.kind)}) ${e.passed === true ? style('pass', 'passed') : style('fail', `FAILED${typeof e.exit_code === 'number' ? `, exit ${e.exit_code}` : ''}`)}${argv}`);
        break;
      }
      case 'review.completed':
        line(`review by ${str(e.member)}: ${count(e.chars)} chars`);
        break;
      case 'gate.verdict': {
        openGate.delete(event.run_id);
        const pass = e.verdict === 'pass';
        line(`${pass ? style('pass', 'PASS') : e.verdict === 'blocked' ? style('fail', 'BLOCKED') : style('warn', 'REVISE')} ${str(e.gate)} round ${str(e.round)} (${str(e.source)})${typeof e.review === 'string' ? style('dim', `  review ${str(e.review)}`) : ''}`);
        for (const f of Array.isArray(e.failures) ? e.failures : []) line(`  - ${str(f)}`);
        for (const w of Array.isArray(e.warnings) ? e.warnings : []) line(`  ${style('warn', 'warning')}: ${str(w)}`);
        break;
      }
      case 'gate.revision':
        line(`revised ${str(e.artifact)} for ${str(e.gate)} (revision ${str(e.revision)})`);
        break;
      case 'no_progress.detected':
        line(`${style('warn', 'NO PROGRESS')} ${str(e.gate)} failed the same way ${str(e.count)} times (threshold ${str(e.threshold)}): ${str(e.action)}`);
        for (const f of Array.isArray(e.failures) ? e.failures : []) line(`  - ${str(f)}`);
        break;
      case 'loop.completed':
        line(style('bold', `${style('pass', 'LOOP PASSED')} at iteration ${str(e.iteration)}: ${str(e.final_delivery)}`) + (e.already_passed === true ? ' (already passed)' : ''));
        line(`loop total: ${loopUsage(e.usage)}, ${str(e.wall_clock_used_sec)}s`);
        break;
      case 'loop.failed':
        line(style('bold', `${style('fail', `LOOP ${str(e.status).toUpperCase()}`)} at iteration ${str(e.iteration)}: ${str(e.failure)} (exit ${str(e.exit_code)})`));
        line(`loop total: ${loopUsage(e.usage)}, ${str(e.wall_clock_used_sec)}s`);
        break;
      default:
        if (options.verbose) line(style('dim', str(event.type)));
    }
    return out;
  };
}
