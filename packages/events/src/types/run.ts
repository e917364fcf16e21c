// Events of qs-check: the success check and the run's verdict, plus the two other ways a run ends.
import { Type, type Static } from '@sinclair/typebox';
import { defineEvent } from '../define.js';
import { StopReason } from './agent.js';

/** The closed taxonomy; only passed and docs_gap are evidence about the docs. */
export const Classification = Type.Union(
  [
    Type.Literal('passed'),
    Type.Literal('docs_gap'),
    Type.Literal('budget_exhausted'),
    Type.Literal('infra_error'),
    Type.Literal('harness_error'),
    Type.Literal('agent_refusal'),
    Type.Literal('skipped'),
  ],
  { description: 'passed | docs_gap (evidence) · budget_exhausted | infra_error | harness_error | agent_refusal (inconclusive) · skipped.' },
);
export type ClassificationName = Static<typeof Classification>;

export const CheckStarted = defineEvent({
  type: 'check.started',
  emittedBy: ['qs-check'],
  doc: 'The compiled success check started in the run\'s sandbox; `id` pairs it with check.completed.',
  payload: Type.Object({
    port: Type.Integer({ minimum: 1, maximum: 65535, description: 'The QS_PORT the check was given (stable per task, free when it started).' }),
    backend: Type.String({ description: 'The sandbox backend the check runs under.' }),
    workspace: Type.String({ description: 'The workspace it runs in.' }),
  }),
});

export const CheckCompleted = defineEvent({
  type: 'check.completed',
  emittedBy: ['qs-check'],
  doc: 'The success check finished: its exit code is the verdict (0 passes). parent_id is the check.started id.',
  payload: Type.Object({
    exit_code: Type.Integer({ description: 'The check\'s exit code; 124 when it timed out.' }),
    passed: Type.Boolean(),
    timed_out: Type.Boolean(),
    duration_ms: Type.Integer({ minimum: 0 }),
    output: Type.String({ description: 'The check\'s merged output, head+tail truncated.' }),
    reason: Type.String({ description: 'The last non-empty line of a failing check (its one-line reason); empty when it passed.' }),
  }),
});

export const RunCompleted = defineEvent({
  type: 'run.completed',
  emittedBy: ['qs-check'],
  terminal: true,
  doc: 'The run\'s verdict, decided after every event of the run (egress included) was in. Ends the run\'s stream.',
  payload: Type.Object({
    task: Type.String(),
    classification: Classification,
    label: Type.Union([Type.Literal('PASS'), Type.Literal('FAIL'), Type.Literal('SKIP'), Type.Literal('INCONCLUSIVE')]),
    evidential: Type.Boolean({ description: 'True for passed and docs_gap only.' }),
    stop_reason: StopReason,
    detail: Type.String({ description: 'Why: the agent\'s detail, or the check\'s reason.' }),
    backend: Type.String(),
    enforced: Type.Boolean(),
    check_exit_code: Type.Union([Type.Integer(), Type.Null()], { description: 'null when the check did not run (skipped).' }),
    docs_pages_read: Type.Array(Type.String(), { description: 'URLs of docs.read events, in order.' }),
    suspect_page: Type.Union([Type.String(), Type.Null()], { description: 'The last page read, for a run that did not pass.' }),
    docs_bypass_attempts: Type.Integer({ minimum: 0, description: 'Shell attempts to reach a docs host (egress.blocked with reason docs_host).' }),
    workspace_kept: Type.Union([Type.String(), Type.Null()], { description: 'The workspace left on disk (--keep), else null.' }),
  }),
});

export const RunFailed = defineEvent({
  type: 'run.failed',
  emittedBy: ['qs-agent', 'qs-check', 'qs-sandbox', 'qs'],
  terminal: true,
  doc: 'A stage could not do its part for this run (no sandbox, a broken stream, a crash). Not a verdict about the docs. Ends the run\'s stream. `qs run` writes one (stage `qs`) for an attempt whose pipeline ended with no terminal event.',
  payload: Type.Object({
    failed_stage: Type.String({ description: 'The stage that failed.' }),
    error: Type.String({ minLength: 1, description: 'One line.' }),
  }),
});

export const RunInterrupted = defineEvent({
  type: 'run.interrupted',
  emittedBy: ['qs-agent', 'qs-check', 'qs'],
  terminal: true,
  doc: 'The run was stopped by SIGINT/SIGTERM before a verdict. Ends the run\'s stream; the stage exits 130. `qs run` writes one (stage `qs`) for an attempt it interrupted before any stage could.',
  payload: Type.Object({
    signal: Type.String({ description: 'SIGINT or SIGTERM (or `unknown`).' }),
    phase: Type.String({ description: 'What was running: setup, agent, check, or waiting for input.' }),
  }),
});
