// results.json: the one fold over saved run streams that results.json, JUnit, the Markdown summary,
// `qs show`, `qs diff` (and later merge and the report) all read, so they can never disagree.
//
// The document keeps every field of quickstarted's results schema 2.0 under the same names, so files
// written by either tool compare; what that schema leaves out sits beside them under new names.
import type { WireEvent } from '@quickloop/events';
import { wilson, type Interval } from './stats.js';

/** The prior art's major version (readers of either tool check the major) and ours on top of it. */
export const SCHEMA_VERSION = '2.0';
export const QUICKLOOP_RESULTS_VERSION = 1;

export interface Tokens {
  input: number;
  output: number;
  cache_write: number;
  cache_read: number;
}

export type Ended = 'completed' | 'failed' | 'interrupted' | 'incomplete';

export interface RunResult {
  task: string;
  attempt: number;
  agent: string | null;
  /** The model that served the run, "" when none did (replay, a setup failure): quickstarted's writer always gives a string. */
  model_reported: string;
  classification: string;
  passed: boolean;
  evidential: boolean;
  stop_reason: string | null;
  turns: number;
  duration_seconds: number;
  backend: string | null;
  enforced: boolean | null;
  image: string | null;
  docs_pages_read: string[];
  suspect_page: string | null;
  docs_bypass_attempts: number;
  success_check: { exit_code: number; output: string } | null;
  tokens: Tokens;
  // Beyond schema 2.0:
  run_id: string;
  label: string;
  stream: string;
  source: string | null;
  outcome: { ended: Ended; detail: string; failed_stage: string | null; signal: string | null; check_reason: string | null };
  final_text: string | null;
  /** The run's affordance policy, the probe of what the site offers (--probe-affordances) and the URLs withheld; null when its stream records none of them. */
  affordances: Affordances | null;
  egress: { allowed: number; blocked: number; errors: number; allowed_hosts: Record<string, number>; blocked_hosts: Record<string, number>; error_hosts: Record<string, number> };
  /** `denied_paths` is keyed `OPERATION PATH` (`write /etc/x`); `limit_hits` by the limit's name (`processes`, `memory`, …). */
  sandbox: { limits: unknown[] | null; denials: number; denied_paths: Record<string, number>; limit_hits: Record<string, number>; workspace_bytes: number | null; kept: string | null };
  retries: number;
  reasoning_tokens: number;
  estimated_cost_usd: number | null;
}

export interface AffordanceProbe {
  url: string;
  present: boolean;
  status: number | null;
  bytes: number | null;
  note: string | null;
}

export interface Affordances {
  policy: 'all' | 'none' | null;
  /** The page probed from, and what was found, keyed by kind (`llms.txt`, `llms-full.txt`, `md`), as quickstarted's trace keys them by label; null when not probed. */
  entrypoint: string | null;
  found: Record<string, AffordanceProbe> | null;
  /** URLs the agent asked for and was refused under --affordances none, each once, in the order first asked. */
  withheld: string[];
}

const POLICIES = new Set(['all', 'none']);
const PROBE_KINDS = new Set(['llms.txt', 'llms-full.txt', 'md']);
const policyOf = (v: unknown): 'all' | 'none' | null => (typeof v === 'string' && POLICIES.has(v) ? (v as 'all' | 'none') : null);

function probesOf(v: unknown): Record<string, AffordanceProbe> {
  const found: Record<string, AffordanceProbe> = {};
  for (const item of Array.isArray(v) ? v : []) {
    const q = (item ?? {}) as Record<string, unknown>;
    if (typeof q.kind !== 'string' || !PROBE_KINDS.has(q.kind) || typeof q.url !== 'string') continue;
    found[q.kind] = { url: q.url, present: q.present === true, status: num(q.status), bytes: num(q.bytes), note: str(q.note) };
  }
  return found;
}

export interface TaskResult {
  task: string;
  agent: string | null;
  attempts: number;
  passes: number;
  evidential_runs: number;
  pass_rate: number | null;
  discarded: Record<string, number>;
  skipped: number;
  models_reported: string[];
  suspect_pages: Record<string, number>;
  tokens: Tokens;
  estimated_cost_usd: number | null;
  runs: RunResult[];
  // Beyond schema 2.0:
  slug: string;
  /** Attempts of the plan for this task that were not run (see Results.not_run). */
  not_run: number;
  failures: number;
  flaky: boolean;
  pass_rate_interval: Interval | null;
  agents: string[];
  unpriced_models: string[];
}

