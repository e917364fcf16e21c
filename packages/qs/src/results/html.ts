// `qs report`: the results fold's document (and, where the streams are at hand, each attempt's
// transcript) as one self-contained HTML page. Nothing on it loads anything: no CDN, no web font, no
// image; its own CSS and a small script are inline and a Content-Security-Policy forbids the rest, so
// a page opened from an artifact store makes no request even if something slipped past the escaping.
// JavaScript only adds buttons: every fact is in the markup and every fold is a native <details>.
import { createHash } from 'node:crypto';
import type { WireEvent } from '@quickloop/events';
import { gapPages, type Results } from './fold.js';
import { wilson } from './stats.js';
import { codePoint, DISGUISE } from './disguise.js';

/** How much of one command's or check's output a transcript shows (the end, where errors are). */
const OUTPUT_CHARS = 6000;
const GAP_OUTPUT_CHARS = 2000;

// The document may be another tool's results.json or a hand-edited one: every field is read as unknown.
type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const text = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
const counts = (v: unknown): Array<[string, number]> => Object.entries(obj(v)).flatMap(([k, n]) => (num(n) === null ? [] : [[k, n as number] as [string, number]]));

// The characters that could disguise text, each shown by esc as a mark (and so never put in an attribute).
const ESCAPED = new RegExp(`[&<>"']|${DISGUISE}`, 'gu');
const DISGUISED = new RegExp(DISGUISE, 'u');

/**
 * Text from a stream as HTML: the five specials escaped, and the characters that could disguise
 * text (C0 and C1 controls, bidi overrides, zero-width and line separators) shown as what they are.
 */
export function esc(v: unknown): string {
  return text(v).replace(ESCAPED, (c) => {
    switch (c) {
      case '&':
        return '&amp;';
      case '<':
        return '&lt;';
      case '>':
        return '&gt;';
      case '"':
        return '&quot;';
      case "'":
        return '&#39;';
      default:
        return `<span class="ctl">${codePoint(c)}</span>`;
    }
  });
}

/** A link only to an http(s) page, so a `javascript:` URL from a stream is shown, never followed. */
function link(url: unknown): string {
  const u = text(url);
  // One that holds a character esc shows as a mark is shown too: the mark is markup, never an attribute's value.
  if (!/^https?:\/\/[^\s]+$/i.test(u) || DISGUISED.test(u)) return `<code>${esc(u)}</code>`;
  return `<a href="${esc(u)}" rel="noreferrer noopener">${esc(u)}</a>`;
}

const pct = (x: number): string => `${Math.round(x * 100)}%`;
const usd = (v: unknown): string => {
  const n = num(v);
  return n === null ? 'unknown' : `$${n < 0.01 && n !== 0 ? n.toFixed(4) : n.toFixed(2)}`;
};
const int = (v: unknown): string => {
  const n = num(v);
  return n === null ? '—' : Math.round(n).toLocaleString('en-US');
};
const clipEnd = (s: string, limit: number): string => (s.length > limit ? `…${s.slice(s.length - limit)}` : s);
/** `2 runs`; a word whose plural is not `+s` gives it (`retry`, `retries`). */
const plural = (n: number, word: string, many = `${word}s`): string => `${n} ${n === 1 ? word : many}`;
const labelClass = (label: string): string => (label === 'PASS' ? 'pass' : label === 'FAIL' ? 'fail' : label === 'SKIP' ? 'skip' : 'warn');
const badge = (label: unknown): string => `<span class="badge ${labelClass(text(label))}">${esc(label)}</span>`;
/** A run's label; quickstarted's runs have none, and its labels are these, from the classification. */
const labelOf = (r: Obj): unknown => r.label ?? (typeof r.classification !== 'string' ? '' : r.classification === 'passed' ? 'PASS' : r.classification === 'docs_gap' ? 'FAIL' : r.classification === 'skipped' ? 'SKIP' : 'INCONCLUSIVE');
const pre = (s: string, cls = ''): string => (s === '' ? '' : `<pre${cls ? ` class="${cls}"` : ''}>${esc(s)}</pre>`);

interface Run {
  task: string;
  attempt: number;
  r: Obj;
  index: string;
}

function tokensLine(t: Obj, reasoning: unknown): string {
  const parts = [`${int(t.input ?? t.input_tokens)} in`];
  if ((num(t.cache_read ?? t.cache_read_tokens) ?? 0) > 0) parts.push(`${int(t.cache_read ?? t.cache_read_tokens)} cache read`);
  if ((num(t.cache_write ?? t.cache_write_tokens) ?? 0) > 0) parts.push(`${int(t.cache_write ?? t.cache_write_tokens)} cache write`);
  parts.push(`${int(t.output ?? t.output_tokens)} out`);
  if ((num(reasoning) ?? 0) > 0) parts.push(`${int(reasoning)} reasoning`);
  return parts.join(' · ');
}

