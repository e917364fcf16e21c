// The shape of loop.resolved.json, as Looper 0.4's compiler writes it and `compileSpec` reproduces it.
//
// Every field the compiler defaults is required here; fields it passes through untouched are optional.
// Looper never validates some fields (egress `to`/`sends`/`consent`, `when`, `meta`): their types say
// what a well-formed spec holds, and a runner must still treat them defensively. Unknown keys are
// passed through at every level, hence the index signatures.

/** An argv array: the compiler shlex-splits strings, so it is always a non-empty list of strings. */
export type Argv = string[];

export type Expect = 'exit_zero' | 'exit_nonzero' | 'stdout_contains';
export type VerdictPolicy = 'revise_until_clean' | 'fixed_passes';
export type Role = 'reviewer' | 'judge';
export type NoProgressAction = 'stop' | 'human_checkpoint';
export type ExecutionMode = 'in_session' | 'external_runner' | 'orchestrated';
export type Isolation = 'current_workspace' | 'branch' | 'worktree' | 'sandbox';
export type CheckpointGranularity = 'gate' | 'step';
export type GateName = 'plan_gate' | 'delivery_gate';

/** The gates in the order the compiler validates and runners run them. */
export const GATE_NAMES: readonly GateName[] = ['plan_gate', 'delivery_gate'];

/** Redaction globs that always apply; they are normative but never written into the resolved spec. */
export const DEFAULT_REDACTIONS: readonly string[] = ['.env', '.env.*', 'secrets/**', '**/*.key'];

/** A context file, relative to the loop directory (no `..`, not absolute: the compiler checks). */
export interface FileContextSource {
  file: string;
  [key: string]: unknown;
}

/** A context command, run with cwd = the loop directory; its output (scrubbed) becomes context. */
export interface CmdContextSource {
  cmd: Argv;
  /** Seconds; the compiler defaults it to 60. */
  timeout_sec: number;
  [key: string]: unknown;
}

export type ContextSource = FileContextSource | CmdContextSource;

export interface ProgrammaticCriterion {
  id: string;
  type: 'programmatic';
  /** Used literally by Looper's runner; quickloop's runner may substitute `{n}` and `{artifact}`. */
  check: Argv;
  /** Seconds; the compiler defaults it to 300. */
  timeout_sec: number;
  expect: Expect;
  /** Present (a string) when `expect` is `stdout_contains`. */
  contains?: string;
  [key: string]: unknown;
}

export interface JudgeCriterion {
  id: string;
  type: 'judge';
  rubric: string;
  [key: string]: unknown;
}

export interface HumanCriterion {
  id: string;
  type: 'human';
  prompt: string;
  [key: string]: unknown;
}

export type Criterion = ProgrammaticCriterion | JudgeCriterion | HumanCriterion;

/** How to call a model CLI: `invoke` verbatim, the prompt on stdin, killed after `timeout_sec`. */
export interface ModelInvocation {
  cli: string;
  invoke: Argv;
  /** Seconds; the compiler defaults it to 600. */
  timeout_sec: number;
  /** Display only. */
  model?: string;
  [key: string]: unknown;
}

export interface CouncilMember extends ModelInvocation {
  id: string;
  role: Role;
  /** Defaults to `["plan", "delivery"]`; runners ignore it. */
  scope: unknown;
  /** Defaults to `cli === "ollama"`. A local member never needs consent. */
  local: unknown;
}

export interface Gate {
  /** Free text; never validated. */
  when?: unknown;
  /** Council member ids, each checked to exist. */
  members: string[];
  verdict_policy: VerdictPolicy;
  /** `"human"` or a judge member listed in `members` under revise_until_clean; unchecked under fixed_passes. */
  verdict_source?: string;
  /** Criterion ids, each checked to exist. */
  criteria: string[];
  /** Absent when the spec omits it: Looper validates with a default of 1 but writes nothing back. */
  max_revisions?: number;
  [key: string]: unknown;
}

