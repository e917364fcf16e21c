// `qs diff`: two results documents compared task by task, with an exact test on each pass rate.
import { terminalSafe } from '@quickloop/cli-kit/safe-text';
import { countsIn, gapPages, type Results, type TaskResult } from './fold.js';
import { fisherExact, smallestReachableP, wilson, type Interval } from './stats.js';

export const ALPHA = 0.05;

export type Bucket = 'newly_failing' | 'newly_fixed' | 'still_failing' | 'flaky' | 'still_passing' | 'no_evidence';
export type Verdict = 'regressed' | 'improved' | 'inside_the_noise' | 'underpowered' | 'no_evidence' | 'not_comparable';

export interface Side {
  passes: number;
  failures: number;
  evidential_runs: number;
  attempts: number;
  pass_rate: number | null;
  interval: Interval | null;
  agent: string | null;
  models_reported: string[];
  /** The pages docs-gap runs stopped at (gapPages in fold.ts). */
  suspect_pages: string[];
}

export interface TaskDiff {
  task: string;
  before: Side;
  after: Side;
  /** Two-sided Fisher exact p on [[passes, failures] before, [passes, failures] after]; null without evidence on a side. */
  p_value: number | null;
  /** The smallest p any outcome of these run counts could give; at or above alpha nothing can be significant. */
  best_possible_p: number | null;
  underpowered: boolean;
  verdict: Verdict;
  /** null for a pair that is not compared (not_comparable): no bucket, no p, no page changes are claimed for it. */
  bucket: Bucket | null;
  not_comparable: string | null;
  pages_newly_failing: string[];
  pages_cleared: string[];
  /** Runs set aside by classification on each side, when the two differ (else null), as quickstarted's diff reports them. */
  discarded_changed: { before: Record<string, number>; after: Record<string, number> } | null;
}

export interface Comparison {
  alpha: number;
  allow_different: boolean;
  tasks: TaskDiff[];
  added: string[];
  removed: string[];
  regressions: string[];
  cost: { before: number | null; after: number | null };
}

// A prior-art document has no `failures`: every evidential run that did not pass is one.
function side(t: TaskResult): Side {
  const failures = t.evidential_runs - t.passes;
  return {
    passes: t.passes,
    failures,
    evidential_runs: t.evidential_runs,
    attempts: t.attempts,
    pass_rate: t.evidential_runs === 0 ? null : t.passes / t.evidential_runs,
    interval: t.evidential_runs === 0 ? null : wilson(t.passes, t.evidential_runs),
    // Ours lists every agent a task's runs had (a folder can hold two); quickstarted's has the one.
    agent: Array.isArray(t.agents) && t.agents.length > 0 ? [...t.agents].sort().join(', ') : (t.agent ?? null),
    models_reported: [...new Set(t.models_reported ?? [])].sort(),
    suspect_pages: Object.keys(gapPages(t)).sort(),
  };
}

function bucketOf(b: Side, a: Side): Bucket {
  if (b.evidential_runs === 0 || a.evidential_runs === 0) return 'no_evidence';
  if (b.failures === 0 && a.failures === 0) return 'still_passing';
  if (b.failures === 0) return 'newly_failing';
  if (a.failures === 0) return 'newly_fixed';
  if (b.passes === 0 && a.passes === 0) return 'still_failing';
  return 'flaky';
}