/** The interval as a bar: the band is the 95% Wilson interval, the mark the observed rate. */
function rateBar(rate: number, low: number, high: number): string {
  const at = (x: number): string => `${(Math.min(1, Math.max(0, x)) * 100).toFixed(1)}%`;
  return `<div class="bar" aria-hidden="true"><span class="ci" style="left:${at(low)};width:${at(high - low)}"></span><span class="mark" style="left:${at(rate)}"></span></div>`;
}

function ratesSection(tasks: Obj[]): string {
  const rows = tasks.map((t, i) => {
    const attempts = num(t.attempts) ?? 0;
    const passes = num(t.passes) ?? 0;
    const evidential = num(t.evidential_runs) ?? 0;
    const discarded = counts(t.discarded).map(([k, n]) => `${esc(k)} ${n}`).join(', ') || '—';
    let rate: string;
    if (evidential > 0) {
      const ci = wilson(passes, evidential);
      const p = passes / evidential;
      rate = `<strong>${pct(p)}</strong> <span class="muted">(${passes}/${evidential})</span>${rateBar(p, ci.low, ci.high)}<span class="muted">95% CI ${pct(ci.low)}–${pct(ci.high)}</span>`;
    } else rate = `<span class="warn">${(num(t.skipped) ?? 0) === attempts && attempts > 0 ? 'skipped' : 'no evidence'}</span>`;
    const suspects = counts(gapPages(t));
    return `<tr><td data-label="Task"><a href="#task-${i}">${esc(t.task)}</a>${t.flaky === true ? ' <span class="badge warn">FLAKY</span>' : ''}</td><td data-label="Pass rate">${rate}</td><td data-label="Evidential">${evidential} of ${plural(attempts, 'run')}</td><td data-label="Discarded">${discarded}</td><td data-label="Look first at">${suspects.length === 0 ? '—' : suspects.map(([u, n]) => `${link(u)} <span class="muted">×${n}</span>`).join('<br>')}</td><td data-label="Cost">${usd(t.estimated_cost_usd)}</td></tr>`;
  });
  return `<section id="rates"><h2>Pass rates</h2><p class="muted">Evidential runs only (passed or docs gap); the band is the 95% Wilson interval.</p><table class="cards"><thead><tr><th>Task</th><th>Pass rate</th><th>Evidential</th><th>Discarded</th><th>Look first at</th><th>Cost</th></tr></thead><tbody>${rows.join('')}</tbody></table></section>`;
}

function gapsSection(runs: Run[]): string {
  const gaps = runs.filter((x) => x.r.classification === 'docs_gap');
  if (gaps.length === 0) return `<section id="gaps"><h2>Docs gaps</h2><p>None: no run's success check failed.</p></section>`;
  const items = gaps.map(({ task, attempt, r, index }) => {
    const check = obj(r.success_check);
    const outcome = obj(r.outcome);
    const reason = text(outcome.check_reason) || text(outcome.detail);
    return `<article class="gap"><h3>${esc(task)} <span class="muted">attempt ${attempt}</span></h3><dl><dt>Look first at</dt><dd>${r.suspect_page ? link(r.suspect_page) : '<span class="muted">no page was read</span>'}</dd><dt>Check</dt><dd>exit ${esc(check.exit_code ?? 'none')}${reason ? ` — ${esc(reason)}` : ''}</dd><dt>Agent stopped</dt><dd>${esc(r.stop_reason ?? 'unknown')}</dd></dl>${check.output ? `<p class="muted">Check output (the end):</p>${pre(clipEnd(text(check.output), GAP_OUTPUT_CHARS), 'out')}` : '<p class="muted">The check printed nothing.</p>'}<p><a href="#${index}">Transcript</a></p></article>`;
  });
  return `<section id="gaps"><h2>Docs gaps <span class="count">${gaps.length}</span></h2>${items.join('')}</section>`;
}

function discardedSection(runs: Run[]): string {
  const other = runs.filter((x) => x.r.classification !== 'passed' && x.r.classification !== 'docs_gap');
  if (other.length === 0) return '';
  const rows = other.map(({ task, attempt, r, index }) => `<tr><td data-label="Task">${esc(task)}</td><td data-label="Attempt"><a href="#${index}">${attempt}</a></td><td data-label="Outcome">${badge(labelOf(r))} ${esc(r.classification)}</td><td data-label="Detail">${esc(obj(r.outcome).detail)}</td></tr>`);
  return `<section id="discarded"><h2>Runs without a verdict <span class="count">${other.length}</span></h2><p class="muted">Inconclusive, interrupted and skipped runs say nothing about the docs and are not in the pass rates.</p><table class="cards"><thead><tr><th>Task</th><th>Attempt</th><th>Outcome</th><th>Detail</th></tr></thead><tbody>${rows.join('')}</tbody></table></section>`;
}

