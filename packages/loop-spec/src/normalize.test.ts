// Every compile error of Looper's compiler: its exact text, and which one wins when several apply.
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { compileSpec } from './compile.js';
import { SpecError } from './errors.js';

type Spec = Record<string, any>;

/** A valid spec touching every section; each case breaks one thing in a fresh copy. */
function base(): Spec {
  return {
    version: 1,
    goal: {
      statement: 'Write the thing.',
      definition_of_done: 'The thing exists.',
      context_sources: [{ file: 'inputs/notes.md' }, { cmd: ['git', 'log', '-1'] }],
      verification: [
        { id: 'shape', type: 'programmatic', check: ['node', 'check.mjs'], expect: 'exit_zero' },
        { id: 'good', type: 'judge', rubric: 'It is good.' },
        { id: 'ok', type: 'human', prompt: 'Is it ok?' },
      ],
    },
    host: { cli: 'codex', invoke: ['codex', 'exec'] },
    council: [
      { id: 'judge-1', role: 'judge', cli: 'claude', invoke: ['claude', '-p'] },
      { id: 'rev-1', role: 'reviewer', cli: 'gemini', invoke: ['gemini', '-p'] },
    ],
    gates: {
      plan_gate: { verdict_policy: 'revise_until_clean', verdict_source: 'judge-1', members: ['judge-1'], criteria: ['good'], max_revisions: 1 },
      delivery_gate: { verdict_policy: 'revise_until_clean', verdict_source: 'judge-1', members: ['judge-1', 'rev-1'], criteria: ['shape', 'good', 'ok'], max_revisions: 2 },
    },
    loop_control: { max_iterations: 3, budget: { usd: 1, tokens: 1000 }, no_progress: { max_stalled_iterations: 2 } },
    execution: { mode: 'external_runner' },
    observability: { state_file: 'state.json' },
    workspace: { dir: './loop-workspace' },
    privacy: { egress: [{ to: 'judge-1' }] },
  };
}

function compileError(spec: Spec | string): SpecError {
  const text = typeof spec === 'string' ? spec : stringify(spec);
  try {
    compileSpec(text, { path: '/loops/x/loop.yaml', now: new Date('2026-01-01T00:00:00Z') });
  } catch (error) {
    if (error instanceof SpecError) return error;
    throw error;
  }
  throw new Error('expected a SpecError, but the spec compiled');
}