export interface Results {
  schema_version: string;
  /** Who wrote the document (`quickloop VERSION`): quickstarted's report prints this field after its own name. */
  quickstarted_version: string;
  /** To the second, `YYYY-MM-DDTHH:MM:SSZ`, as quickstarted stamps it. */
  generated_at: string;
  environment: { python: null; platform: null; hostname: null; backend: string | null };
  repeat: number;
  duration_seconds: number;
  interrupted: boolean;
  totals: { runs: number; tokens: Tokens; estimated_cost_usd: number | null; unpriced_models: string[] };
  tasks: TaskResult[];
  // Beyond schema 2.0:
  quickloop_results_version: number;
  quickloop_version: string;
  backends: string[];
  agents: string[];
  models_reported: string[];
  counts: { passed: number; docs_gap: number; inconclusive: number; skipped: number; interrupted: number; not_run: number };
  /** The sweep's identity, from the folder's plan.ndjson (null for a folder without one). */
  plan_sha256: string | null;
  /** Attempts the plan gave this folder that no stream here holds: never run, so never evidence. */
  not_run: NotRun[];
}

export interface NotRun {
  task: string;
  slug: string;
  attempt: number;
}

/** What the fold needs of a sweep's plan: the tasks, and the attempts this folder was to hold. */
export interface FoldPlan {
  plan_sha256: string;
  repeat: number;
  /** The agent every attempt of the sweep was given (a run stopped before its agent started names no agent of its own). */
  agent?: string;
  tasks: readonly { name: string; slug: string }[];
  assigned: readonly { slug: string; attempt: number }[];
}

/** One attempt's saved stream: where it sits (`SLUG/ATTEMPT/events.ndjson`) and its events in order. */
export interface AttemptStream {
  slug: string;
  attempt: number;
  events: WireEvent[];
}

const INCONCLUSIVE = new Set(['budget_exhausted', 'infra_error', 'harness_error', 'agent_refusal']);
const CHECK_OUTPUT_CHARS = 2000;
/** A run's final text in results.json: its start, as quickstarted's trace keeps 2000 characters of it (the stream keeps it whole). */
export const FINAL_TEXT_CHARS = 4000;

const zero = (): Tokens => ({ input: 0, output: 0, cache_write: 0, cache_read: 0 });
const addTokens = (a: Tokens, b: Tokens): Tokens => ({ input: a.input + b.input, output: a.output + b.output, cache_write: a.cache_write + b.cache_write, cache_read: a.cache_read + b.cache_read });
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
/** Counts keyed by text from inside the sandbox: no prototype, so a host named `__proto__` is counted too. */
const tally = (): Record<string, number> => Object.create(null) as Record<string, number>;
const bump = (m: Record<string, number>, k: string): void => {
  m[k] = (m[k] ?? 0) + 1;
};
/** Sorted by count, most first, then by key: a stable order whatever order the runs came in. */
const byCount = (m: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(m).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0)));
const round3 = (n: number): number => Math.round(n * 1000) / 1000;

/** The first `max` UTF-16 units of `text`, ending on a whole character (as tailChars starts on one). */
export function headChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const high = text.charCodeAt(max - 1);
  return text.slice(0, high >= 0xd800 && high <= 0xdbff ? max - 1 : max);
}

/**
 * The end of `text`, at most `max` UTF-16 units, starting on a whole character: half of an emoji is
 * not text (quickstarted's report, writing it as UTF-8, stops on it; JUnit would show U+FFFD).
 */
export function tailChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const start = text.length - max;
  const low = text.charCodeAt(start);
  return text.slice(low >= 0xdc00 && low <= 0xdfff ? start + 1 : start);
}
const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();

function tokensOf(usage: unknown): { tokens: Tokens; reasoning: number } {
  const u = (usage ?? {}) as Record<string, unknown>;
  return {
    tokens: { input: num(u.input_tokens) ?? 0, output: num(u.output_tokens) ?? 0, cache_write: num(u.cache_write_tokens) ?? 0, cache_read: num(u.cache_read_tokens) ?? 0 },
    reasoning: num(u.reasoning_tokens) ?? 0,
  };
}