/** Past this many, the page counts the rest (results.json lists each). */
const NOT_RUN_SHOWN = 100;

/** Attempts of the plan no folder holds: the summary and JUnit list them, so the page does too. */
function notRunSection(doc: Obj): string {
  const missing = arr(doc.not_run).map(obj);
  if (missing.length === 0) return '';
  const rows = missing.slice(0, NOT_RUN_SHOWN).map((n) => `<tr><td data-label="Task">${esc(n.task)}</td><td data-label="Attempt">${esc(n.attempt)}</td></tr>`);
  const more = missing.length > NOT_RUN_SHOWN ? `<p class="muted">… and ${missing.length - NOT_RUN_SHOWN} more (results.json lists each of them).</p>` : '';
  return `<section id="not-run"><h2>Not run <span class="count">${missing.length}</span></h2><p class="muted">Attempts of the plan that no folder holds (a shard that did not finish, or was not merged): no evidence either way.</p><table class="cards"><thead><tr><th>Task</th><th>Attempt</th></tr></thead><tbody>${rows.join('')}</tbody></table>${more}</section>`;
}

function egressSection(runs: Run[]): string {
  const hosts = new Map<string, { allowed: number; blocked: number; failed: number; runs: Set<string> }>();
  let unnamedAllowed = 0;
  let bypass = 0;
  const add = (host: string, k: 'allowed' | 'blocked' | 'failed', n: number, run: string): void => {
    const h = hosts.get(host) ?? { allowed: 0, blocked: 0, failed: 0, runs: new Set<string>() };
    h[k] += n;
    h.runs.add(run);
    hosts.set(host, h);
  };
  for (const { r, index } of runs) {
    const e = obj(r.egress);
    const allowed = counts(e.allowed_hosts);
    for (const [h, n] of allowed) add(h, 'allowed', n, index);
    // An older results.json counts allowed connections without naming their hosts.
    if (allowed.length === 0) unnamedAllowed += num(e.allowed) ?? 0;
    for (const [h, n] of counts(e.blocked_hosts)) add(h, 'blocked', n, index);
    for (const [h, n] of counts(e.error_hosts)) add(h, 'failed', n, index);
    bypass += num(r.docs_bypass_attempts) ?? 0;
  }
  const order = [...hosts].sort(([a, x], [b, y]) => y.blocked - x.blocked || y.failed - x.failed || y.allowed - x.allowed || (a < b ? -1 : a > b ? 1 : 0));
  const rows = order.map(([h, c]) => `<tr><td data-label="Host"><code>${esc(h)}</code></td><td data-label="Allowed">${c.allowed}</td><td data-label="Blocked">${c.blocked > 0 ? `<span class="warn">${c.blocked}</span>` : 0}</td><td data-label="Failed">${c.failed > 0 ? `<span class="warn">${c.failed}</span>` : 0}</td><td data-label="Runs">${c.runs.size}</td></tr>`);
  if (unnamedAllowed > 0) rows.push(`<tr><td data-label="Host"><span class="muted">(hosts not recorded)</span></td><td data-label="Allowed">${unnamedAllowed}</td><td data-label="Blocked">0</td><td data-label="Failed">0</td><td data-label="Runs">—</td></tr>`);
  // quickstarted's runs keep no egress counts: none recorded is not the same as none made.
  const recorded = runs.some(({ r }) => typeof r.egress === 'object' && r.egress !== null);
  const body = rows.length === 0 ? (recorded ? '<p>No connection left any sandbox.</p>' : '<p>Not recorded: no run in this document counts its egress.</p>') : `<table class="cards"><thead><tr><th>Host</th><th>Allowed</th><th>Blocked</th><th>Failed</th><th>Runs</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
  const note = bypass > 0 ? `<p class="warn">${plural(bypass, 'shell reach', 'shell reaches')} for a docs host (blocked: docs are read through read_docs).</p>` : '';
  return `<section id="egress"><h2>Egress</h2><p class="muted">What the egress proxy decided for connections from the sandboxed shell, by host, over every run.</p>${body}${note}</section>`;
}

function denialsSection(runs: Run[]): string {
  const items = runs.flatMap(({ task, attempt, r, index }) => {
    const s = obj(r.sandbox);
    const n = num(s.denials) ?? 0;
    const paths = counts(s.denied_paths);
    const limits = counts(s.limit_hits);
    if (n === 0 && limits.length === 0) return [];
    const parts: string[] = [];
    if (n > 0) parts.push(paths.length === 0 ? `${plural(n, 'denial')} (paths not recorded)` : paths.map(([p, k]) => `<code>${esc(p)}</code>${k > 1 ? ` ×${k}` : ''}`).join(', '));
    // A limit a command ran into makes the run a harness error: the sandbox's bound, not the docs.
    if (limits.length > 0) parts.push(`<span class="warn">limit hit</span> ${limits.map(([l, k]) => `<code>${esc(l)}</code>${k > 1 ? ` ×${k}` : ''}`).join(', ')}`);
    return [`<li><a href="#${index}">${esc(task)} attempt ${attempt}</a>: ${parts.join('; ')}</li>`];
  });
  const recorded = runs.some(({ r }) => typeof r.sandbox === 'object' && r.sandbox !== null);
  const none = recorded ? '<p>None: no command was refused a path or ran into a limit.</p>' : '<p>Not recorded: no run in this document counts its sandbox denials.</p>';
  return `<section id="denials"><h2>Sandbox denials and limits</h2>${items.length === 0 ? none : `<ul>${items.join('')}</ul>`}</section>`;
}

function runsSection(runs: Run[], results: Obj): string {
  const rows = runs.map(({ task, attempt, r, index }) => `<tr><td data-label="Task">${esc(task)}</td><td data-label="Attempt"><a href="#${index}">${attempt}</a></td><td data-label="Verdict">${badge(labelOf(r))} ${esc(r.classification)}</td><td data-label="Agent">${esc(r.agent ?? '—')}${r.model_reported ? ` <span class="muted">${esc(r.model_reported)}</span>` : ''}</td><td data-label="Turns">${int(r.turns)}</td><td data-label="Tokens">${tokensLine(obj(r.tokens), r.reasoning_tokens)}</td><td data-label="Retries">${(num(r.retries) ?? 0) > 0 ? `<span class="warn">${int(r.retries)}</span>` : int(r.retries)}</td><td data-label="Cost">${usd(r.estimated_cost_usd)}</td><td data-label="Time">${num(r.duration_seconds) === null ? '—' : `${(r.duration_seconds as number).toFixed(1)}s`}</td></tr>`);
  const totals = obj(results.totals);
  // Unknown (—) when no run counts its retries, as in quickstarted's document.
  const retries = runs.some((x) => num(x.r.retries) !== null) ? runs.reduce((s, x) => s + (num(x.r.retries) ?? 0), 0) : '—';
  const unpriced = arr(totals.unpriced_models).map(text);
  rows.push(`<tr class="total"><td data-label="Task"><strong>Total</strong></td><td data-label="Runs">${runs.length}</td><td></td><td></td><td data-label="Turns">${int(runs.reduce((s, x) => s + (num(x.r.turns) ?? 0), 0))}</td><td data-label="Tokens">${tokensLine(obj(totals.tokens), runs.reduce((s, x) => s + (num(x.r.reasoning_tokens) ?? 0), 0))}</td><td data-label="Retries">${retries}</td><td data-label="Cost"><strong>${usd(totals.estimated_cost_usd)}</strong></td><td data-label="Time">${num(results.duration_seconds) === null ? '—' : `${(results.duration_seconds as number).toFixed(1)}s`}</td></tr>`);
  const note = unpriced.length > 0 ? `<p class="muted">No price for ${unpriced.map((m) => `<code>${esc(m)}</code>`).join(', ')}: the cost of their runs is unknown, never counted as $0.</p>` : '';
  return `<section id="runs"><h2>Runs, retries and cost</h2><table class="cards"><thead><tr><th>Task</th><th>Attempt</th><th>Verdict</th><th>Agent</th><th>Turns</th><th>Tokens</th><th>Retries</th><th>Cost</th><th>Time</th></tr></thead><tbody>${rows.join('')}</tbody></table>${note}</section>`;
}

interface Node {
  e: Obj & { type: string };
  children: Node[];
}

/** The stream as a tree: an event under the one its parent_id names (a turn's tool calls, a call's result). */
function tree(events: readonly WireEvent[]): Node[] {
  const byId = new Map<string, Node>();
  const roots: Node[] = [];
  for (const ev of events) {
    const n: Node = { e: ev as unknown as Obj & { type: string }, children: [] };
    const parent = typeof n.e.parent_id === 'string' ? byId.get(n.e.parent_id) : undefined;
    (parent ? parent.children : roots).push(n);
    if (typeof n.e.id === 'string' && !byId.has(n.e.id)) byId.set(n.e.id, n);
  }
  return roots;
}

const li = (cls: string, html: string): string => `<li class="${cls}">${html}</li>`;
const commandSummary = (command: string): string => {
  const lines = command.replace(/\n+$/, '').split('\n');
  return lines.length === 1 ? esc(lines[0]) : `${esc(lines[0])} <span class="muted">… ${plural(lines.length - 1, 'more line')}</span>`;
};

function exitText(result: Obj | undefined): string {
  if (!result) return '<span class="muted">no result</span>';
  const code = result.exit_code;
  const bad = code !== 0 || result.timed_out === true;
  return `<span class="${bad ? 'fail' : 'pass'}">exit ${esc(code)}${result.timed_out === true ? ' TIMED OUT' : ''}</span>${num(result.duration_ms) !== null ? ` <span class="muted">${((result.duration_ms as number) / 1000).toFixed(1)}s</span>` : ''}`;
}

/** A command with its output folded under it: a shell call, a setup step, or the check. */
function commandHtml(kind: string, command: string, result: Obj | undefined, rest: Node[], open: boolean): string {
  const output = result ? text(result.output) : '';
  const truncated = result?.truncated === true ? `<p class="muted">The stream kept ${int(output.length)} of ${int(result.original_chars)} characters.</p>` : '';
  const body = `${command.includes('\n') ? pre(command, 'cmd') : ''}${output === '' ? '<p class="muted">(no output)</p>' : pre(clipEnd(output, OUTPUT_CHARS), 'out')}${truncated}${rest.length > 0 ? `<ol class="steps">${rest.map(nodeHtml).join('')}</ol>` : ''}`;
  return `<details class="cmd"${open ? ' open' : ''}><summary>${kind}<code>$ ${commandSummary(command)}</code> → ${exitText(result)}</summary>${body}</details>`;
}

function nodeHtml(n: Node): string {
  const e = n.e;
  const kids = (): string => (n.children.length > 0 ? `<ol class="steps">${n.children.map(nodeHtml).join('')}</ol>` : '');
  switch (e.type) {
    case 'task.loaded': {
      const t = obj(e.task);
      return li('meta', `task <strong>${esc(t.name)}</strong> <span class="muted">(${esc(e.mode)})</span>${t.goal ? `<br><span class="muted">goal:</span> ${esc(t.goal)}` : ''}`);
    }
    case 'sandbox.ready':
      return li('meta', `sandbox ${esc(e.backend)}${e.enforced === true ? '' : ' <span class="warn">UNENFORCED</span>'}`);
    case 'sandbox.usage':
    case 'diagnostic':
      return '';
    case 'setup.started': {
      const result = n.children.find((c) => c.e.type === 'setup.completed');
      return li('step', commandHtml('setup ', text(e.command), result?.e, n.children.filter((c) => c !== result), result !== undefined && result.e.exit_code !== 0));
    }
    case 'setup.failed':
      return li('fail', `setup failed: ${esc(e.detail)}`);
    case 'agent.started':
      return li('meta', `agent ${esc(e.agent)}${e.model ? ` <span class="muted">(${esc(e.model)})</span>` : ''}`);
    case 'agent.turn': {
      const blocks = arr(e.blocks).map(obj);
      const said = blocks.filter((b) => b.type === 'text' && text(b.text).trim() !== '').map((b) => text(b.text).trim());
      const first = said[0] ?? '';
      const gist = first === '' ? '' : ` — <span class="muted">${esc(first.length > 90 ? `${first.slice(0, 89)}…` : first)}</span>`;
      const attempts = (num(e.attempts) ?? 1) > 1 ? `, <span class="warn">${int(e.attempts)} attempts</span>` : '';
      const stop = e.stop === 'refusal' ? ' <span class="fail">REFUSED</span>' : e.stop === 'max_tokens' ? ' <span class="warn">cut at max tokens</span>' : '';
      return li('turn', `<details class="turn"><summary><strong>turn ${esc(e.turn)}</strong> <span class="muted">${esc(e.model)} · ${tokensLine(obj(e.usage), obj(e.usage).reasoning_tokens)} · ${usd(e.usd)}${attempts}</span>${stop}${gist}</summary>${said.map((s) => `<div class="said">${esc(s)}</div>`).join('')}${kids()}</details>`);
    }
    case 'agent.retry':
      return li('warn', `retry of turn ${esc(e.turn)} after attempt ${esc(e.attempt)}: ${e.status === null ? 'connection failed' : `HTTP ${esc(e.status)}`} <span class="muted">${esc(e.error)}</span>`);
    case 'tool.call': {
      if (e.tool === 'bash') {
        const result = n.children.find((c) => c.e.type === 'tool.result');
        return li('step', commandHtml('', text(e.command), result?.e, n.children.filter((c) => c !== result), false));
      }
      if (e.tool === 'read_docs') return li('step', `read_docs ${link(e.url)}${e.page !== undefined ? ` page ${esc(e.page)}` : ''}${kids()}`);
      return li('step', `${esc(e.tool)} <code>${esc(JSON.stringify(e.input ?? {}).slice(0, 300))}</code>${kids()}`);
    }
    case 'tool.result':
      return li('step', `${exitText(e)}${pre(clipEnd(text(e.output), OUTPUT_CHARS), 'out')}`);
    case 'tool.error':
      return li('fail', `tool error: ${esc(e.error)}`);
    case 'replay.diverged':
      return li('warn', `diverged from the recording at turn ${esc(e.turn)} (${esc(e.field)}): recorded <code>${esc(e.recorded)}</code>, got <code>${esc(e.actual)}</code>`);
    case 'docs.read': {
      const parts = (num(e.pages) ?? 1) > 1 ? `page ${esc(e.page)} of ${esc(e.pages)}, ` : '';
      return li('docs', `read ${link(e.url)}${typeof e.resolved_to === 'string' ? ` → ${link(e.resolved_to)}` : ''} <span class="muted">(${parts}${int(e.chars)} chars${e.from === 'map' ? ', mapped' : e.from === 'cache' ? ', cached' : ''})</span>${e.truncated === true && parts === '' ? ` <span class="warn">TRUNCATED from ${int(e.original_chars)}</span>` : ''}`);
    }
    case 'docs.error':
      return li('fail', `read error ${link(e.url)}: ${esc(e.error)}`);
    case 'docs.changed':
      return li('warn', `docs changed since the cached copy: ${link(e.url)}`);
    case 'docs.affordances':
      return li('meta', `affordances ${esc(e.affordances)}: ${arr(e.probes).map((p) => `${esc(obj(p).kind)} ${obj(p).present === true ? 'yes' : 'no'}`).join(', ')}`);
    case 'egress.allowed':
      return li('egress', `egress <code>${esc(e.host)}:${esc(e.port)}</code> allowed <span class="muted">(${esc(e.reason)})</span>`);
    case 'egress.blocked':
      return li('warn', `egress <code>${esc(e.host)}:${esc(e.port)}</code> BLOCKED <span class="muted">(${esc(e.reason)}${e.message ? `: ${esc(e.message)}` : ''})</span>`);
    case 'egress.error':
      return li('warn', `egress <code>${esc(e.host)}</code> failed: ${esc(e.error ?? e.reason)}`);
    case 'sandbox.denied':
      return li('warn', `DENIED ${esc(e.operation)} <code>${esc(e.path)}</code> <span class="muted">(${e.reason === 'hidden' ? 'hidden by the sandbox' : 'read-only outside the workspace'})</span>`);
    case 'agent.completed': {
      const final = text(e.final_text).trim();
      return li('meta', `agent stopped: <strong>${esc(e.stop_reason)}</strong>${e.detail ? ` — ${esc(e.detail)}` : ''}${num(e.turns) !== null ? ` <span class="muted">(${plural(e.turns as number, 'turn')}, ${usd(e.usd)})</span>` : ''}${final ? `<div class="said"><span class="muted">final answer:</span>\n${esc(final)}</div>` : ''}${arr(e.left_running).length > 0 ? `<br><span class="warn">still running at the end (killed): ${arr(e.left_running).map(esc).join(' · ')}</span>` : ''}`);
    }
    case 'check.started': {
      const result = n.children.find((c) => c.e.type === 'check.completed');
      const r = result?.e;
      const output = r ? text(r.output) : '';
      const state = r ? (r.passed === true ? '<span class="pass">passed</span>' : `<span class="fail">failed, exit ${esc(r.exit_code)}${r.timed_out === true ? ' TIMED OUT' : ''}</span>`) : '<span class="muted">no result</span>';
      return li('step', `<details class="cmd"${r && r.passed !== true ? ' open' : ''}><summary>check ${state}${r && r.reason ? ` — ${esc(r.reason)}` : ''}</summary>${output === '' ? '<p class="muted">(no output)</p>' : pre(clipEnd(output, OUTPUT_CHARS), 'out')}</details>`);
    }
    case 'check.completed':
      return li(e.passed === true ? 'pass' : 'fail', `check ${e.passed === true ? 'passed' : `failed, exit ${esc(e.exit_code)}`}${pre(clipEnd(text(e.output), OUTPUT_CHARS), 'out')}`);
    case 'run.completed':
      return li('verdict', `${badge(e.label)} <strong>${esc(e.classification)}</strong>${e.detail ? ` — ${esc(e.detail)}` : ''}${e.label !== 'PASS' && typeof e.suspect_page === 'string' ? `<br>look first at ${link(e.suspect_page)}` : ''}`);
    case 'run.failed':
      return li('fail', `run failed in ${esc(e.failed_stage)}: ${esc(e.error)}`);
    case 'run.interrupted':
      return li('warn', `interrupted (${esc(e.signal)}) during ${esc(e.phase)}`);
    default:
      return li('meta', `<span class="muted">${esc(e.type)}</span>${kids()}`);
  }
}

/** Ours lists the agents at the top; quickstarted's names one per task (grouped by task and agent). */
const agentsOf = (doc: Obj, tasks: Obj[]): string[] =>
  Array.isArray(doc.agents) ? doc.agents.map(text) : [...new Set(tasks.flatMap((t) => (typeof t.agent === 'string' && t.agent !== '' ? [t.agent] : [])))].sort();

function transcriptsSection(tasks: Obj[], runsOf: (t: Obj, i: number) => Run[], streams: ReadonlyMap<string, readonly WireEvent[]>, fromFolder: boolean, traces: ReadonlyMap<string, { file: string; text: string }>): string {
  const blocks = tasks.map((t, i) => {
    const items = runsOf(t, i).map(({ attempt, r, index }) => {
      const events = streams.get(text(r.stream));
      const facts = `${badge(labelOf(r))} ${esc(r.classification)}${(num(r.turns) ?? 0) > 0 ? ` · ${plural(r.turns as number, 'turn')}` : ''}${r.estimated_cost_usd !== undefined && r.model_reported ? ` · ${usd(r.estimated_cost_usd)}` : ''}${(num(r.retries) ?? 0) > 0 ? ` · ${plural(r.retries as number, 'retry', 'retries')}` : ''}`;
      const trace = traces.get(index);
      const body = events
        ? `<ol class="steps">${tree(events).map(nodeHtml).join('')}</ol>`
        : trace
          ? `<p class="muted">From quickstarted's trace <code>${esc(trace.file)}</code>.</p>${pre(trace.text, 'out')}`
          : fromFolder
          ? `<p class="muted">Its stream is not in the folder${r.stream ? ` (<code>${esc(r.stream)}</code>)` : ''}.</p>`
          : `<p class="muted">No stream beside the results document${r.stream ? ` (<code>${esc(r.stream)}</code>)` : ''}: run <code>qs report</code> where the runs were saved (a <code>qs run --out</code> folder, or quickstarted's <code>--out</code> folder with its <code>trace.jsonl</code> files) for the transcript.</p>`;
      return `<details class="attempt" id="${index}"><summary>attempt ${attempt} ${facts}</summary>${body}</details>`;
    });
    return `<section class="task" id="task-${i}"><h3>${esc(t.task)}</h3>${items.join('')}</section>`;
  });
  return `<section id="transcripts"><h2>Transcripts</h2><p class="muted">Each attempt folded: its turns, commands with their output, docs read, egress and the check.</p>${blocks.join('')}</section>`;
}

