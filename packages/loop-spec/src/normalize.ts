// Looper's normalize_spec, check for check: the same defaults, the same messages, the same order.
//
// It mutates the parsed spec in place, as Looper does: later checks see earlier defaults, aliases
// share objects, and the first failure wins. Do not reorder the checks: the order is the contract.
import { SpecError } from './errors.js';
import {
  PyBigInt,
  PyFloat,
  equalsInt,
  get,
  has,
  isDict,
  isInt,
  newDict,
  num,
  pyStr,
  pyStrip,
  setDefault,
  strRepr,
  truthy,
  type PyDict,
  type PyValue,
} from './py.js';
import { ShlexError, shlexSplit } from './shlex.js';
import { DEFAULT_REDACTIONS } from './types.js';
import type { LineIndex } from './yaml-load.js';

export const RESOLVED_SCHEMA_URL = 'https://github.com/ksimback/looper/schema/loop.resolved.v1.json';

export interface NormalizeContext {
  /** The absolute path written to `source`. */
  source: string;
  /** The file name used in error locations. */
  file?: string | undefined;
  lines?: LineIndex | undefined;
  now: Date;
}

type Where = [container: object, key: string | number] | undefined;

/** `YYYY-MM-DDTHH:MM:SS+00:00`, Python's utc isoformat() without microseconds. */
export function compiledAt(now: Date): string {
  return `${now.toISOString().slice(0, 19)}+00:00`;
}

