// A sweep's plan: its identity (plan_sha256), its attempts in order, and the share of them one
// folder runs — a static shard, all of them, or a fleet's queue. Shards, the fleet and `qs merge`
// all compute it here, so two machines given the same tasks and flags agree on it with no talk.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, UsageError } from '@quickloop/cli-kit';
import { parseLine } from '@quickloop/events';

export interface PlanTask {
  name: string;
  /** Its folder under --out. */
  slug: string;
  /** The task file as given. */
  source: string;
  /** sha256 of the task file. */
  sha256: string;
  /** sha256 of the project config merged under it, if any. */
  config_sha256: string | null;
}

export interface PlanInput {
  tasks: PlanTask[];
  repeat: number;
  agent: string;
  model: string | null;
  versions: Record<string, string>;
}

export interface AttemptRef {
  slug: string;
  attempt: number;
}

export type Share = { kind: 'shard'; index: number; total: number } | { kind: 'all' } | { kind: 'queue'; queue: string };

/** The payload of a `sweep.plan` event (the envelope is added by planEvent). */
export interface SweepPlan extends PlanInput {
  plan_sha256: string;
  attempts: number;
  share: Share;
  assigned: AttemptRef[];
}

/** JSON with every object's keys sorted: one text per value, whatever order it was built in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The sweep's identity. A task's `source` path is left out: runners check a repository out at
 * different paths, and the file's sha256 already says what the task is.
 */
export function planSha256(input: PlanInput): string {
  const identity = {
    tasks: input.tasks.map((t) => ({ name: t.name, slug: t.slug, sha256: t.sha256, config_sha256: t.config_sha256 })),
    repeat: input.repeat,
    agent: input.agent,
    model: input.model,
    versions: input.versions,
  };
  return createHash('sha256').update(canonicalJson(identity)).digest('hex');
}

/** Every attempt of the plan, attempt-major (every task's first, then every second…), as qs run sends them out. */
export function planAttempts(tasks: readonly { slug: string }[], repeat: number): AttemptRef[] {
  return Array.from({ length: repeat }, (_, a) => tasks.map((t) => ({ slug: t.slug, attempt: a + 1 }))).flat();
}

/**
 * The attempts of one shard, in plan order. Without durations, round-robin over the plan order;
 * with them (expected seconds per task slug), greedy longest-processing-time onto `total` bins:
 * longest first (ties: plan order), each onto the least-loaded bin (ties: the lowest index). A
 * task with no known duration is expected to take the mean of the known ones (1 s if none is).
 */
export function shardAttempts(all: readonly AttemptRef[], index: number, total: number, durations?: ReadonlyMap<string, number>): AttemptRef[] {
  if (durations === undefined || durations.size === 0) return all.filter((_, i) => i % total === index - 1);
  const known = [...durations.values()].filter((d) => Number.isFinite(d) && d >= 0);
  const fallback = known.length > 0 ? known.reduce((s, d) => s + d, 0) / known.length : 1;
  const expected = (slug: string): number => {
    const d = durations.get(slug);
    return d !== undefined && Number.isFinite(d) && d >= 0 ? d : fallback;
  };
  const order = all.map((a, i) => ({ i, d: expected(a.slug) })).sort((x, y) => y.d - x.d || x.i - y.i);
  const load = new Array<number>(total).fill(0);
  const bin = new Array<number>(all.length);
  for (const { i, d } of order) {
    let best = 0;
    for (let b = 1; b < total; b += 1) if ((load[b] as number) < (load[best] as number)) best = b;
    load[best] = (load[best] as number) + d;
    bin[i] = best;
  }
  return all.filter((_, i) => bin[i] === index - 1);
}

/** A plan's tasks from the task.loaded events qs-validate wrote (what `loadTasks` returns). */
export function planTasksOf(tasks: readonly { slug: string; name: string; lines: readonly Record<string, unknown>[] }[]): PlanTask[] {
  return tasks.map((t) => {
    const loaded = t.lines.find((e) => e.type === 'task.loaded') ?? {};
    const source = (loaded.source ?? {}) as { path?: unknown; sha256?: unknown; config?: { sha256?: unknown } };
    return {
      name: t.name,
      slug: t.slug,
      source: typeof source.path === 'string' ? source.path : '-',
      sha256: typeof source.sha256 === 'string' ? source.sha256 : '',
      config_sha256: typeof source.config?.sha256 === 'string' ? source.config.sha256 : null,
    };
  });
}

/** The whole plan for one folder: the attempts it is to run under `share`. */
export function sweepPlan(input: PlanInput, share: Share, durations?: ReadonlyMap<string, number>): SweepPlan {
  const all = planAttempts(input.tasks, input.repeat);
  const assigned = share.kind === 'shard' ? shardAttempts(all, share.index, share.total, durations) : all;
  return { plan_sha256: planSha256(input), ...input, attempts: all.length, share, assigned };
}