/** Folds one attempt's events into its run record. Pure: the same events give the same record. */
export function foldRun(stream: AttemptStream): RunResult {
  const { events } = stream;
  let task: string | null = null;
  let source: string | null = null;
  let image: string | null = null;
  let agent: string | null = null;
  let model: string | null = null;
  let backend: string | null = null;
  let enforced: boolean | null = null;
  let limits: unknown[] | null = null;
  let stop: string | null = null;
  let agentDetail = '';
  let turns = 0;
  let turnEvents = 0;
  let finalText: string | null = null;
  let completedUsage: unknown;
  let completedUsd: number | null | undefined;
  let turnTokens = zero();
  let turnReasoning = 0;
  let turnUsd: number | null = 0;
  let check: { exit_code: number; output: string; reason: string } | null = null;
  const pages: string[] = [];
  let policy: 'all' | 'none' | null = null;
  let probe: { entrypoint: string | null; found: Record<string, AffordanceProbe> } | null = null;
  const withheld: string[] = [];
  let bypass = 0;
  let retries = 0;
  let denials = 0;
  let workspaceBytes: number | null = null;
  const egress = { allowed: 0, blocked: 0, errors: 0, allowed_hosts: tally(), blocked_hosts: tally(), error_hosts: tally() };
  const deniedPaths = tally();
  const limitHits = tally();
  let terminal: WireEvent | null = null;
  let first = Infinity;
  let last = -Infinity;
  for (const e of events) {
    const t = Date.parse(e.ts);
    if (Number.isFinite(t)) {
      first = Math.min(first, t);
      last = Math.max(last, t);
    }
    const p = e as Record<string, unknown>;
    switch (e.type) {
      case 'task.loaded': {
        const tk = (p.task ?? {}) as Record<string, unknown>;
        task ??= str(tk.name);
        image ??= str(tk.image);
        source ??= str((p.source as Record<string, unknown> | undefined)?.path);
        break;
      }
      case 'sandbox.ready':
        backend ??= str(p.backend);
        enforced ??= typeof p.enforced === 'boolean' ? p.enforced : null;
        if (Array.isArray(p.limits)) limits ??= p.limits;
        break;
      case 'agent.started':
        agent ??= str(p.agent);
        model ??= str(p.model);
        task ??= str(p.task);
        policy ??= policyOf(p.affordances);
        break;
      case 'docs.affordances':
        policy ??= policyOf(p.affordances);
        probe ??= { entrypoint: str(p.entrypoint), found: probesOf(p.probes) };
        break;
      case 'agent.turn': {
        turnEvents += 1;
        model ??= str(p.model);
        const u = tokensOf(p.usage);
        turnTokens = addTokens(turnTokens, u.tokens);
        turnReasoning += u.reasoning;
        turnUsd = turnUsd === null || num(p.usd) === null ? null : turnUsd + (num(p.usd) as number);
        break;
      }
      case 'agent.retry':
        retries += 1;
        break;
      case 'agent.completed':
        agent ??= str(p.agent);
        model ??= str(p.model);
        stop = str(p.stop_reason);
        agentDetail = str(p.detail) ?? '';
        // A model agent counts its model turns; replay has none, and its turns (as quickstarted counts them) are the commands it ran.
        turns = num(p.turns) ?? (p.agent === 'replay' ? (num(p.commands) ?? 0) : 0);
        finalText = str(p.final_text);
        completedUsage = p.usage;
        if ('usd' in p) completedUsd = num(p.usd);
        break;
      case 'docs.read':
        if (typeof p.url === 'string') pages.push(p.url);
        break;
      case 'docs.error':
        if (p.reason === 'affordance_withheld' && typeof p.url === 'string' && !withheld.includes(p.url)) withheld.push(p.url);
        break;
      case 'egress.allowed':
        egress.allowed += 1;
        bump(egress.allowed_hosts, String(p.host));
        break;
      case 'egress.blocked':
        egress.blocked += 1;
        bump(egress.blocked_hosts, String(p.host));
        if (p.reason === 'docs_host') bypass += 1;
        break;
      case 'egress.error':
        egress.errors += 1;
        bump(egress.error_hosts, String(p.host));
        break;
      case 'sandbox.denied':
        denials += 1;
        bump(deniedPaths, `${String(p.operation)} ${String(p.path)}`);
        break;
      case 'sandbox.limit_hit':
        bump(limitHits, String(p.limit));
        break;
      case 'sandbox.usage':
        if (typeof p.workspace_bytes === 'number') workspaceBytes = Math.max(workspaceBytes ?? 0, p.workspace_bytes);
        break;
      case 'check.completed':
        check = { exit_code: num(p.exit_code) ?? -1, output: str(p.output) ?? '', reason: str(p.reason) ?? '' };
        break;
      case 'run.completed':
      case 'run.failed':
      case 'run.interrupted':
        // The first terminal ends the run; anything after it is another stage's late word.
        terminal ??= e;
        break;
    }
  }
  const usage = completedUsage === undefined ? { tokens: turnTokens, reasoning: turnReasoning } : tokensOf(completedUsage);
  const usd = completedUsd !== undefined ? completedUsd : turnEvents > 0 ? turnUsd : model === null ? 0 : null;
  const t = (terminal ?? {}) as Record<string, unknown>;
  let classification: string;
  let ended: Ended;
  let detail = agentDetail;
  let failedStage: string | null = null;
  let signal: string | null = null;
  let kept: string | null = null;
  if (terminal?.type === 'run.completed') {
    classification = str(t.classification) ?? 'harness_error';
    ended = 'completed';
    detail = str(t.detail) ?? detail;
    backend = str(t.backend) ?? backend;
    if (typeof t.enforced === 'boolean') enforced = t.enforced;
    stop = str(t.stop_reason) ?? stop;
    kept = str(t.workspace_kept);
    if (typeof t.docs_bypass_attempts === 'number') bypass = t.docs_bypass_attempts;
  } else if (terminal?.type === 'run.failed') {
    classification = 'harness_error';
    ended = 'failed';
    failedStage = str(t.failed_stage);
    detail = `${failedStage ?? 'a stage'} failed: ${str(t.error) ?? ''}`;
  } else if (terminal?.type === 'run.interrupted') {
    classification = 'interrupted';
    ended = 'interrupted';
    signal = str(t.signal);
    detail = `interrupted (${signal ?? 'signal'}) during ${str(t.phase) ?? 'the run'}`;
  } else {
    classification = 'harness_error';
    ended = 'incomplete';
    detail = 'the stream ends without run.completed, run.failed or run.interrupted';
  }
  const passed = classification === 'passed';
  const evidential = passed || classification === 'docs_gap';
  const label = passed ? 'PASS' : classification === 'docs_gap' ? 'FAIL' : classification === 'skipped' ? 'SKIP' : 'INCONCLUSIVE';
  const runId = events[0]?.run_id ?? '';
  return {
    task: task ?? stream.slug,
    attempt: stream.attempt,
    agent,
    model_reported: model ?? '',
    classification,
    passed,
    evidential,
    stop_reason: stop,
    turns,
    duration_seconds: Number.isFinite(first) ? round3((last - first) / 1000) : 0,
    backend,
    enforced,
    // The image actually used, as the prior art records it: "" where the backend runs none (bwrap, local).
    image: backend === 'docker' ? image : backend === null ? null : '',
    docs_pages_read: terminal?.type === 'run.completed' && Array.isArray(t.docs_pages_read) ? (t.docs_pages_read as string[]) : pages,
    suspect_page: passed ? null : terminal?.type === 'run.completed' ? str(t.suspect_page) : (pages.at(-1) ?? null),
    docs_bypass_attempts: bypass,
    success_check: check ? { exit_code: check.exit_code, output: tailChars(check.output, CHECK_OUTPUT_CHARS) } : null,
    tokens: usage.tokens,
    run_id: runId,
    label,
    stream: `${stream.slug}/${stream.attempt}/events.ndjson`,
    source,
    outcome: { ended, detail, failed_stage: failedStage, signal, check_reason: check ? check.reason : null },
    final_text: finalText === null ? null : headChars(finalText, FINAL_TEXT_CHARS),
    affordances: policy === null && probe === null && withheld.length === 0 ? null : { policy, entrypoint: probe?.entrypoint ?? null, found: probe?.found ?? null, withheld },
    egress: { ...egress, allowed_hosts: byCount(egress.allowed_hosts), blocked_hosts: byCount(egress.blocked_hosts), error_hosts: byCount(egress.error_hosts) },
    sandbox: { limits, denials, denied_paths: byCount(deniedPaths), limit_hits: byCount(limitHits), workspace_bytes: workspaceBytes, kept },
    retries,
    reasoning_tokens: usage.reasoning,
    estimated_cost_usd: usd,
  };
}