const cases: [string, (s: Spec) => void, string][] = [
  ['version 2', (s) => (s.version = 2), 'Only loop.yaml version: 1 is supported'],
  ['no version', (s) => delete s.version, 'Only loop.yaml version: 1 is supported'],
  ['goal a string', (s) => (s.goal = 'x'), 'goal must be an object'],
  ['no statement', (s) => delete s.goal.statement, 'goal.statement is required'],
  ['blank statement', (s) => (s.goal.statement = '   '), 'goal.statement is required'],
  ['no definition_of_done', (s) => (s.goal.definition_of_done = 5), 'goal.definition_of_done is required'],
  ['context_sources a mapping', (s) => (s.goal.context_sources = { a: 1 }), 'goal.context_sources must be a list'],
  ['context source a string', (s) => (s.goal.context_sources = ['x']), 'goal.context_sources entries must be objects'],
  ['both file and cmd', (s) => (s.goal.context_sources[1].file = 'a.md'), 'context_sources[1] must have exactly one of file or cmd'],
  ['neither file nor cmd', (s) => (s.goal.context_sources = [{ timeout_sec: 3 }]), 'context_sources[0] must have exactly one of file or cmd'],
  ['empty file', (s) => (s.goal.context_sources[0].file = ' '), 'context_sources[0].file must be a non-empty string'],
  ['absolute file', (s) => (s.goal.context_sources[0].file = '/etc/passwd'), "context_sources[0].file must be a relative path inside the loop directory (got '/etc/passwd')"],
  ['file escaping', (s) => (s.goal.context_sources[0].file = '../../outside.md'), "context_sources[0].file must be a relative path inside the loop directory (got '../../outside.md')"],
  ['cmd a number', (s) => (s.goal.context_sources[1].cmd = 5), 'context_sources[1].cmd must be an argv array or string'],
  ['cmd with a non-string', (s) => (s.goal.context_sources[1].cmd = ['ls', 1]), 'context_sources[1].cmd must be an argv array or string'],
  ['cmd empty list', (s) => (s.goal.context_sources[1].cmd = []), 'context_sources[1].cmd must not be empty'],
  ['cmd blank string', (s) => (s.goal.context_sources[1].cmd = '   '), 'context_sources[1].cmd must not be empty'],
  ['cmd blank argv0', (s) => (s.goal.context_sources[1].cmd = [' ', 'x']), 'context_sources[1].cmd must not be empty'],
  ['cmd unclosed quote', (s) => (s.goal.context_sources[1].cmd = 'git "log'), 'context_sources[1].cmd could not be split: No closing quotation'],
  ['cmd timeout 0', (s) => (s.goal.context_sources[1].timeout_sec = 0), 'context_sources[1].timeout_sec must be a positive integer'],
  ['cmd timeout a bool', (s) => (s.goal.context_sources[1].timeout_sec = true), 'context_sources[1].timeout_sec must be a positive integer'],
  ['cmd timeout a float', (s) => (s.goal.context_sources[1].timeout_sec = 1.5), 'context_sources[1].timeout_sec must be a positive integer'],
  ['verification a mapping', (s) => (s.goal.verification = { a: 1 }), 'goal.verification must be a list'],
  ['criterion a number', (s) => (s.goal.verification = [5]), 'Each verification criterion must be an object'],
  ['criterion without id', (s) => delete s.goal.verification[1].id, 'Each verification criterion needs a non-empty id'],
  ['criterion with a numeric id', (s) => (s.goal.verification[1].id = 7), 'Each verification criterion needs a non-empty id'],
  ['duplicate criterion', (s) => (s.goal.verification[2].id = 'good'), 'Duplicate verification criterion id: good'],
  ['bad criterion type', (s) => (s.goal.verification[1].type = 'vibe'), 'Criterion good has invalid type: vibe'],
  ['missing criterion type', (s) => delete s.goal.verification[1].type, 'Criterion good has invalid type: None'],
  ['check missing', (s) => delete s.goal.verification[0].check, 'criterion shape.check must be an argv array or string'],
  ['check empty', (s) => (s.goal.verification[0].check = []), 'criterion shape.check must not be empty'],
  ['check timeout', (s) => (s.goal.verification[0].timeout_sec = -1), 'criterion shape.timeout_sec must be a positive integer'],
  ['expect missing', (s) => delete s.goal.verification[0].expect, 'Criterion shape.expect must be exit_zero, exit_nonzero, or stdout_contains'],
  ['stdout_contains without contains', (s) => (s.goal.verification[0].expect = 'stdout_contains'), 'Criterion shape with stdout_contains needs contains'],
  ['judge without rubric', (s) => delete s.goal.verification[1].rubric, 'Criterion good needs a judge rubric'],
  ['human without prompt', (s) => (s.goal.verification[2].prompt = ['?']), 'Criterion ok needs a human prompt'],
  ['host a list', (s) => (s.host = []), 'host must be an object'],
  ['host without cli', (s) => delete s.host.cli, 'host.cli is required'],
  ['host without invoke', (s) => delete s.host.invoke, 'host.invoke must be an argv array or string'],
  ['host empty invoke', (s) => (s.host.invoke = []), 'host.invoke must not be empty'],
  ['host timeout', (s) => (s.host.timeout_sec = 0), 'host.timeout_sec must be a positive integer'],
  ['council a mapping', (s) => (s.council = { a: 1 }), 'council must be a list'],
  ['council entry a string', (s) => (s.council = ['judge-1']), 'council entries must be objects'],
  ['member without id', (s) => delete s.council[0].id, 'Each council member needs a non-empty id'],
  ['member with a bad role', (s) => (s.council[0].role = 'boss'), 'Council member judge-1 role must be reviewer or judge'],
  ['member without cli', (s) => (s.council[0].cli = ''), 'Council member judge-1 needs a cli name'],
  ['member invoke a number', (s) => (s.council[0].invoke = 3), 'council.judge-1.invoke must be an argv array or string'],
  ['member empty invoke', (s) => (s.council[0].invoke = []), 'council.judge-1.invoke must not be empty'],
  ['member timeout', (s) => (s.council[0].timeout_sec = '10'), 'council.judge-1.timeout_sec must be a positive integer'],
  ['duplicate member', (s) => (s.council[1].id = 'judge-1'), 'Duplicate council member id: judge-1'],
  ['gates a number', (s) => (s.gates = 1), 'gates must be an object'],
  ['no plan gate', (s) => delete s.gates.plan_gate, 'plan_gate must be an object'],
  ['delivery gate a string', (s) => (s.gates.delivery_gate = 'x'), 'delivery_gate must be an object'],
  ['bad policy', (s) => (s.gates.plan_gate.verdict_policy = 'vibes'), 'plan_gate.verdict_policy must be revise_until_clean or fixed_passes'],
  ['negative max_revisions', (s) => (s.gates.plan_gate.max_revisions = -1), 'plan_gate.max_revisions must be a non-negative integer'],
  ['null max_revisions', (s) => (s.gates.delivery_gate.max_revisions = null), 'delivery_gate.max_revisions must be a non-negative integer'],
  ['float max_revisions', (s) => (s.gates.plan_gate.max_revisions = 1.5), 'plan_gate.max_revisions must be a non-negative integer'],
  ['gate criteria a string', (s) => (s.gates.plan_gate.criteria = 'good'), 'plan_gate.criteria must be a list'],
  ['unknown criterion', (s) => s.gates.delivery_gate.criteria.push('nope'), 'delivery_gate references unknown criterion: nope'],
  ['gate members a string', (s) => (s.gates.plan_gate.members = 'judge-1'), 'plan_gate.members must be a list'],
  ['unknown member', (s) => s.gates.plan_gate.members.push('ghost'), 'plan_gate references unknown council member: ghost'],
  ['no verdict source', (s) => delete s.gates.plan_gate.verdict_source, 'plan_gate.verdict_source must be a judge member or human'],
  ['unknown verdict source', (s) => (s.gates.plan_gate.verdict_source = 'ghost'), 'plan_gate.verdict_source must be a judge member or human'],
  ['reviewer as verdict source', (s) => (s.gates.delivery_gate.verdict_source = 'rev-1'), 'delivery_gate.verdict_source must name a judge, not a reviewer'],
  ['verdict source not a member', (s) => (s.gates.plan_gate.members = []), "plan_gate.verdict_source 'judge-1' must also be listed in plan_gate.members"],
  ['loop_control a number', (s) => (s.loop_control = 1), 'loop_control must be an object'],
  ['max_iterations 0', (s) => (s.loop_control.max_iterations = 0), 'loop_control.max_iterations must be a positive integer'],
  ['max_iterations missing', (s) => delete s.loop_control.max_iterations, 'loop_control.max_iterations must be a positive integer'],
  ['budget a list', (s) => (s.loop_control.budget = []), 'loop_control.budget must be an object'],
  ['budget null', (s) => (s.loop_control.budget = null), 'loop_control.budget must be an object'],
  ['negative wall clock', (s) => (s.loop_control.budget.wall_clock_min = -5), 'loop_control.budget.wall_clock_min must be a positive number'],
  ['usd a bool', (s) => (s.loop_control.budget.usd = true), 'loop_control.budget.usd must be a positive number'],
  ['tokens a string', (s) => (s.loop_control.budget.tokens = 'lots'), 'loop_control.budget.tokens must be a positive number'],
  ['no_progress null', (s) => (s.loop_control.no_progress = null), 'loop_control.no_progress must be an object'],
  ['stalled 0', (s) => (s.loop_control.no_progress.max_stalled_iterations = 0), 'loop_control.no_progress.max_stalled_iterations must be a positive integer'],
  ['signals with a number', (s) => (s.loop_control.no_progress.signals = [1]), 'loop_control.no_progress.signals must be a list of strings'],
  ['bad action', (s) => (s.loop_control.no_progress.action = 'pause'), 'loop_control.no_progress.action must be stop or human_checkpoint'],
  ['execution null', (s) => (s.execution = null), 'execution must be an object'],
  ['bad mode', (s) => (s.execution.mode = 'cloud'), 'execution.mode must be in_session, external_runner, or orchestrated'],
  ['bad isolation', (s) => (s.execution.isolation = 'vm'), 'execution.isolation must be current_workspace, branch, worktree, or sandbox'],
  ['side_effects a list', (s) => (s.execution.side_effects = []), 'execution.side_effects must be an object'],
  ['observability a string', (s) => (s.observability = 'x'), 'observability must be an object'],
  ['empty state file', (s) => (s.observability.state_file = ''), 'observability.state_file must be a non-empty string'],
  ['run log a number', (s) => (s.observability.run_log = 5), 'observability.run_log must be a non-empty string'],
  ['bad granularity', (s) => (s.observability.checkpoint_granularity = 'turn'), 'observability.checkpoint_granularity must be gate or step'],
  ['workspace a list', (s) => (s.workspace = []), 'workspace must be an object'],
  ['workspace escaping', (s) => (s.workspace.dir = '../escape'), "workspace.dir must be a relative path inside the loop directory (got '../escape')"],
  ['workspace dir blank', (s) => (s.workspace.dir = ''), 'workspace.dir must be a non-empty string'],
  ['layout a string', (s) => (s.workspace.layout = 'plan.md'), 'workspace.layout must be a list of strings'],
  ['privacy a number', (s) => (s.privacy = 1), 'privacy must be an object'],
  ['egress a mapping', (s) => (s.privacy.egress = { to: 'judge-1' }), 'privacy.egress must be a list'],
  ['egress entry a string', (s) => (s.privacy.egress = ['judge-1']), 'privacy.egress entries must be objects'],
];

