// Events of loop-run and loop-gate: a loop's lifecycle, its model calls, consent, redaction and gate rounds.
import { Type } from '@sinclair/typebox';
import { defineEvent } from '../define.js';

const GateName = Type.String({ description: 'The gate: plan_gate or delivery_gate.' });

/** The five token counters, summed over the calls that reported them. */
export const LoopUsage = Type.Object(
  {
    input_tokens: Type.Integer({ minimum: 0 }),
    cache_read_tokens: Type.Integer({ minimum: 0 }),
    cache_write_tokens: Type.Integer({ minimum: 0 }),
    output_tokens: Type.Integer({ minimum: 0 }),
    reasoning_tokens: Type.Integer({ minimum: 0 }),
    usd: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: 'Cost reported by the CLI; null when none did.' }),
    calls: Type.Integer({ minimum: 0, description: 'Model calls made.' }),
    calls_without_usage: Type.Integer({ minimum: 0, description: 'Calls whose CLI reported no token usage: budgets are advisory while this is not 0.' }),
  },
  { description: 'Token and cost accounting read from the model CLIs\' JSON output modes.' },
);

export const LoopStarted = defineEvent({
  type: 'loop.started',
  emittedBy: ['loop-run'],
  doc: 'loop-run accepted the spec, took the workspace lock and is starting (or resuming) the loop.',
  payload: Type.Object({
    spec: Type.String({ description: 'The spec path as given.' }),
    loop_dir: Type.String({ description: 'The loop directory (the spec\'s parent): cwd of every subprocess.' }),
    workspace: Type.String({ description: 'The absolute workspace directory.' }),
    resumed: Type.Boolean({ description: 'True when a state file from an earlier run was found.' }),
    status: Type.String({ description: 'The state\'s status before this run (initialized on a fresh run).' }),
    wall_clock_used_sec: Type.Number({ minimum: 0, description: 'Wall clock used by earlier runs.' }),
  }),
});

export const LoopContext = defineEvent({
  type: 'loop.context',
  emittedBy: ['loop-run'],
  doc: 'One context source was gathered into context.md (or withheld: redacted, missing, outside the loop directory).',
  payload: Type.Object({
    index: Type.Integer({ minimum: 0 }),
    source: Type.String({ description: 'The file, or the command joined by spaces.' }),
    status: Type.Union([
      Type.Literal('read'),
      Type.Literal('redacted'),
      Type.Literal('missing'),
      Type.Literal('blocked_outside_base'),
      Type.Literal('ran'),
    ]),
    exit_code: Type.Optional(Type.Integer({ description: 'A command\'s exit code (124 timeout, 127 not found); not a failure.' })),
  }),
});

export const IterationStarted = defineEvent({
  type: 'iteration.started',
  emittedBy: ['loop-run'],
  doc: 'A delivery iteration began: delivery-<iteration>.md is drafted (unless kept from a resumed run) and gated.',
  payload: Type.Object({
    iteration: Type.Integer({ minimum: 1 }),
    max_iterations: Type.Integer({ minimum: 1 }),
  }),
});

export const ConsentAsked = defineEvent({
  type: 'consent.asked',
  emittedBy: ['loop-run', 'loop-gate'],
  doc: 'Before the first send to a non-local model the question was put on stderr; the answer is read from stdin. `id` pairs it with consent.answered.',
  payload: Type.Object({
    member: Type.String({ description: 'The council member id, or `host`.' }),
    sends: Type.Array(Type.String(), { description: 'What the egress entries say is sent.' }),
    redact: Type.Array(Type.String(), { description: 'The redaction globs in force for this member (defaults first).' }),
    warnings: Type.Array(Type.String(), { description: 'Leak warnings already recorded for this member, shown before the question.' }),
  }),
});

export const ConsentAnswered = defineEvent({
  type: 'consent.answered',
  emittedBy: ['loop-run', 'loop-gate'],
  doc: 'The consent decision for a member. Anything but `yes` (end of input included) is a refusal: the member is never invoked.',
  payload: Type.Object({
    member: Type.String(),
    granted: Type.Boolean(),
    how: Type.Union(
      [Type.Literal('answered_yes'), Type.Literal('refused'), Type.Literal('end_of_input'), Type.Literal('flag')],
      { description: 'answered_yes / refused on stdin; end_of_input when stdin closed; flag when given on the command line.' },
    ),
  }),
});