/** A `{name: count}` map from another tool's document: its entries with a finite number, nothing else. */
export function countsIn(v: unknown): Record<string, number> {
  const given = typeof v === 'object' && v !== null && !Array.isArray(v) ? Object.entries(v) : [];
  return Object.fromEntries(given.filter((e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1])));
}

/**
 * Where to look first: each docs-gap run's suspect page, counted, most frequent first. A document's
 * `suspect_pages` (kept as the prior art defines it) counts every run that did not pass, an
 * inconclusive one too (a refused host, a harness error), whose last page says nothing about the docs.
 * A document with no usable runs gives its `suspect_pages` as they are.
 */
export function gapPages(t: { runs?: unknown; suspect_pages?: unknown }): Record<string, number> {
  const runs = Array.isArray(t.runs) ? t.runs.filter((r): r is Record<string, unknown> => typeof r === 'object' && r !== null && typeof (r as Record<string, unknown>).classification === 'string') : [];
  if (runs.length === 0) return byCount(countsIn(t.suspect_pages));
  const pages = tally();
  for (const r of runs) if (r.classification === 'docs_gap' && typeof r.suspect_page === 'string') bump(pages, r.suspect_page);
  return byCount(pages);
}

/** Is a classification inconclusive (neither evidence nor a skip)? Interrupted runs are. */
export function isInconclusive(classification: string): boolean {
  return INCONCLUSIVE.has(classification) || classification === 'interrupted';
}