const CSS = `
:root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--muted:#59636e;--line:#d1d9e0;--code:#f6f8fa;--pass:#1a7f37;--fail:#cf222e;--warn:#9a6700;--band:#b6e3ff;--mark:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;--line:#3d444d;--code:#161b22;--pass:#3fb950;--fail:#f85149;--warn:#d29922;--band:#1f4b7a;--mark:#58a6ff}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);overflow-wrap:anywhere}
header,main,footer{max-width:72rem;margin:0 auto;padding:0 1rem}
h1{font-size:1.5rem;margin:1rem 0 .25rem}h2{font-size:1.2rem;margin:2rem 0 .5rem;border-bottom:1px solid var(--line)}h3{font-size:1rem;margin:1rem 0 .25rem}
a{color:var(--mark)}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--code);padding:.5rem;border-radius:4px;margin:.25rem 0;max-height:28rem;overflow-y:auto}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{overflow-wrap:normal}
tr.total td{border-top:2px solid var(--line)}
.muted{color:var(--muted)}.pass{color:var(--pass)}.fail{color:var(--fail)}.warn{color:var(--warn)}
.badge{display:inline-block;padding:0 .4em;border-radius:3px;font-size:12px;font-weight:700;border:1px solid currentColor}
.badge.pass{color:var(--pass)}.badge.fail{color:var(--fail)}.badge.warn,.badge.skip{color:var(--warn)}
.count{font-weight:400;color:var(--muted)}
.ctl{font-size:11px;border:1px solid var(--line);border-radius:2px;padding:0 2px}
.summary{display:flex;flex-wrap:wrap;gap:.5rem;margin:.75rem 0;padding:0;list-style:none}
.summary li{border:1px solid var(--line);border-radius:6px;padding:.35rem .75rem}
.summary b{display:block;font-size:1.2rem}
.bar{position:relative;height:8px;background:var(--code);border:1px solid var(--line);border-radius:4px;margin:.25rem 0;max-width:14rem}
.bar .ci{position:absolute;top:0;bottom:0;background:var(--band)}
.bar .mark{position:absolute;top:-3px;bottom:-3px;width:3px;margin-left:-1px;background:var(--mark)}
.notice{border:1px solid var(--warn);border-radius:6px;padding:.5rem .75rem}
.gap{border:1px solid var(--line);border-left:4px solid var(--fail);border-radius:6px;padding:.25rem .75rem;margin:.75rem 0}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.15rem .75rem;margin:.5rem 0}dt{color:var(--muted)}dd{margin:0}
details{margin:.25rem 0}summary{cursor:pointer}
details.attempt{border:1px solid var(--line);border-radius:6px;padding:.35rem .6rem}
ol.steps{list-style:none;margin:.25rem 0;padding-left:.75rem;border-left:2px solid var(--line)}
ol.steps li{margin:.2rem 0}
.said{white-space:pre-wrap;margin:.25rem 0;padding-left:.5rem;border-left:3px solid var(--band)}
#tools{margin:.5rem 0}#tools button{font:inherit;padding:.2rem .6rem;margin-right:.5rem}
@media (max-width:640px){
table.cards thead{display:none}
table.cards tr{display:block;border:1px solid var(--line);border-radius:6px;margin:.5rem 0;padding:.25rem .5rem}
table.cards td{display:block;border:0;padding:.1rem 0}
table.cards td:empty{display:none}
table.cards td[data-label]::before{content:attr(data-label) ": ";font-weight:600;color:var(--muted)}
dl{grid-template-columns:minmax(0,1fr)}dd{margin-bottom:.35rem}
}
@media print{details{display:block}}
`;