/** The plan as the one line of `DIR/plan.ndjson` (a `sweep.plan` event). */
export function planEvent(plan: SweepPlan, ts: string, runId = 'sweep'): Record<string, unknown> {
  return {
    v: 1,
    type: 'sweep.plan',
    ts,
    run_id: runId,
    stage: 'qs',
    plan_sha256: plan.plan_sha256,
    tasks: plan.tasks,
    repeat: plan.repeat,
    agent: plan.agent,
    model: plan.model,
    versions: plan.versions,
    attempts: plan.attempts,
    share: plan.share,
    assigned: plan.assigned,
  };
}

/** The file at the head of an --out folder. */
export const PLAN_FILE = 'plan.ndjson';

/** More attempts than any sweep makes; a plan of more is a broken document. */
const MAX_PLAN_ATTEMPTS = 1_000_000;

/** The one event of a sweep's own file (`DIR/NAME`), of the type it must be; null when there is no such file. */
function oneEvent(dir: string, name: string, type: string, shown: string): { event: Record<string, unknown>; where: string; n: number } | null {
  const file = join(dir, name);
  if (!existsSync(file)) return null;
  const where = join(shown, name);
  if (!statSync(file).isFile()) throw new InputError(`${where}: is not a file`);
  const lines = readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .map((raw, i) => ({ raw, n: i + 1 }))
    .filter((l) => l.raw.trim() !== '');
  if (lines.length !== 1) throw new InputError(`${where}: expected one ${type} line, found ${lines.length}`);
  const { raw, n } = lines[0] as { raw: string; n: number };
  const event = parseLine(raw, n, where).event as unknown as Record<string, unknown>;
  if (event.type !== type) throw new InputError(`${where}:${n}: expected a ${type} event, found ${String(event.type)}`);
  return { event, where, n };
}

/**
 * A folder's plan, or null when it has none (a folder from before plans). A plan that is not one
 * valid `sweep.plan` line, or whose plan_sha256 is not that of its own content (edited by hand), is
 * refused: two folders could otherwise claim one sweep.
 */
export function readPlan(dir: string, shown = dir): SweepPlan | null {
  const line = oneEvent(dir, PLAN_FILE, 'sweep.plan', shown);
  if (line === null) return null;
  const { event, where, n } = line;
  const plan = event as unknown as SweepPlan;
  if (planSha256(plan) !== plan.plan_sha256) throw new InputError(`${where}:${n}: plan_sha256 is not the sha256 of this plan's tasks, repeat, agent, model and versions (edited?)`);
  // Checked before the attempts are listed: a hand-made plan's repeat would otherwise exhaust the heap.
  if (plan.tasks.length * plan.repeat > MAX_PLAN_ATTEMPTS) throw new InputError(`${where}:${n}: attempts: ${plan.tasks.length} tasks × repeat ${plan.repeat} is more than qs reads (at most ${MAX_PLAN_ATTEMPTS})`);
  const all = planAttempts(plan.tasks, plan.repeat);
  if (plan.attempts !== all.length) throw new InputError(`${where}:${n}: attempts: ${plan.attempts}, but ${plan.tasks.length} tasks × repeat ${plan.repeat} is ${all.length}`);
  const slugs = new Set(plan.tasks.map((t) => t.slug));
  if (slugs.size !== plan.tasks.length) throw new InputError(`${where}:${n}: tasks: two tasks share a slug`);
  const seen = new Set<string>();
  for (const [i, a] of plan.assigned.entries()) {
    const k = `${a.slug}#${a.attempt}`;
    if (!slugs.has(a.slug) || a.attempt > plan.repeat || seen.has(k)) throw new InputError(`${where}:${n}: assigned[${i}]: ${k} is not an attempt of the plan (or is listed twice)`);
    seen.add(k);
  }
  return plan;
}

/** Beside plan.ndjson when a signal stopped the sweep before its share was run: one `sweep.stopped` line. */
export const STOP_FILE = 'stopped.ndjson';

/** The `sweep.stopped` line of a folder a signal stopped (`recorded` of its `assigned` attempts in it). */
export function stopEvent(signal: string, recorded: number, assigned: number, ts: string): Record<string, unknown> {
  return { v: 1, type: 'sweep.stopped', ts, run_id: 'sweep', stage: 'qs', signal, recorded, assigned };
}

/** The signal that stopped a folder's sweep (its stopped.ndjson), or null when nothing did. */
export function readStop(dir: string, shown = dir): { signal: string } | null {
  const line = oneEvent(dir, STOP_FILE, 'sweep.stopped', shown);
  return line === null ? null : { signal: String(line.event.signal) };
}

/** The CI index variables `--shard auto` reads, in the order they are looked for. */
export const SHARD_VARIABLES = [
  { index: 'JOB_COMPLETION_INDEX', base: 0, total: null, ci: 'Kubernetes Indexed Job' },
  { index: 'CI_NODE_INDEX', base: 1, total: 'CI_NODE_TOTAL', ci: 'GitLab parallel' },
  { index: 'AWS_BATCH_JOB_ARRAY_INDEX', base: 0, total: null, ci: 'AWS Batch array job' },
] as const;
/** Where the total comes from when the CI sets no variable for it and `auto/N` does not say. */
export const SHARD_TOTAL_VARIABLE = 'QS_SHARD_TOTAL';
const MAX_SHARDS = 10000;