const sumCost = (runs: readonly { estimated_cost_usd: number | null }[]): number | null =>
  runs.length > 0 && runs.every((r) => r.estimated_cost_usd === null) ? null : round6(runs.reduce((s, r) => s + (r.estimated_cost_usd ?? 0), 0));
const round6 = (n: number): number => Math.round(n * 1e6) / 1e6;

function foldTask(slug: string, runs: RunResult[], name?: string): TaskResult {
  const passes = runs.filter((r) => r.classification === 'passed').length;
  const failures = runs.filter((r) => r.classification === 'docs_gap').length;
  const evidential = passes + failures;
  const discarded = tally();
  const suspects = tally();
  for (const r of runs) {
    if (r.classification !== 'passed' && r.classification !== 'docs_gap' && r.classification !== 'skipped') bump(discarded, r.classification);
    if (!r.passed && r.suspect_page !== null) bump(suspects, r.suspect_page);
  }
  const agents = sorted(runs.flatMap((r) => (r.agent === null ? [] : [r.agent])));
  return {
    task: runs[0]?.task ?? name ?? slug,
    agent: runs.find((r) => r.agent !== null)?.agent ?? null,
    attempts: runs.length,
    passes,
    evidential_runs: evidential,
    pass_rate: evidential === 0 ? null : passes / evidential,
    discarded: Object.fromEntries(Object.entries(discarded).sort(([a], [b]) => (a < b ? -1 : 1))),
    skipped: runs.filter((r) => r.classification === 'skipped').length,
    models_reported: sorted(runs.flatMap((r) => (r.model_reported === '' ? [] : [r.model_reported]))),
    suspect_pages: byCount(suspects),
    tokens: runs.reduce((s, r) => addTokens(s, r.tokens), zero()),
    estimated_cost_usd: sumCost(runs),
    runs,
    slug,
    not_run: 0,
    failures,
    flaky: passes > 0 && failures > 0,
    pass_rate_interval: evidential === 0 ? null : wilson(passes, evidential),
    agents,
    unpriced_models: sorted(runs.flatMap((r) => (r.estimated_cost_usd === null && r.model_reported !== '' ? [r.model_reported] : []))),
  };
}