describe('compile errors', () => {
  it('the base spec compiles', () => {
    expect(compileSpec(stringify(base()), { path: '/loops/x/loop.yaml' }).resolved.version).toBe(1);
  });

  it.each(cases)('%s', (_name, breakIt, message) => {
    const spec = base();
    breakIt(spec);
    const error = compileError(spec);
    expect(error.text).toBe(message);
    expect(error.exitCode).toBe(2);
  });

  it('load errors name the absolute path', () => {
    expect(compileError('a: [1\n').text).toMatch(/^Could not parse YAML in \/loops\/x\/loop\.yaml: .*line 2/);
    expect(compileError('- a\n- b\n').text).toBe('/loops/x/loop.yaml must contain a YAML mapping at the top level');
    expect(compileError('').text).toBe('/loops/x/loop.yaml must contain a YAML mapping at the top level');
  });

  it('points at the offending line', () => {
    const spec = base();
    spec.gates.plan_gate.verdict_policy = 'vibes';
    const text = stringify(spec);
    const line = text.split('\n').findIndex((l) => l.includes('vibes')) + 1;
    const error = compileError(text);
    expect(error.line).toBe(line);
    expect(error.describe()).toBe(`plan_gate.verdict_policy must be revise_until_clean or fixed_passes (/loops/x/loop.yaml:${line})`);
  });
});