export function normalizeSpec(spec: PyDict, ctx: NormalizeContext): PyDict {
  const fail = (text: string, where?: Where): never => {
    const line = where ? ctx.lines?.get(where[0])?.get(where[1]) : undefined;
    throw new SpecError(text, { file: ctx.file, line });
  };

  const normalizeArgv = (value: PyValue | undefined, field: string, where: Where): string[] => {
    let argv: string[];
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
      argv = value as string[];
    } else if (typeof value === 'string') {
      try {
        argv = shlexSplit(value);
      } catch (error) {
        // Looper crashes with a traceback here; a clear line is the least a compiler owes.
        return fail(`${field} could not be split: ${(error as ShlexError).message}`, where);
      }
    } else {
      return fail(`${field} must be an argv array or string`, where);
    }
    if (argv.length === 0 || pyStrip(argv[0] as string) === '') fail(`${field} must not be empty`, where);
    return argv;
  };

  const validateTimeout = (value: PyValue, field: string, where: Where): number => {
    // An int past 2**53 is a PyBigInt: still an int to Python, so still a valid timeout.
    const big = value instanceof PyBigInt && !value.digits.startsWith('-') && value.digits !== '0';
    if (!big && (typeof value !== 'number' || !Number.isInteger(value) || value <= 0)) fail(`${field} must be a positive integer`, where);
    return value as number;
  };

  const validateRelativePath = (value: PyValue | undefined, field: string, where: Where): void => {
    if (typeof value !== 'string' || pyStrip(value) === '') return fail(`${field} must be a non-empty string`, where);
    const parts = value.split('/').filter((part) => part !== '' && part !== '.');
    if (value.startsWith('/') || parts.includes('..')) {
      fail(`${field} must be a relative path inside the loop directory (got ${strRepr(value)})`, where);
    }
  };

  if (!equalsInt(get(spec, 'version'), 1)) fail('Only loop.yaml version: 1 is supported', [spec, 'version']);

  const goal = get(spec, 'goal');
  if (!isDict(goal)) return fail('goal must be an object', [spec, 'goal']);
  const statement = get(goal, 'statement');
  if (typeof statement !== 'string' || pyStrip(statement) === '') fail('goal.statement is required', [goal, 'statement']);
  const dod = get(goal, 'definition_of_done');
  if (typeof dod !== 'string' || pyStrip(dod) === '') fail('goal.definition_of_done is required', [goal, 'definition_of_done']);

  const rawSources = get(goal, 'context_sources');
  const contextSources = truthy(rawSources) ? (rawSources as PyValue) : [];
  if (!Array.isArray(contextSources)) return fail('goal.context_sources must be a list', [goal, 'context_sources']);
  goal.context_sources = contextSources;
  contextSources.forEach((source, index) => {
    const here: Where = [contextSources, index];
    if (!isDict(source)) return fail('goal.context_sources entries must be objects', here);
    const hasFile = has(source, 'file');
    const hasCmd = has(source, 'cmd');
    if (hasFile === hasCmd) fail(`context_sources[${index}] must have exactly one of file or cmd`, here);
    if (hasFile) validateRelativePath(source.file, `context_sources[${index}].file`, [source, 'file']);
    if (hasCmd) {
      source.cmd = normalizeArgv(source.cmd, `context_sources[${index}].cmd`, [source, 'cmd']);
      source.timeout_sec = validateTimeout(setDefault(source, 'timeout_sec', 60), `context_sources[${index}].timeout_sec`, [source, 'timeout_sec']);
    }
    return undefined;
  });

  // criteria_by_id
  const rawCriteria = get(goal, 'verification');
  const criteriaList = truthy(rawCriteria) ? (rawCriteria as PyValue) : [];
  if (!Array.isArray(criteriaList)) return fail('goal.verification must be a list', [goal, 'verification']);
  const criteria = newDict();
  criteriaList.forEach((item, index) => {
    const here: Where = [criteriaList, index];
    if (!isDict(item)) return fail('Each verification criterion must be an object', here);
    const cid = get(item, 'id');
    const ctype = get(item, 'type');
    if (typeof cid !== 'string' || cid === '') return fail('Each verification criterion needs a non-empty id', here);
    if (has(criteria, cid)) fail(`Duplicate verification criterion id: ${cid}`, [item, 'id']);
    if (ctype !== 'programmatic' && ctype !== 'judge' && ctype !== 'human') fail(`Criterion ${cid} has invalid type: ${pyStr(ctype)}`, [item, 'type']);
    if (ctype === 'programmatic') {
      item.check = normalizeArgv(get(item, 'check'), `criterion ${cid}.check`, [item, 'check']);
      item.timeout_sec = validateTimeout(setDefault(item, 'timeout_sec', 300), `criterion ${cid}.timeout_sec`, [item, 'timeout_sec']);
      const expect = get(item, 'expect');
      if (expect !== 'exit_zero' && expect !== 'exit_nonzero' && expect !== 'stdout_contains') {
        fail(`Criterion ${cid}.expect must be exit_zero, exit_nonzero, or stdout_contains`, has(item, 'expect') ? [item, 'expect'] : here);
      }
      if (expect === 'stdout_contains' && typeof get(item, 'contains') !== 'string') fail(`Criterion ${cid} with stdout_contains needs contains`, here);
    } else if (ctype === 'judge' && typeof get(item, 'rubric') !== 'string') {
      fail(`Criterion ${cid} needs a judge rubric`, here);
    } else if (ctype === 'human' && typeof get(item, 'prompt') !== 'string') {
      fail(`Criterion ${cid} needs a human prompt`, here);
    }
    Object.defineProperty(criteria, cid, { value: item, enumerable: true, writable: true, configurable: true });
    return undefined;
  });

  const host = get(spec, 'host');
  if (!isDict(host)) return fail('host must be an object', [spec, 'host']);
  const hostCli = get(host, 'cli');
  if (typeof hostCli !== 'string' || pyStrip(hostCli) === '') fail('host.cli is required', has(host, 'cli') ? [host, 'cli'] : [spec, 'host']);
  host.invoke = normalizeArgv(get(host, 'invoke'), 'host.invoke', has(host, 'invoke') ? [host, 'invoke'] : [spec, 'host']);
  host.timeout_sec = validateTimeout(setDefault(host, 'timeout_sec', 600), 'host.timeout_sec', [host, 'timeout_sec']);

  // The list is deliberately not written back: Looper leaves `council: null` as null.
  const rawCouncil = get(spec, 'council');
  const councilList = truthy(rawCouncil) ? (rawCouncil as PyValue) : [];
  if (!Array.isArray(councilList)) return fail('council must be a list', [spec, 'council']);
  const members = newDict();
  councilList.forEach((member, index) => {
    const here: Where = [councilList, index];
    if (!isDict(member)) return fail('council entries must be objects', here);
    const mid = get(member, 'id');
    const role = get(member, 'role');
    if (typeof mid !== 'string' || mid === '') return fail('Each council member needs a non-empty id', here);
    if (role !== 'reviewer' && role !== 'judge') fail(`Council member ${mid} role must be reviewer or judge`, has(member, 'role') ? [member, 'role'] : here);
    const cli = get(member, 'cli');
    if (typeof cli !== 'string' || pyStrip(cli) === '') fail(`Council member ${mid} needs a cli name`, has(member, 'cli') ? [member, 'cli'] : here);
    member.invoke = normalizeArgv(get(member, 'invoke'), `council.${mid}.invoke`, has(member, 'invoke') ? [member, 'invoke'] : here);
    member.timeout_sec = validateTimeout(setDefault(member, 'timeout_sec', 600), `council.${mid}.timeout_sec`, [member, 'timeout_sec']);
    setDefault(member, 'scope', ['plan', 'delivery']);
    setDefault(member, 'local', get(member, 'cli') === 'ollama');
    if (has(members, mid)) fail(`Duplicate council member id: ${mid}`, [member, 'id']);
    Object.defineProperty(members, mid, { value: member, enumerable: true, writable: true, configurable: true });
    return undefined;
  });

  const gates = get(spec, 'gates');
  if (!isDict(gates)) return fail('gates must be an object', [spec, 'gates']);
  for (const name of ['plan_gate', 'delivery_gate']) {
    const gate = get(gates, name);
    if (!isDict(gate)) return fail(`${name} must be an object`, has(gates, name) ? [gates, name] : [spec, 'gates']);
    const policy = get(gate, 'verdict_policy');
    if (policy !== 'revise_until_clean' && policy !== 'fixed_passes') {
      fail(`${name}.verdict_policy must be revise_until_clean or fixed_passes`, has(gate, 'verdict_policy') ? [gate, 'verdict_policy'] : [gates, name]);
    }
    // Validated with a default of 1 but never written back: runners then read "absent" as 0.
    const maxRevisions = has(gate, 'max_revisions') ? (gate.max_revisions as PyValue) : 1;
    if (!isInt(maxRevisions) || num(maxRevisions) < 0) fail(`${name}.max_revisions must be a non-negative integer`, [gate, 'max_revisions']);
    const rawGateCriteria = get(gate, 'criteria');
    const gateCriteria = truthy(rawGateCriteria) ? (rawGateCriteria as PyValue) : [];
    if (!Array.isArray(gateCriteria)) return fail(`${name}.criteria must be a list`, [gate, 'criteria']);
    gate.criteria = gateCriteria;
    gateCriteria.forEach((cid, i) => {
      if (typeof cid !== 'string' || !has(criteria, cid)) fail(`${name} references unknown criterion: ${pyStr(cid)}`, [gateCriteria, i]);
    });
    const rawGateMembers = get(gate, 'members');
    const gateMembers = truthy(rawGateMembers) ? (rawGateMembers as PyValue) : [];
    if (!Array.isArray(gateMembers)) return fail(`${name}.members must be a list`, [gate, 'members']);
    gate.members = gateMembers;
    gateMembers.forEach((mid, i) => {
      if (typeof mid !== 'string' || !has(members, mid)) fail(`${name} references unknown council member: ${pyStr(mid)}`, [gateMembers, i]);
    });
    if (policy === 'revise_until_clean') {
      const source = get(gate, 'verdict_source');
      if (source === 'human') continue;
      const where: Where = has(gate, 'verdict_source') ? [gate, 'verdict_source'] : [gates, name];
      if (typeof source !== 'string' || !has(members, source)) return fail(`${name}.verdict_source must be a judge member or human`, where);
      if (get(members[source] as PyDict, 'role') !== 'judge') fail(`${name}.verdict_source must name a judge, not a reviewer`, where);
      if (!gateMembers.includes(source)) fail(`${name}.verdict_source ${strRepr(source)} must also be listed in ${name}.members`, where);
    }
  }

  const control = get(spec, 'loop_control');
  if (!isDict(control)) return fail('loop_control must be an object', [spec, 'loop_control']);
  const maxIterations = get(control, 'max_iterations');
  if (!isInt(maxIterations) || num(maxIterations) <= 0) {
    fail('loop_control.max_iterations must be a positive integer', has(control, 'max_iterations') ? [control, 'max_iterations'] : [spec, 'loop_control']);
  }
  const budget = setDefault(control, 'budget', newDict());
  if (!isDict(budget)) return fail('loop_control.budget must be an object', [control, 'budget']);
  if (!has(budget, 'wall_clock_min')) budget.wall_clock_min = 30;
  for (const key of ['usd', 'tokens', 'wall_clock_min']) {
    const value = get(budget, key);
    if (value === undefined || value === null) continue;
    const numeric = (typeof value === 'number' || value instanceof PyFloat) && num(value) > 0;
    // NaN passes, as in Python (nan <= 0 is false).
    const isNan = value instanceof PyFloat && Number.isNaN(value.value);
    if (!numeric && !isNan) fail(`loop_control.budget.${key} must be a positive number`, [budget, key]);
  }
  const noProgress = setDefault(control, 'no_progress', {
    max_stalled_iterations: 2,
    signals: ['same blocking issue repeats', 'delivery artifact has no material change', 'verifier output is unchanged'],
    action: 'stop',
  });
  if (!isDict(noProgress)) return fail('loop_control.no_progress must be an object', [control, 'no_progress']);
  const stalled = setDefault(noProgress, 'max_stalled_iterations', 2);
  if (!isInt(stalled) || num(stalled) <= 0) fail('loop_control.no_progress.max_stalled_iterations must be a positive integer', [noProgress, 'max_stalled_iterations']);
  const signals = setDefault(noProgress, 'signals', ['same blocking issue repeats']);
  if (!Array.isArray(signals) || !signals.every((s) => typeof s === 'string')) fail('loop_control.no_progress.signals must be a list of strings', [noProgress, 'signals']);
  const action = setDefault(noProgress, 'action', 'stop');
  if (action !== 'stop' && action !== 'human_checkpoint') fail('loop_control.no_progress.action must be stop or human_checkpoint', [noProgress, 'action']);

  const execution = setDefault(spec, 'execution', {
    mode: 'in_session',
    isolation: 'current_workspace',
    side_effects: { requires_approval: true, duplicate_action_check: true },
  });
  if (!isDict(execution)) return fail('execution must be an object', [spec, 'execution']);
  const mode = setDefault(execution, 'mode', 'in_session');
  const isolation = setDefault(execution, 'isolation', 'current_workspace');
  if (mode !== 'in_session' && mode !== 'external_runner' && mode !== 'orchestrated') {
    fail('execution.mode must be in_session, external_runner, or orchestrated', [execution, 'mode']);
  }
  if (isolation !== 'current_workspace' && isolation !== 'branch' && isolation !== 'worktree' && isolation !== 'sandbox') {
    fail('execution.isolation must be current_workspace, branch, worktree, or sandbox', [execution, 'isolation']);
  }
  const sideEffects = setDefault(execution, 'side_effects', newDict());
  if (!isDict(sideEffects)) return fail('execution.side_effects must be an object', [execution, 'side_effects']);
  setDefault(sideEffects, 'requires_approval', true);
  setDefault(sideEffects, 'duplicate_action_check', true);

  const observability = setDefault(spec, 'observability', { state_file: 'state.json', run_log: 'run-log.md', checkpoint_granularity: 'gate' });
  if (!isDict(observability)) return fail('observability must be an object', [spec, 'observability']);
  const stateFile = setDefault(observability, 'state_file', 'state.json');
  const runLog = setDefault(observability, 'run_log', 'run-log.md');
  const granularity = setDefault(observability, 'checkpoint_granularity', 'gate');
  if (typeof stateFile !== 'string' || stateFile === '') fail('observability.state_file must be a non-empty string', [observability, 'state_file']);
  if (typeof runLog !== 'string' || runLog === '') fail('observability.run_log must be a non-empty string', [observability, 'run_log']);
  if (granularity !== 'gate' && granularity !== 'step') fail('observability.checkpoint_granularity must be gate or step', [observability, 'checkpoint_granularity']);

  const workspace = setDefault(spec, 'workspace', newDict());
  if (!isDict(workspace)) return fail('workspace must be an object', [spec, 'workspace']);
  const dir = setDefault(workspace, 'dir', './loop-workspace');
  validateRelativePath(dir, 'workspace.dir', [workspace, 'dir']);
  const layout = setDefault(workspace, 'layout', ['plan.md', 'delivery-{n}.md', 'review-{n}.md', 'state.json', 'run-log.md']);
  if (!Array.isArray(layout) || !layout.every((item) => typeof item === 'string')) return fail('workspace.layout must be a list of strings', [workspace, 'layout']);
  for (const required of [stateFile as string, runLog as string]) {
    if (!layout.includes(required)) layout.push(required);
  }

  const privacy = setDefault(spec, 'privacy', newDict());
  if (!isDict(privacy)) return fail('privacy must be an object', [spec, 'privacy']);
  const egress = setDefault(privacy, 'egress', []);
  if (!Array.isArray(egress)) return fail('privacy.egress must be a list', [privacy, 'egress']);
  egress.forEach((entry, index) => {
    if (!isDict(entry)) return fail('privacy.egress entries must be objects', [egress, index]);
    setDefault(entry, 'redact', [...DEFAULT_REDACTIONS]);
    setDefault(entry, 'consent', 'required');
    return undefined;
  });

  const resolved = newDict();
  const put = (key: string, value: PyValue): void => {
    Object.defineProperty(resolved, key, { value, enumerable: true, writable: true, configurable: true });
  };
  put('$schema', RESOLVED_SCHEMA_URL);
  put('compiled_at', compiledAt(ctx.now));
  put('source', ctx.source);
  for (const key of Object.keys(spec)) put(key, spec[key] as PyValue);
  put('criteria_by_id', criteria);
  put('council_by_id', members);
  return resolved;
}