// Progressive only: buttons to open or close every transcript at once. The page reads the same without it.
const SCRIPT = `(function(){var t=document.getElementById('tools');if(!t)return;function all(open){var d=document.querySelectorAll('#transcripts details');for(var i=0;i<d.length;i++)d[i].open=open;}function b(label,open){var e=document.createElement('button');e.type='button';e.textContent=label;e.addEventListener('click',function(){all(open);});t.appendChild(e);}b('Open every transcript',true);b('Close every transcript',false);})();`;
const SCRIPT_HASH = createHash('sha256').update(SCRIPT).digest('base64');

/** The whole page. `streams` maps a run's `stream` path to its events, for the transcripts; `traces`, a run's key to quickstarted's trace as text. */
export function reportHtml(results: Results, streams: ReadonlyMap<string, readonly WireEvent[]>, options: { fromFolder: boolean; traces?: ReadonlyMap<string, { file: string; text: string }> }): string {
  const doc = results as unknown as Obj;
  const tasks = arr(doc.tasks).map(obj);
  const runsOf = (t: Obj, i: number): Run[] =>
    arr(t.runs)
      .map(obj)
      .map((r, j) => ({ task: text(t.task), attempt: num(r.attempt) ?? j + 1, r, index: `run-${i}-${j}` }));
  const runs = tasks.flatMap(runsOf);
  const c = obj(doc.counts);
  const classified = (k: string): number => num(c[k]) ?? runs.filter((x) => x.r.classification === k).length;
  const inconclusive = num(c.inconclusive) ?? runs.filter((x) => !['passed', 'docs_gap', 'skipped', 'interrupted'].includes(text(x.r.classification))).length;
  const env = obj(doc.environment);
  const cards = [
    ['tasks', tasks.length],
    ['runs', runs.length],
    ['passed', classified('passed')],
    ['docs gaps', classified('docs_gap')],
    ['inconclusive', inconclusive],
    ['skipped', classified('skipped')],
    ...(classified('interrupted') > 0 ? [['interrupted', classified('interrupted')]] : []),
    ...(arr(doc.not_run).length > 0 ? [['not run', arr(doc.not_run).length]] : []),
    ['cost', usd(obj(doc.totals).estimated_cost_usd)],
  ].map(([k, v]) => `<li><b>${esc(v)}</b>${esc(k)}</li>`);
  const title = `quickloop report: ${plural(tasks.length, 'task')}, ${classified('docs_gap')} docs gap${classified('docs_gap') === 1 ? '' : 's'}`;
  const csp = `default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-${SCRIPT_HASH}'; base-uri 'none'; form-action 'none'`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>${esc(title)}</title>
<style>${CSS}</style>
</head>
<body>
<header>
<h1>quickloop report</h1>
<p class="muted">${plural(runs.length, 'run')} of ${plural(tasks.length, 'task')} · agents ${esc(agentsOf(doc, tasks).join(', ') || '—')}${arr(doc.models_reported).length > 0 ? ` · models ${esc(arr(doc.models_reported).map(text).join(', '))}` : ''} · backend ${esc(env.backend ?? 'none')} · ${esc(doc.duration_seconds ?? 0)}s · ${esc(doc.generated_at)}</p>
<ul class="summary">${cards.join('')}</ul>
${doc.interrupted === true ? '<p class="notice"><strong>The sweep was interrupted</strong>: the runs below are the ones that finished.</p>' : ''}
</header>
<main>
${ratesSection(tasks)}
${gapsSection(runs)}
${discardedSection(runs)}
${notRunSection(doc)}
${egressSection(runs)}
${denialsSection(runs)}
${runsSection(runs, doc)}
<div id="tools"></div>
${transcriptsSection(tasks, runsOf, streams, options.fromFolder, options.traces ?? new Map())}
</main>
<footer><p class="muted">results schema ${esc(doc.schema_version)}${doc.quickloop_version ? ` · quickloop ${esc(doc.quickloop_version)}` : ''}</p></footer>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