export const RedactionApplied = defineEvent({
  type: 'redaction.applied',
  emittedBy: ['loop-run', 'loop-gate'],
  doc: 'The content scrub found flagged-file content on its way out and replaced it with [redacted:<file>] before use.',
  payload: Type.Object({
    where: Type.String({ description: '`prompt for <member>`, `prompt for host` or `context command output (<argv>)`.' }),
    sources: Type.Array(Type.String(), { description: 'Every flagged file whose content was found, relative to the loop directory.' }),
  }),
});

export const RedactionBlindSpot = defineEvent({
  type: 'redaction.blind_spot',
  emittedBy: ['loop-run', 'loop-gate'],
  doc: 'A flagged file the content scrub cannot use (too large, not UTF-8, unreadable): a leak of it would go undetected.',
  payload: Type.Object({
    source: Type.String({ description: 'The file, relative to the loop directory.' }),
    reason: Type.String({ description: 'larger than 1MB, not valid UTF-8, or unreadable.' }),
  }),
});

export const ModelCall = defineEvent({
  type: 'model.call',
  emittedBy: ['loop-run', 'loop-gate'],
  doc: 'A model CLI was started with its invoke argv and the (scrubbed) prompt on stdin. `id` pairs it with model.result.',
  payload: Type.Object({
    member: Type.String({ description: 'The council member id, or `host`.' }),
    role: Type.Union([Type.Literal('host'), Type.Literal('reviewer'), Type.Literal('judge')]),
    purpose: Type.String({ description: 'plan, delivery, revise, review or verdict.' }),
    argv0: Type.String({ description: 'The program (the full argv is in the spec).' }),
    prompt_chars: Type.Integer({ minimum: 0 }),
    attempt: Type.Integer({ minimum: 1, description: 'The first attempt (1); retries of transient failures happen inside the call and are counted in model.result.attempts.' }),
  }),
});

export const ModelResult = defineEvent({
  type: 'model.result',
  emittedBy: ['loop-run', 'loop-gate'],
  doc: 'A model CLI ended. parent_id is the model.call id. Usage is null when the CLI reported none (plain text mode).',
  payload: Type.Object({
    member: Type.String(),
    exit_code: Type.Integer({ description: '124 on timeout, 127 when the program is missing.' }),
    ok: Type.Boolean(),
    timed_out: Type.Boolean(),
    duration_ms: Type.Integer({ minimum: 0 }),
    output_chars: Type.Integer({ minimum: 0 }),
    usage: Type.Union(
      [
        Type.Object({
          input_tokens: Type.Integer({ minimum: 0 }),
          cache_read_tokens: Type.Integer({ minimum: 0 }),
          cache_write_tokens: Type.Integer({ minimum: 0 }),
          output_tokens: Type.Integer({ minimum: 0 }),
          reasoning_tokens: Type.Integer({ minimum: 0 }),
        }),
        Type.Null(),
      ],
      { description: 'Tokens from the CLI\'s JSON output mode.' },
    ),
    usd: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: 'Cost, when the CLI reports it.' }),
    attempts: Type.Optional(Type.Integer({ minimum: 1, description: 'Attempts made: transient failures (rate limits, overload, 5xx) are retried with backoff.' })),
    error: Type.Optional(Type.String({ description: 'The tail of stderr of a failed call.' })),
  }),
});

export const ArtifactWritten = defineEvent({
  type: 'artifact.written',
  emittedBy: ['loop-run'],
  doc: 'The host\'s output became a workspace artifact: plan.md, delivery-<n>.md, or a revision of one.',
  payload: Type.Object({
    path: Type.String({ description: 'Relative to the loop directory.' }),
    phase: Type.Union([Type.Literal('plan'), Type.Literal('delivery'), Type.Literal('revise')]),
    iteration: Type.Integer({ minimum: 0 }),
  }),
});

export const GateStarted = defineEvent({
  type: 'gate.started',
  emittedBy: ['loop-run', 'loop-gate'],
  doc: 'One round of a gate began on an artifact. `id` is the round\'s id, the parent of its checks, reviews and verdict.',
  payload: Type.Object({
    gate: GateName,
    artifact: Type.String({ description: 'Relative to the loop directory.' }),
    iteration: Type.Integer({ minimum: 0, description: '0 for the plan gate.' }),
    round: Type.Integer({ minimum: 1, description: 'The gate\'s round number across the run (review-<gate>-<round>.md).' }),
    revision: Type.Integer({ minimum: 0, description: 'Host revisions of this artifact so far.' }),
  }),
});

