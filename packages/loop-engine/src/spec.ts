// Loads a resolved loop spec and checks, before anything runs, every field the runner relies on.
import { basename, dirname, resolve } from 'node:path';
import { InputError, UsageError } from '@quickloop/cli-kit/errors';
import { findPlaceholders, loadResolved, placeholderWarningText, pyStrip, type CouncilMember, type Criterion, type Gate, type GateName, type ModelInvocation, type ResolvedSpec } from '@quickloop/loop-spec';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
// Blank as Python's str.strip() sees it, as the compiler decided: a BOM is text, \x1c-\x1f are not.
const isArgv = (v: unknown): v is string[] => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string') && pyStrip(v[0] as string) !== '';

/** A resolved spec plus where it lives: the loop directory is every subprocess's cwd. */
export interface LoadedSpec {
  spec: ResolvedSpec;
  /** The spec path as given. */
  path: string;
  /** The spec's parent directory, absolute (symlinks resolved). */
  loopDir: string;
  /** True when a loop.yaml was compiled in memory. */
  compiled: boolean;
}

/**
 * loop.resolved.json as Looper (or `loop compile`) wrote it, or loop.yaml compiled in memory by
 * loop-spec; then the runner's own checks, so nothing is guessed and nothing is paid for first.
 */
export function loadSpec(path: string, cwd: string, env?: Record<string, string | undefined>): LoadedSpec {
  const loaded = loadResolved(resolve(cwd, path), env ? { env } : {});
  validateSpec(loaded.spec as unknown as Record<string, unknown>, basename(loaded.path));
  return { spec: loaded.spec, path, loopDir: dirname(loaded.path), compiled: loaded.compiled };
}

/**
 * Every check a runner needs up front (Looper finds a missing `gates` only after the paid plan call).
 * Missing required fields use Looper's wording; the rest name the field and what is wrong with it.
 */
export function validateSpec(spec: Record<string, unknown>, name: string): void {
  countsAsPython(spec);
  function missing(field: string): never {
    throw new InputError(`${name} is missing required field: ${field}`);
  }
  function bad(field: string, what: string): never {
    throw new InputError(`${name}: ${field} ${what}`);
  }
  const goal = spec.goal;
  if (!isObject(goal) || typeof goal.statement !== 'string' || pyStrip(goal.statement) === '') missing('goal.statement');
  const g = goal as Record<string, unknown>;
  if (typeof g.definition_of_done !== 'string') missing('goal.definition_of_done');
  if (g.context_sources !== undefined && g.context_sources !== null && !Array.isArray(g.context_sources)) bad('goal.context_sources', 'must be a list');
  // A hand-written entry the runner cannot read would otherwise fail mid-run, after the workspace exists.
  for (const [i, src] of ((g.context_sources as unknown[] | null | undefined) ?? []).entries()) {
    const field = `goal.context_sources[${i}]`;
    if (!isObject(src) || (src.file === undefined) === (src.cmd === undefined) || (src.file !== undefined && typeof src.file !== 'string')) {
      bad(field, 'must be an object with exactly one of file or cmd');
    }
    if (src.cmd !== undefined && !isArgv(src.cmd)) bad(`${field}.cmd`, 'must be a non-empty argv array of strings');
  }
  const host = spec.host;
  if (!isObject(host) || host.invoke === undefined) missing('host.invoke');
  if (!isArgv((host as Record<string, unknown>).invoke)) bad('host.invoke', 'must be a non-empty argv array of strings');
  const lc = spec.loop_control;
  if (!isObject(lc) || lc.max_iterations === undefined) missing('loop_control.max_iterations');
  const maxIt = (lc as Record<string, unknown>).max_iterations;
  if (typeof maxIt !== 'number' || !Number.isInteger(maxIt) || maxIt < 1) bad('loop_control.max_iterations', 'must be a positive integer');
  const ws = spec.workspace;
  if (!isObject(ws) || typeof ws.dir !== 'string' || ws.dir === '') missing('workspace.dir');
  const council = spec.council_by_id ?? {};
  if (!isObject(council)) bad('council_by_id', 'must be an object');
  for (const [id, m] of Object.entries(council as Record<string, unknown>)) {
    // `host` names the host in consent records, `--consent host` and `privacy.egress[].to`: a member
    // called that would share the host's consent, so it is refused before anything is sent.
    if (id === 'host') bad('council.host', "uses the id 'host', which names the host CLI (its consent, --consent host, privacy.egress to: host); rename the member");
    if (!isObject(m) || !isArgv(m.invoke)) bad(`council.${id}.invoke`, 'must be a non-empty argv array of strings');
    if (m.role !== 'reviewer' && m.role !== 'judge') bad(`council.${id}.role`, 'must be reviewer or judge');
  }
  const criteria = spec.criteria_by_id ?? {};
  if (!isObject(criteria)) bad('criteria_by_id', 'must be an object');
  for (const [id, c] of Object.entries(criteria as Record<string, unknown>)) {
    if (!isObject(c)) bad(`criterion ${id}`, 'must be an object');
    if (c.type === 'programmatic' && !isArgv(c.check)) bad(`criterion ${id}.check`, 'must be a non-empty argv array of strings');
  }
  const gates = spec.gates;
  for (const gate of ['plan_gate', 'delivery_gate'] as const) {
    if (!isObject(gates) || !isObject(gates[gate])) missing(`gates.${gate}`);
    const gt = (gates as Record<string, Record<string, unknown>>)[gate] as Record<string, unknown>;
    if (gt.verdict_policy !== 'revise_until_clean' && gt.verdict_policy !== 'fixed_passes') bad(`${gate}.verdict_policy`, 'must be revise_until_clean or fixed_passes');
    for (const key of ['members', 'criteria'] as const) {
      const list = gt[key] ?? [];
      if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) bad(`${gate}.${key}`, 'must be a list of ids');
      const known = key === 'members' ? (council as Record<string, unknown>) : (criteria as Record<string, unknown>);
      for (const id of list as string[]) if (!Object.hasOwn(known, id)) bad(`${gate}.${key}`, `references unknown ${key === 'members' ? 'council member' : 'criterion'}: ${id}`);
    }
    if (gt.verdict_policy === 'revise_until_clean') {
      const src = gt.verdict_source;
      if (src !== 'human' && (typeof src !== 'string' || !Object.hasOwn(council as Record<string, unknown>, src))) bad(`${gate}.verdict_source`, 'must be a judge member or human');
      if (src !== 'human' && (council as Record<string, Record<string, unknown>>)[src as string]!.role !== 'judge') bad(`${gate}.verdict_source`, 'must name a judge, not a reviewer');
    }
    const mr = gt.max_revisions;
    if (mr !== undefined && (typeof mr !== 'number' || !Number.isInteger(mr) || mr < 0)) bad(`${gate}.max_revisions`, 'must be a non-negative integer');
  }
}