describe('error order: the first failing section wins', () => {
  const order: [string, (s: Spec) => void, (s: Spec) => void, string][] = [
    ['version before workspace', (s) => (s.workspace.dir = '/abs'), (s) => (s.version = 2), 'Only loop.yaml version: 1 is supported'],
    ['context sources before verification', (s) => (s.goal.verification = 'x'), (s) => (s.goal.context_sources = 'x'), 'goal.context_sources must be a list'],
    ['verification before host', (s) => (s.host = 1), (s) => (s.goal.verification[0].expect = 'nope'), 'Criterion shape.expect must be exit_zero, exit_nonzero, or stdout_contains'],
    ['host before council', (s) => (s.council = 5), (s) => delete s.host.cli, 'host.cli is required'],
    ['council before gates', (s) => (s.gates = 1), (s) => (s.council[0].role = 'x'), 'Council member judge-1 role must be reviewer or judge'],
    ['plan gate before delivery gate', (s) => (s.gates.delivery_gate.verdict_policy = 'x'), (s) => (s.gates.plan_gate.verdict_policy = 'x'), 'plan_gate.verdict_policy must be revise_until_clean or fixed_passes'],
    ['gates before loop_control', (s) => (s.loop_control = 1), (s) => (s.gates.plan_gate.criteria = ['zzz']), 'plan_gate references unknown criterion: zzz'],
    ['loop_control before execution', (s) => (s.execution = 1), (s) => (s.loop_control.no_progress.action = 'x'), 'loop_control.no_progress.action must be stop or human_checkpoint'],
    ['execution before observability', (s) => (s.observability = 1), (s) => (s.execution.mode = 'x'), 'execution.mode must be in_session, external_runner, or orchestrated'],
    ['observability before workspace', (s) => (s.workspace = 1), (s) => (s.observability.run_log = ''), 'observability.run_log must be a non-empty string'],
    ['workspace before privacy', (s) => (s.privacy = 1), (s) => (s.workspace.layout = 1), 'workspace.layout must be a list of strings'],
    ['a member is validated before it is checked for duplicates', (s) => (s.council[1].id = 'judge-1'), (s) => (s.council[1].cli = ' '), 'Council member judge-1 needs a cli name'],
  ];
  it.each(order)('%s', (_name, later, earlier, message) => {
    const spec = base();
    later(spec);
    earlier(spec);
    expect(compileError(spec).text).toBe(message);
  });
});

