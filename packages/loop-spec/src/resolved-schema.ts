// The JSON Schema of loop.resolved.json as compile guarantees it: every default present, every check passed.
//
// Looper's own resolved schema is the authoring schema plus four required keys, which its compiler
// does not actually satisfy (a gate without `when` compiles). This one states what a runner may rely
// on; schemas/loop.resolved.schema.json is rendered from it and a test fails when they drift.

export const RESOLVED_SCHEMA_ID = 'quickloop/loop.resolved.v1.schema.json';

const positiveInt = { type: 'integer', minimum: 1 };
// Looper checks counts with isinstance(x, int), which a bool passes (true is 1): the compiler keeps it.
const countOrBool = (minimum: number) => ({ anyOf: [{ type: 'integer', minimum }, { const: true }, ...(minimum === 0 ? [{ const: false }] : [])] });
const positiveOrNull = { anyOf: [{ type: 'number', exclusiveMinimum: 0 }, { type: 'null' }] };
const nonBlank = { type: 'string', pattern: '\\S' };

export function resolvedJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: RESOLVED_SCHEMA_ID,
    title: 'loop.resolved.json (Looper 0.4 compatible), as `loop compile` writes it',
    description: 'Generated from packages/loop-spec/src/resolved-schema.ts: do not edit by hand.',
    type: 'object',
    required: [
      '$schema',
      'compiled_at',
      'source',
      'version',
      'goal',
      'host',
      'gates',
      'loop_control',
      'execution',
      'observability',
      'workspace',
      'privacy',
      'criteria_by_id',
      'council_by_id',
    ],
    properties: {
      // Looper spreads the spec over these three, so a spec's own top-level `source:` (or
      // `compiled_at:`, `$schema:`) is written instead, whatever its type: compile guarantees only the key.
      $schema: { description: 'The resolved schema URL, unless the spec sets its own $schema' },
      compiled_at: { description: 'UTC, whole seconds (2026-01-01T00:00:00+00:00), unless the spec sets its own compiled_at' },
      source: { description: 'The absolute path of the loop.yaml compiled, unless the spec sets its own source' },
      version: { anyOf: [{ const: 1 }, { const: true }] },
      meta: { description: 'Passed through unchecked' },
      goal: {
        type: 'object',
        required: ['statement', 'definition_of_done', 'context_sources'],
        properties: {
          statement: nonBlank,
          definition_of_done: nonBlank,
          context_sources: { type: 'array', items: { $ref: '#/$defs/context_source' } },
          verification: { anyOf: [{ type: 'array', items: { $ref: '#/$defs/criterion' } }, { type: 'null' }] },
        },
      },
      host: { $ref: '#/$defs/model_invocation' },
      council: { anyOf: [{ type: 'array', items: { $ref: '#/$defs/member' } }, { type: 'null' }] },
      gates: {
        type: 'object',
        required: ['plan_gate', 'delivery_gate'],
        properties: { plan_gate: { $ref: '#/$defs/gate' }, delivery_gate: { $ref: '#/$defs/gate' } },
      },
      loop_control: {
        type: 'object',
        required: ['max_iterations', 'budget', 'no_progress'],
        properties: {
          max_iterations: countOrBool(1),
          budget: {
            type: 'object',
            required: ['wall_clock_min'],
            properties: { wall_clock_min: positiveOrNull, usd: positiveOrNull, tokens: positiveOrNull },
          },
          no_progress: {
            type: 'object',
            required: ['max_stalled_iterations', 'signals', 'action'],
            properties: {
              max_stalled_iterations: countOrBool(1),
              signals: { type: 'array', items: { type: 'string' } },
              action: { enum: ['stop', 'human_checkpoint'] },
            },
          },
        },
      },
      execution: {
        type: 'object',
        required: ['mode', 'isolation', 'side_effects'],
        properties: {
          mode: { enum: ['in_session', 'external_runner', 'orchestrated'] },
          isolation: { enum: ['current_workspace', 'branch', 'worktree', 'sandbox'] },
          side_effects: { type: 'object', required: ['requires_approval', 'duplicate_action_check'] },
        },
      },
      observability: {
        type: 'object',
        required: ['state_file', 'run_log', 'checkpoint_granularity'],
        properties: {
          state_file: { type: 'string', minLength: 1 },
          run_log: { type: 'string', minLength: 1 },
          checkpoint_granularity: { enum: ['gate', 'step'] },
        },
      },
      workspace: {
        type: 'object',
        required: ['dir', 'layout'],
        properties: { dir: { $ref: '#/$defs/relative_path' }, layout: { type: 'array', items: { type: 'string' } } },
      },
      privacy: {
        type: 'object',
        required: ['egress'],
        properties: { egress: { type: 'array', items: { type: 'object', required: ['redact', 'consent'] } } },
      },
      criteria_by_id: { type: 'object', additionalProperties: { $ref: '#/$defs/criterion' } },
      council_by_id: { type: 'object', additionalProperties: { $ref: '#/$defs/member' } },
    },
    $defs: {
      argv: { type: 'array', minItems: 1, items: { type: 'string' }, prefixItems: [nonBlank] },
      relative_path: { type: 'string', pattern: '\\S', not: { anyOf: [{ pattern: '^/' }, { pattern: '(^|/)\\.\\.(/|$)' }] } },
      context_source: {
        oneOf: [
          { type: 'object', required: ['file'], not: { required: ['cmd'] }, properties: { file: { $ref: '#/$defs/relative_path' } } },
          { type: 'object', required: ['cmd', 'timeout_sec'], not: { required: ['file'] }, properties: { cmd: { $ref: '#/$defs/argv' }, timeout_sec: positiveInt } },
        ],
      },
      criterion: {
        type: 'object',
        required: ['id', 'type'],
        properties: { id: { type: 'string', minLength: 1 } },
        oneOf: [
          {
            properties: {
              type: { const: 'programmatic' },
              check: { $ref: '#/$defs/argv' },
              timeout_sec: positiveInt,
              expect: { enum: ['exit_zero', 'exit_nonzero', 'stdout_contains'] },
              contains: { type: 'string' },
            },
            required: ['check', 'timeout_sec', 'expect'],
            if: { properties: { expect: { const: 'stdout_contains' } } },
            then: { required: ['contains'] },
          },
          { properties: { type: { const: 'judge' }, rubric: { type: 'string' } }, required: ['rubric'] },
          { properties: { type: { const: 'human' }, prompt: { type: 'string' } }, required: ['prompt'] },
        ],
      },
      model_invocation: {
        type: 'object',
        required: ['cli', 'invoke', 'timeout_sec'],
        properties: { cli: nonBlank, invoke: { $ref: '#/$defs/argv' }, timeout_sec: positiveInt, model: {} },
      },
      member: {
        allOf: [
          { $ref: '#/$defs/model_invocation' },
          {
            type: 'object',
            required: ['id', 'role', 'scope', 'local'],
            properties: { id: { type: 'string', minLength: 1 }, role: { enum: ['reviewer', 'judge'] } },
          },
        ],
      },
      gate: {
        type: 'object',
        required: ['verdict_policy', 'members', 'criteria'],
        properties: {
          verdict_policy: { enum: ['revise_until_clean', 'fixed_passes'] },
          verdict_source: {},
          members: { type: 'array', items: { type: 'string' } },
          criteria: { type: 'array', items: { type: 'string' } },
          max_revisions: { ...countOrBool(0), description: 'Absent when the spec omits it; runners read absent as 0' },
        },
      },
    },
  };
}
