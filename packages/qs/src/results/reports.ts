// What a sweep's results.json is also written as: JUnit XML, a Markdown summary, GitHub annotations.
// Each reads the fold's document only, so they agree with results.json and with each other.
import { codePoint, DISGUISE } from './disguise.js';
import { isInconclusive, tailChars, type Results, type RunResult, type TaskResult } from './fold.js';

/** Escaped for XML 1.0, which cannot carry most control characters or lone surrogates even escaped. */
function xml(text: string): string {
  let out = '';
  for (const ch of text) {
    const c = ch.codePointAt(0) as number;
    const valid = c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) || c >= 0x10000;
    out += !valid ? '\uFFFD' : ch === '&' ? '&amp;' : ch === '<' ? '&lt;' : ch === '>' ? '&gt;' : ch === '"' ? '&quot;' : ch;
  }
  return out;
}
const seconds = (n: number): string => n.toFixed(3);
const lastLine = (text: string): string =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .at(-1) ?? '';

function testcase(t: TaskResult, r: RunResult): string {
  // A run stopped before its agent started has none of its own: it is still an attempt of the task's agent, named like the others.
  const open = `    <testcase classname="quickloop.${xml(t.task)}" name="${xml(`${r.agent ?? t.agent ?? 'agent'} attempt ${r.attempt}`)}" time="${seconds(r.duration_seconds)}"`;
  if (r.classification === 'passed') return `${open}/>`;
  if (r.classification === 'skipped') return `${open}>\n      <skipped message="${xml(r.outcome.detail)}"/>\n    </testcase>`;
  if (r.classification === 'docs_gap') {
    const text = [`stop reason: ${r.stop_reason ?? 'none'}`, `last docs page read: ${r.suspect_page ?? 'none'}`, `check output:`, tailChars(r.success_check?.output ?? '', 1000)].join('\n');
    return `${open}>\n      <failure type="docs_gap" message="${xml(`success check exit ${r.success_check?.exit_code ?? 'none'}: ${r.outcome.check_reason ?? r.outcome.detail}`)}">${xml(text)}</failure>\n    </testcase>`;
  }
  return `${open}>\n      <error type="${xml(r.classification)}" message="${xml(r.outcome.detail)}">${xml(r.outcome.detail)}</error>\n    </testcase>`;
}