/**
 * Python's bools are ints, so Looper's compiler passes `max_iterations: yes`, `max_revisions: no`
 * and `max_stalled_iterations: on`, and its runner counts them as 1 and 0. They become those
 * numbers here, before the checks, so a spec either compiler wrote runs as Looper runs it.
 */
function countsAsPython(spec: Record<string, unknown>): void {
  const asInt = (holder: unknown, key: string): void => {
    if (isObject(holder) && typeof holder[key] === 'boolean') holder[key] = holder[key] ? 1 : 0;
  };
  const lc = spec.loop_control;
  asInt(lc, 'max_iterations');
  if (isObject(lc)) asInt(lc.no_progress, 'max_stalled_iterations');
  if (isObject(spec.gates)) for (const gate of ['plan_gate', 'delivery_gate']) asInt(spec.gates[gate], 'max_revisions');
}

/**
 * A template's `{{TOKEN}}` left in would be sent to a paid model as is: the runner and loop-gate
 * refuse it before any call (loading alone accepts it, as compile and lint only warn).
 */
export function refusePlaceholders(loaded: LoadedSpec): void {
  const placeholders = findPlaceholders(loaded.spec as unknown as Parameters<typeof findPlaceholders>[0]);
  if (placeholders.length > 0) throw new InputError(`${basename(loaded.path)}: ${placeholderWarningText(placeholders)}`);
}

/** `--consent ID` must name the host or a council member: a typo would otherwise be ignored and the run refused later. */
export function checkConsentIds(spec: ResolvedSpec, ids: readonly string[]): void {
  const known = ['host', ...Object.keys(spec.council_by_id ?? {})];
  for (const id of ids) if (!known.includes(id)) throw new UsageError(`--consent ${id} names no council member (known: ${known.join(', ')})`);
}

export const gateOf = (spec: ResolvedSpec, gate: GateName): Gate => spec.gates[gate];
// Own keys only: `constructor` or `toString` is an id like any other, never a property of Object.prototype.
export const member = (spec: ResolvedSpec, id: string): CouncilMember | undefined => (Object.hasOwn(spec.council_by_id ?? {}, id) ? spec.council_by_id![id] : undefined);
export const criterion = (spec: ResolvedSpec, id: string): Criterion | undefined => (Object.hasOwn(spec.criteria_by_id ?? {}, id) ? spec.criteria_by_id[id] : undefined);
export const hostOf = (spec: ResolvedSpec): ModelInvocation => spec.host;

/**
 * Looper's compiler validates max_revisions with a default of 1 but never writes it back, and its
 * runner then uses 0; the documented default is 1, so that is what an absent key means here.
 */
export const maxRevisions = (gate: Gate): number => (typeof gate.max_revisions === 'number' ? gate.max_revisions : 1);

/** Seconds → ms for a timeout, with the compiler's default when a hand-written spec omits it. */
export const timeoutMs = (value: unknown, fallbackSec: number): number => (typeof value === 'number' && value > 0 ? value : fallbackSec) * 1000;