/** A side's discarded counts, numbers only and sorted by classification (another tool's document is read as unknown). */
function discardedOf(t: TaskResult): Record<string, number> {
  return Object.fromEntries(Object.entries(countsIn(t.discarded)).filter(([, n]) => n !== 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const sameSet = (x: string[], y: string[]): boolean => x.length === y.length && x.every((v, i) => v === y[i]);

/** Why two sides cannot be compared (a different agent, or different models served), else null. */
function incomparable(b: Side, a: Side): string | null {
  if (b.agent !== null && a.agent !== null && b.agent !== a.agent) return `agent ${b.agent} before, ${a.agent} after`;
  if (b.models_reported.length > 0 && a.models_reported.length > 0 && !sameSet(b.models_reported, a.models_reported)) {
    return `model ${b.models_reported.join(', ')} before, ${a.models_reported.join(', ')} after`;
  }
  return null;
}

export function compare(before: Results, after: Results, allowDifferent: boolean): Comparison {
  const byName = (r: Results): Map<string, TaskResult> => new Map(r.tasks.map((t) => [t.task, t]));
  const b = byName(before);
  const a = byName(after);
  const tasks: TaskDiff[] = [];
  for (const [name, bt] of b) {
    const at = a.get(name);
    if (!at) continue;
    const sb = side(bt);
    const sa = side(at);
    const db = discardedOf(bt);
    const da = discardedOf(at);
    const why = incomparable(sb, sa);
    const compared = why === null || allowDifferent;
    const evidence = compared && sb.evidential_runs > 0 && sa.evidential_runs > 0;
    const p = evidence ? fisherExact(sb.passes, sb.failures, sa.passes, sa.failures) : null;
    const best = evidence ? smallestReachableP(sb.evidential_runs, sa.evidential_runs) : null;
    const underpowered = best !== null && best >= ALPHA;
    let verdict: Verdict;
    if (!compared) verdict = 'not_comparable';
    else if (p === null) verdict = 'no_evidence';
    else if (p < ALPHA) verdict = (sa.pass_rate as number) < (sb.pass_rate as number) ? 'regressed' : 'improved';
    else verdict = underpowered ? 'underpowered' : 'inside_the_noise';
    tasks.push({
      task: name,
      before: sb,
      after: sa,
      p_value: p,
      best_possible_p: best,
      underpowered,
      verdict,
      bucket: compared ? bucketOf(sb, sa) : null,
      not_comparable: why,
      pages_newly_failing: compared ? sa.suspect_pages.filter((u) => !sb.suspect_pages.includes(u)) : [],
      pages_cleared: compared ? sb.suspect_pages.filter((u) => !sa.suspect_pages.includes(u)) : [],
      discarded_changed: !compared || JSON.stringify(db) === JSON.stringify(da) ? null : { before: db, after: da },
    });
  }
  return {
    alpha: ALPHA,
    allow_different: allowDifferent,
    tasks,
    added: [...a.keys()].filter((n) => !b.has(n)),
    removed: [...b.keys()].filter((n) => !a.has(n)),
    regressions: tasks.filter((t) => t.verdict === 'regressed').map((t) => t.task),
    cost: { before: before.totals?.estimated_cost_usd ?? null, after: after.totals?.estimated_cost_usd ?? null },
  };
}

const rate = (s: Side): string => (s.pass_rate === null ? 'no evidence' : `${s.passes}/${s.evidential_runs} (${Math.round(s.pass_rate * 100)}%, 95% CI ${Math.round((s.interval as Interval).low * 100)}–${Math.round((s.interval as Interval).high * 100)}%)`);
const p3 = (p: number): string => (p < 0.001 ? p.toExponential(2) : p.toFixed(3));

const counts = (m: Record<string, number>): string => Object.entries(m).map(([k, n]) => `${k} ${n}`).join(', ') || 'none';

/** The comparison for people, a line per task and then the buckets. */
export function diffText(c: Comparison): string {
  const lines: string[] = [];
  for (const t of c.tasks) {
    let verdict: string;
    switch (t.verdict) {
      case 'regressed':
      case 'improved':
        verdict = `${t.verdict}, p=${p3(t.p_value as number)}`;
        break;
      case 'inside_the_noise':
        verdict = `inside the noise, p=${p3(t.p_value as number)}`;
        break;
      case 'underpowered':
        verdict = `inside the noise, p=${p3(t.p_value as number)}; underpowered: no result at ${t.before.evidential_runs} vs ${t.after.evidential_runs} evidential runs could reach p<${c.alpha} (best possible p=${p3(t.best_possible_p as number)})`;
        break;
      case 'no_evidence':
        verdict = 'no evidence on one side';
        break;
      case 'not_comparable':
        verdict = `not comparable: ${t.not_comparable} (--allow-different compares them anyway)`;
        break;
    }
    lines.push(`${t.task}: ${rate(t.before)} -> ${rate(t.after)}: ${verdict}`);
    if (t.not_comparable !== null && t.verdict !== 'not_comparable') lines.push(`  warning: ${t.not_comparable}`);
    for (const u of t.pages_newly_failing) lines.push(`  newly failing after: ${u}`);
    for (const u of t.pages_cleared) lines.push(`  cleared: ${u}`);
    if (t.discarded_changed !== null) lines.push(`  discarded: ${counts(t.discarded_changed.before)} -> ${counts(t.discarded_changed.after)}`);
  }
  const buckets: Array<[Bucket, string]> = [
    ['newly_failing', 'newly failing'],
    ['newly_fixed', 'newly fixed'],
    ['still_failing', 'still failing'],
    ['flaky', 'flaky'],
  ];
  for (const [b, name] of buckets) {
    const names = c.tasks.filter((t) => t.bucket === b).map((t) => t.task);
    if (names.length > 0) lines.push(`${name}: ${names.join(', ')}`);
  }
  if (c.added.length) lines.push(`added: ${c.added.join(', ')}`);
  if (c.removed.length) lines.push(`removed: ${c.removed.join(', ')}`);
  if (c.cost.before !== null || c.cost.after !== null) lines.push(`cost: ${c.cost.before === null ? 'unknown' : `$${c.cost.before.toFixed(4)}`} -> ${c.cost.after === null ? 'unknown' : `$${c.cost.after.toFixed(4)}`}`);
  // Names and pages come from the documents: each line stays one line, so none can forge a verdict.
  return `${lines.map((l) => terminalSafe(l)).join('\n')}\n`;
}