/** JUnit XML: a docs gap is a failure, an inconclusive (or interrupted) run an error, a skip skipped. */
export function junitXml(results: Results): string {
  const count = (runs: RunResult[], p: (r: RunResult) => boolean): number => runs.filter(p).length;
  const all = results.tasks.flatMap((t) => t.runs);
  const attrs = (runs: RunResult[]): string =>
    `tests="${runs.length}" failures="${count(runs, (r) => r.classification === 'docs_gap')}" errors="${count(runs, (r) => isInconclusive(r.classification))}" skipped="${count(runs, (r) => r.classification === 'skipped')}" time="${seconds(runs.reduce((s, r) => s + r.duration_seconds, 0))}"`;
  // An attempt no folder ran is an error, never a pass or a skip: a CI reading only JUnit must not go green on it.
  const notRun = (t: TaskResult): string[] =>
    (results.not_run ?? [])
      .filter((n) => n.slug === t.slug)
      .map((n) => `    <testcase classname="quickloop.${xml(t.task)}" name="${xml(`not run attempt ${n.attempt}`)}" time="0.000">\n      <error type="not_run" message="no folder holds this attempt of the plan">no folder holds this attempt of the plan</error>\n    </testcase>`);
  const attrsWith = (runs: RunResult[], missing: number): string => {
    const a = attrs(runs);
    if (missing === 0) return a;
    return a.replace(/^tests="(\d+)"/, (_, n: string) => `tests="${Number(n) + missing}"`).replace(/ errors="(\d+)"/, (_, n: string) => ` errors="${Number(n) + missing}"`);
  };
  const suites = results.tasks.map((t) => [`  <testsuite name="${xml(t.task)}" ${attrsWith(t.runs, t.not_run ?? 0)}>`, ...t.runs.map((r) => testcase(t, r)), ...notRun(t), '  </testsuite>'].join('\n'));
  return ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="quickloop" ${attrsWith(all, results.not_run?.length ?? 0)}>`, ...suites, '</testsuites>', ''].join('\n');
}

/** A pass rate for people: `80% [4/5 evidential of 6 runs]`, or why there is none. */
export function rateText(t: TaskResult): string {
  if (t.attempts === 0 && (t.not_run ?? 0) > 0) return `not run (${t.not_run} attempt${t.not_run === 1 ? '' : 's'} of the plan)`;
  if (t.pass_rate === null) return t.skipped === t.attempts ? 'skipped (no replay commands)' : `no evidence (${t.attempts} run${t.attempts === 1 ? '' : 's'})`;
  const ci = t.pass_rate_interval ? ` (95% CI ${pct(t.pass_rate_interval.low)}–${pct(t.pass_rate_interval.high)})` : '';
  return `${pct(t.pass_rate)} [${t.passes}/${t.evidential_runs} evidential of ${t.attempts} run${t.attempts === 1 ? '' : 's'}]${ci}`;
}
const pct = (x: number): string => `${Math.round(x * 100)}%`;

/** How much of one field a line of the summary shows: GitHub takes at most 1 MiB of a step's summary. */
const MD_FIELD_CHARS = 300;
/** The docs gaps (and attempts not run) the summary lists one by one; the rest are counted. */
const MD_GAPS = 100;

// Controls and bidi overrides from a stream are shown as what they are: GitHub renders them, and they
// could disguise a row. `&` is escaped too, or `&#x202E;` would be rendered as the override it names.
const clip = (text: string): string => {
  if (text.length <= MD_FIELD_CHARS) return text;
  // Never between the two halves of a surrogate pair.
  const at = /[\ud800-\udbff]/.test(text[MD_FIELD_CHARS - 2] ?? '') ? MD_FIELD_CHARS - 2 : MD_FIELD_CHARS - 1;
  return `${text.slice(0, at)}…`;
};
// A CR left alone (a line end is a space here by then) would end the table row in some renderers.
const DISGUISED = new RegExp(`${DISGUISE}|\r`, 'gu');
const md = (text: string): string =>
  clip(text)
    .replace(/[|\\`*_[\]<>&]/g, (c) => `\\${c}`)
    .replace(/\r?\n/g, ' ')
    .replace(DISGUISED, codePoint);

/** The Markdown summary (`--summary FILE`, and GitHub's step summary). */
export function summaryMarkdown(results: Results): string {
  const c = results.counts;
  const lines = [
    '# quickloop results',
    '',
    `${results.totals.runs} run${results.totals.runs === 1 ? '' : 's'} of ${results.tasks.length} task${results.tasks.length === 1 ? '' : 's'} · ${c.passed} passed · ${c.docs_gap} docs gap · ${c.inconclusive} inconclusive · ${c.skipped} skipped${c.interrupted ? ` · ${c.interrupted} interrupted` : ''}${c.not_run ? ` · ${c.not_run} not run` : ''} · backend ${md(results.environment.backend ?? 'none')} · ${results.duration_seconds}s`,
    '',
  ];
  if (results.interrupted) lines.push('**The sweep was interrupted**: the runs below are the ones that finished.', '');
  lines.push('| Task | Agent | Pass rate | Evidential | Discarded | Flaky |', '| --- | --- | --- | --- | --- | --- |');
  for (const t of results.tasks) {
    const discarded = Object.entries(t.discarded).map(([k, n]) => `${k} ${n}`).join(', ') || '—';
    lines.push(`| ${md(t.task)} | ${md(t.agent ?? '—')} | ${md(rateText(t))} | ${t.evidential_runs}/${t.attempts} | ${md(discarded)} | ${t.flaky ? 'yes' : ''} |`);
  }
  const gaps = results.tasks.flatMap((t) => t.runs.filter((r) => r.classification === 'docs_gap').map((r) => ({ t, r })));
  if (gaps.length > 0) {
    lines.push('', '## Docs gaps', '');
    for (const { t, r } of gaps.slice(0, MD_GAPS)) lines.push(`- **${md(t.task)}** attempt ${r.attempt}: ${md(r.outcome.check_reason || r.outcome.detail)}${r.suspect_page ? ` — look first at ${md(r.suspect_page)}` : ''}`);
    if (gaps.length > MD_GAPS) lines.push(`- … and ${gaps.length - MD_GAPS} more docs gaps (results.json, JUnit and the report have each of them)`);
  }
  if ((results.not_run ?? []).length > 0) {
    lines.push('', '## Not run', '', 'Attempts of the plan that no folder holds (a shard that did not finish, or was not merged): no evidence either way.', '');
    for (const n of results.not_run.slice(0, MD_GAPS)) lines.push(`- **${md(n.task)}** attempt ${n.attempt}`);
    if (results.not_run.length > MD_GAPS) lines.push(`- … and ${results.not_run.length - MD_GAPS} more (results.json lists each of them)`);
  }
  const cost = results.totals.estimated_cost_usd;
  lines.push('', `Estimated cost: ${cost === null ? 'unknown' : `$${cost.toFixed(4)}`}${results.totals.unpriced_models.length ? ` (unpriced: ${results.totals.unpriced_models.map(md).join(', ')})` : ''}`, '');
  return lines.join('\n');
}

/** GitHub workflow-command data: `%`, CR and LF must be encoded or a line ends the command early. */
const ghData = (text: string): string => text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const ghProp = (text: string): string => ghData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');

/** One `::error` per task with a docs gap (its first), one `::warning` per task with no evidence. */
export function githubAnnotations(results: Results): string[] {
  const out: string[] = [];
  for (const t of results.tasks) {
    const file = t.runs.find((r) => r.source !== null)?.source ?? `tasks/${t.slug}.yaml`;
    const gap = t.runs.find((r) => r.classification === 'docs_gap');
    if (gap) {
      const body = `pass rate ${rateText(t)} for ${t.task}. ${lastLine(gap.success_check?.output ?? '') || gap.outcome.detail}${gap.suspect_page ? `\nLast documentation page read before failing: ${gap.suspect_page}` : ''}`;
      out.push(`::error file=${ghProp(file)},title=${ghProp('quickloop docs gap')}::${ghData(body)}`);
    } else if (t.pass_rate === null && t.skipped < t.attempts) {
      out.push(`::warning file=${ghProp(file)},title=${ghProp('quickloop no evidence')}::${ghData(`${t.task}: ${rateText(t)}`)}`);
    }
    if ((t.not_run ?? 0) > 0) out.push(`::warning file=${ghProp(file)},title=${ghProp('quickloop not run')}::${ghData(`${t.task}: ${t.not_run} attempt${t.not_run === 1 ? '' : 's'} of the plan not run`)}`);
  }
  return out;
}