export interface Gates {
  plan_gate: Gate;
  delivery_gate: Gate;
  [key: string]: unknown;
}

export interface Budget {
  /** Always present: 30 when the spec omits the key; an explicit null means no cap. */
  wall_clock_min: number | null;
  usd?: number | null;
  tokens?: number | null;
  [key: string]: unknown;
}

export interface NoProgress {
  max_stalled_iterations: number;
  signals: string[];
  action: NoProgressAction;
  [key: string]: unknown;
}

export interface LoopControl {
  max_iterations: number;
  budget: Budget;
  no_progress: NoProgress;
  human_checkpoints?: unknown;
  stop_conditions?: unknown;
  [key: string]: unknown;
}

export interface Execution {
  mode: ExecutionMode;
  isolation: Isolation;
  side_effects: { requires_approval: unknown; duplicate_action_check: unknown; [key: string]: unknown };
  [key: string]: unknown;
}

export interface Observability {
  /** A file name inside the workspace. Looper does not path-check it; quickloop's lint does. */
  state_file: string;
  run_log: string;
  checkpoint_granularity: CheckpointGranularity;
  [key: string]: unknown;
}

export interface Workspace {
  /** Relative to the loop directory, no `..`; defaults to `./loop-workspace`. */
  dir: string;
  layout: string[];
  [key: string]: unknown;
}

/** One declared send. Looper does not type-check these fields; runners must. */
export interface EgressEntry {
  to?: unknown;
  sends?: unknown;
  /** Defaults to DEFAULT_REDACTIONS; extends (never replaces) the normative defaults at run time. */
  redact: unknown;
  /** Defaults to `"required"`; only `"granted"` on every entry for a member skips the prompt. */
  consent: unknown;
  [key: string]: unknown;
}

export interface Privacy {
  egress: EgressEntry[];
  [key: string]: unknown;
}

export interface Goal {
  statement: string;
  definition_of_done: string;
  context_sources: ContextSource[];
  /** Kept as written: an explicit `null` stays null (criteria_by_id is then empty). */
  verification?: Criterion[] | null;
  [key: string]: unknown;
}

/** loop.resolved.json. Keys are written sorted; criteria and members appear both as lists and maps. */
export interface ResolvedSpec {
  $schema: string;
  /** UTC, whole seconds, `+00:00` suffix (e.g. `2026-07-05T06:02:07+00:00`). */
  compiled_at: string;
  /** The absolute path of the loop.yaml it came from. */
  source: string;
  version: 1;
  meta?: { name?: unknown; description?: unknown; [key: string]: unknown };
  goal: Goal;
  host: ModelInvocation;
  /** Kept as written: absent stays absent and null stays null (council_by_id is then empty). */
  council?: CouncilMember[] | null;
  gates: Gates;
  loop_control: LoopControl;
  execution: Execution;
  observability: Observability;
  workspace: Workspace;
  privacy: Privacy;
  criteria_by_id: Record<string, Criterion>;
  council_by_id: Record<string, CouncilMember>;
  [key: string]: unknown;
}

/** What `compileSpec` returns: the resolved object and the two rendered documents. */
export interface CompileResult {
  resolved: ResolvedSpec;
  /** The byte-exact text of loop.resolved.json (sorted keys, indent 2, ASCII-escaped, LF, final newline). */
  json: string;
  loopMd: string;
  runInSessionMd: string;
  /** The same two files as Looper's renderer writes them (for `--render` and `--session-prompt`). */
  looper: { loopMd: string; runInSessionMd: string };
  /** Sorted unique `{{TOKEN}}` placeholders still present (compile warns, lint reports). */
  placeholders: string[];
}

export type Severity = 'error' | 'warning';

/** One lint finding; `--json` prints exactly these three keys. */
export interface Finding {
  check: string;
  severity: Severity;
  message: string;
}