describe('what compile does not check (as in Looper)', () => {
  it('leaves verdict_source unchecked under fixed_passes and the max_revisions default unwritten', () => {
    const spec = base();
    spec.gates.plan_gate = { verdict_policy: 'fixed_passes', verdict_source: 'ghost' };
    const { resolved } = compileSpec(stringify(spec), { path: '/l/loop.yaml' });
    expect(resolved.gates.plan_gate.verdict_source).toBe('ghost');
    expect('max_revisions' in resolved.gates.plan_gate).toBe(false);
  });

  it('keeps an explicit null wall clock, defaults an absent one to 30', () => {
    const spec = base();
    expect(compileSpec(stringify(spec), { path: '/l/loop.yaml' }).resolved.loop_control.budget.wall_clock_min).toBe(30);
    spec.loop_control.budget.wall_clock_min = null;
    expect(compileSpec(stringify(spec), { path: '/l/loop.yaml' }).resolved.loop_control.budget.wall_clock_min).toBeNull();
  });
});

describe("Python's idea of blank and of an int", () => {
  // str.strip() drops \x1c-\x1f and NEL but keeps a BOM; String.prototype.trim() does the opposite.
  const withStatement = (yamlScalar: string): string => stringify(base()).replace(/statement: .*\n/, `statement: ${yamlScalar}\n`);

  it('takes a statement of separators or NEL for blank, as str.strip() does', () => {
    expect(compileError(withStatement('"\\x1f\\x1c"')).text).toBe('goal.statement is required');
    expect(compileError(withStatement('"\\N"')).text).toBe('goal.statement is required');
    expect(compileError(stringify(base()).replace('cli: codex', 'cli: "\\x1e"')).text).toBe('host.cli is required');
  });

  it('takes a BOM for text, as str.strip() does', () => {
    const { resolved, loopMd } = compileSpec(withStatement('"\\ufeff"'), { path: '/l/loop.yaml', now: new Date('2026-01-01T00:00:00Z') });
    expect(resolved.goal.statement).toBe('\ufeff');
    // LOOP.md strips each section's text with Python's strip: the BOM stays, a trailing \x1f goes.
    expect(loopMd).toContain('## Goal\n\n\ufeff\n');
    const { loopMd: md } = compileSpec(withStatement('"goal\\x1f"'), { path: '/l/loop.yaml', now: new Date('2026-01-01T00:00:00Z') });
    expect(md).toContain('## Goal\n\ngoal\n');
  });

  it('takes an int past 2**53 for a positive integer timeout, as Python does', () => {
    const spec = stringify(base()).replace('cli: codex', 'cli: codex\n  timeout_sec: 12345678901234567890');
    const { json } = compileSpec(spec, { path: '/l/loop.yaml', now: new Date('2026-01-01T00:00:00Z') });
    expect(json).toContain('"timeout_sec": 12345678901234567890');
  });
});