export const GateCheck = defineEvent({
  type: 'gate.check',
  emittedBy: ['loop-run', 'loop-gate'],
  doc: 'A programmatic or human criterion was evaluated in a gate round (named apart from qs-check\'s check.completed).',
  payload: Type.Object({
    gate: GateName,
    criterion: Type.String(),
    kind: Type.Union([Type.Literal('programmatic'), Type.Literal('human')]),
    passed: Type.Boolean(),
    exit_code: Type.Union([Type.Integer(), Type.Null()], { description: 'The check\'s exit code (124 timeout, 127 not found); null for human.' }),
    argv: Type.Optional(Type.Array(Type.String(), { description: 'The check as run, after {artifact}/{n} substitution.' })),
    said: Type.Optional(
      Type.String({ description: 'For a failed programmatic check: the last non-blank line it printed (stderr, else stdout), scrubbed, at most 200 characters; absent when it printed nothing.' }),
    ),
  }),
});

export const ReviewCompleted = defineEvent({
  type: 'review.completed',
  emittedBy: ['loop-run', 'loop-gate'],
  doc: 'A reviewer returned its notes for a gate round (reviewers run in parallel and never give a verdict).',
  payload: Type.Object({
    gate: GateName,
    member: Type.String(),
    chars: Type.Integer({ minimum: 0 }),
  }),
});

export const GateVerdict = defineEvent({
  type: 'gate.verdict',
  emittedBy: ['loop-run', 'loop-gate'],
  doc: 'The outcome of a gate round. Malformed judge output is a revise with a warning, never a pass. `blocked`: a human criterion or a human verdict needed an answer and stdin was closed, so nothing was decided (loop-run then ends blocked, loop-gate exits 2).',
  payload: Type.Object({
    gate: GateName,
    round: Type.Integer({ minimum: 1 }),
    verdict: Type.Union([Type.Literal('pass'), Type.Literal('revise'), Type.Literal('blocked')]),
    source: Type.String({ description: 'The judge member id, `human`, `checks` (failed before the judge) or `fixed_passes`.' }),
    failures: Type.Array(Type.String(), {
      description: 'The blocking issues; the fixed_passes "one more pass" marker is never one. For `blocked`, the stop record: `interactive_input_required:<what>`.',
    }),
    warnings: Type.Array(Type.String(), { description: 'e.g. unparseable_judge_output.' }),
    review: Type.Union([Type.String(), Type.Null()], { description: 'The review file written for a revise, relative to the loop directory.' }),
  }),
});

export const GateRevision = defineEvent({
  type: 'gate.revision',
  emittedBy: ['loop-run'],
  doc: 'The host revised the artifact in place to address a round\'s review.',
  payload: Type.Object({
    gate: GateName,
    revision: Type.Integer({ minimum: 1 }),
    artifact: Type.String(),
  }),
});

export const NoProgressDetected = defineEvent({
  type: 'no_progress.detected',
  emittedBy: ['loop-run'],
  doc: 'The same gate failed with the same blocking issues max_stalled_iterations times in a row.',
  payload: Type.Object({
    gate: GateName,
    count: Type.Integer({ minimum: 1 }),
    threshold: Type.Integer({ minimum: 1 }),
    failures: Type.Array(Type.String()),
    action: Type.String({ description: 'stop, or human_checkpoint (an override may be granted on stdin).' }),
  }),
});

export const LoopCompleted = defineEvent({
  type: 'loop.completed',
  emittedBy: ['loop-run'],
  terminal: true,
  doc: 'The loop passed every gate (state.json status `passed`, exit 0). Ends the stream.',
  payload: Type.Object({
    final_delivery: Type.String({ description: 'Relative to the loop directory.' }),
    iteration: Type.Integer({ minimum: 1 }),
    wall_clock_used_sec: Type.Number({ minimum: 0, description: 'Accumulated across resumes.' }),
    usage: LoopUsage,
    already_passed: Type.Boolean({ description: 'True when an earlier run had passed and nothing was done.' }),
  }),
});

export const LoopFailed = defineEvent({
  type: 'loop.failed',
  emittedBy: ['loop-run'],
  terminal: true,
  doc: 'The loop ended without passing: `failed` (ran and failed, exit 1) or `blocked`/error (exit 2). Ends the stream.',
  payload: Type.Object({
    status: Type.Union([Type.Literal('failed'), Type.Literal('blocked')]),
    failure: Type.String({ description: 'state.json\'s failure: no_progress_detected, plan_gate_max_revisions_reached, consent_refused:<id>, …' }),
    exit_code: Type.Integer({ minimum: 1 }),
    iteration: Type.Integer({ minimum: 0 }),
    wall_clock_used_sec: Type.Number({ minimum: 0 }),
    usage: LoopUsage,
  }),
});