/**
 * The whole document from the attempts' streams alone: sorted by folder and attempt first, so the
 * order the attempts finished in (workers race) never shows, and `qs results DIR` rebuilds
 * byte-for-byte what `qs run --out DIR` wrote. Nothing here reads the clock or the machine.
 * With the folder's plan, every attempt it assigned that no stream holds is listed as not run, and
 * a task none of whose attempts ran still has its entry (0 attempts, no evidence).
 */
/** `stopped`: a signal stopped the sweep (its stopped.ndjson), so it is interrupted even if no attempt was cut. */
export function foldResults(attempts: readonly AttemptStream[], version: string, plan?: FoldPlan, stopped?: { signal: string } | null): Results {
  const ordered = [...attempts].sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : a.attempt - b.attempt));
  const groups = new Map<string, RunResult[]>();
  let first = Infinity;
  let last = -Infinity;
  for (const a of ordered) {
    const run = foldRun(a);
    // A run whose setup failed never had an agent.started, yet it was an attempt of the sweep's agent:
    // quickstarted's readers take the agent as a string, and JUnit names each testcase after it.
    if (run.agent === null && typeof plan?.agent === 'string') run.agent = plan.agent;
    const list = groups.get(a.slug) ?? [];
    list.push(run);
    groups.set(a.slug, list);
    for (const e of a.events) {
      const t = Date.parse(e.ts);
      if (Number.isFinite(t)) {
        first = Math.min(first, t);
        last = Math.max(last, t);
      }
    }
  }
  const ran = new Set(ordered.map((a) => `${a.slug}#${a.attempt}`));
  const names = new Map((plan?.tasks ?? []).map((t) => [t.slug, t.name]));
  const notRun: NotRun[] = (plan?.assigned ?? [])
    .filter((a) => !ran.has(`${a.slug}#${a.attempt}`))
    .map((a) => ({ task: names.get(a.slug) ?? a.slug, slug: a.slug, attempt: a.attempt }))
    .sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : a.attempt - b.attempt));
  for (const n of notRun) if (!groups.has(n.slug)) groups.set(n.slug, []);
  const tasks = [...groups]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([slug, runs]) => ({ ...foldTask(slug, runs, names.get(slug)), not_run: notRun.filter((n) => n.slug === slug).length }));
  const runs = tasks.flatMap((t) => t.runs);
  const backends = sorted(runs.flatMap((r) => (r.backend === null ? [] : [r.backend])));
  const count = (p: (c: string) => boolean): number => runs.filter((r) => p(r.classification)).length;
  return {
    schema_version: SCHEMA_VERSION,
    quickstarted_version: `quickloop ${version}`,
    generated_at: new Date(Number.isFinite(last) ? last : 0).toISOString().replace(/\.\d+Z$/, 'Z'),
    environment: { python: null, platform: null, hostname: null, backend: backends.length === 1 ? (backends[0] as string) : backends.length === 0 ? null : 'mixed' },
    repeat: plan?.repeat ?? Math.max(0, ...runs.map((r) => r.attempt)),
    duration_seconds: Number.isFinite(first) ? round3((last - first) / 1000) : 0,
    interrupted: (stopped ?? null) !== null || runs.some((r) => r.outcome.ended === 'interrupted'),
    totals: {
      runs: runs.length,
      tokens: runs.reduce((s, r) => addTokens(s, r.tokens), zero()),
      estimated_cost_usd: sumCost(runs),
      unpriced_models: sorted(tasks.flatMap((t) => t.unpriced_models)),
    },
    tasks,
    quickloop_results_version: QUICKLOOP_RESULTS_VERSION,
    quickloop_version: version,
    backends,
    agents: sorted(tasks.flatMap((t) => t.agents)),
    models_reported: sorted(tasks.flatMap((t) => t.models_reported)),
    counts: {
      passed: count((c) => c === 'passed'),
      docs_gap: count((c) => c === 'docs_gap'),
      inconclusive: count((c) => INCONCLUSIVE.has(c)),
      skipped: count((c) => c === 'skipped'),
      interrupted: count((c) => c === 'interrupted'),
      not_run: notRun.length,
    },
    plan_sha256: plan?.plan_sha256 ?? null,
    not_run: notRun,
  };
}

/** The exact bytes of results.json: one serialisation, so a rebuild compares byte for byte. */
export function serialiseResults(results: Results): string {
  return `${JSON.stringify(results, null, 2)}\n`;
}