export interface ShardSpec {
  /** 1-based. */
  index: number;
  total: number;
  /** Where the index came from: `--shard` or a variable's name. */
  from: string;
}

const whole = (text: string): number | null => (/^\d{1,9}$/.test(text) ? Number(text) : null);

/**
 * `--shard i/N` (1-based), `--shard auto` or `--shard auto/N` read from the CI's variables. Every
 * malformed or contradictory spec is a usage error naming what was wrong.
 */
export function parseShard(spec: string, env: Readonly<Record<string, string | undefined>>): ShardSpec {
  const bad = (why: string): UsageError => new UsageError(`qs run: --shard ${spec}: ${why}`);
  const m = /^(auto|\d+)(?:\/(\d+))?$/.exec(spec.trim());
  if (m === null) throw bad('expected INDEX/TOTAL (1-based, e.g. 2/3), auto or auto/TOTAL');
  const totalGiven = m[2] === undefined ? null : whole(m[2]);
  if (m[2] !== undefined && (totalGiven === null || totalGiven < 1 || totalGiven > MAX_SHARDS)) throw bad(`the total must be a whole number from 1 to ${MAX_SHARDS}`);
  if (m[1] !== 'auto') {
    if (totalGiven === null) throw bad('give the total too, as INDEX/TOTAL (e.g. 1/3)');
    const index = whole(m[1] as string);
    if (index === null || index < 1 || index > totalGiven) throw bad(`the index must be from 1 to ${totalGiven} (shards count from 1)`);
    return { index, total: totalGiven, from: '--shard' };
  }
  const set = SHARD_VARIABLES.filter((v) => env[v.index] !== undefined && env[v.index] !== '');
  if (set.length === 0) {
    throw bad(`none of ${SHARD_VARIABLES.map((v) => v.index).join(', ')} is set (in a GitHub Actions matrix give --shard \${{ matrix.shard }}/\${{ strategy.job-total }})`);
  }
  if (set.length > 1) throw bad(`${set.map((v) => v.index).join(' and ')} are both set; give --shard INDEX/TOTAL`);
  const v = set[0] as (typeof SHARD_VARIABLES)[number];
  const raw = env[v.index] as string;
  const n = whole(raw);
  if (n === null) throw bad(`${v.index}=${JSON.stringify(raw)} is not a whole number`);
  let total = totalGiven;
  if (v.total !== null && env[v.total] !== undefined && env[v.total] !== '') {
    const t = whole(env[v.total] as string);
    if (t === null || t < 1 || t > MAX_SHARDS) throw bad(`${v.total}=${JSON.stringify(env[v.total])} is not a whole number from 1 to ${MAX_SHARDS}`);
    if (total !== null && total !== t) throw bad(`${v.total}=${t} says ${t} shards, the spec says ${total}`);
    total = t;
  }
  if (total === null) {
    const t = env[SHARD_TOTAL_VARIABLE];
    if (t === undefined || t === '') throw bad(`${v.index} gives the index only; give the total as auto/TOTAL or in ${SHARD_TOTAL_VARIABLE}`);
    total = whole(t);
    if (total === null || total < 1 || total > MAX_SHARDS) throw bad(`${SHARD_TOTAL_VARIABLE}=${JSON.stringify(t)} is not a whole number from 1 to ${MAX_SHARDS}`);
  }
  const index = n - v.base + 1;
  if (index < 1 || index > total) throw bad(`${v.index}=${n} is outside ${total} shards (${v.ci} indexes count from ${v.base})`);
  return { index, total, from: v.index };
}

/**
 * Expected seconds per task from an earlier results document (`--durations`): each task's mean run
 * duration, keyed by its slug (and by its name, for a results.json that has no slugs).
 */
export function durationsFromResults(doc: { tasks: readonly { task: string; slug?: string; runs?: readonly { duration_seconds?: unknown }[] }[] }): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of doc.tasks) {
    const ds = (t.runs ?? []).map((r) => r.duration_seconds).filter((d): d is number => typeof d === 'number' && Number.isFinite(d) && d >= 0);
    if (ds.length === 0) continue;
    const mean = ds.reduce((s, d) => s + d, 0) / ds.length;
    if (!out.has(t.task)) out.set(t.task, mean);
    if (t.slug !== undefined) out.set(t.slug, mean);
  }
  return out;
}

/** Durations keyed by each plan task's slug, found by slug or else by name. */
export function planDurations(tasks: readonly { slug: string; name: string }[], byKey: ReadonlyMap<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of tasks) {
    const d = byKey.get(t.slug) ?? byKey.get(t.name);
    if (d !== undefined) out.set(t.slug, d);
  }
  return out;
}

/** A shard's part of a spend cap: cap/N rounded down to a micro-dollar, so N shards never spend more than the cap between them. */
export function spendShare(cap: number, total: number): number {
  return Math.floor((cap * 1e6) / total) / 1e6;
}
