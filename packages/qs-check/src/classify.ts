// The classification of a finished run, decided from every event of the run: the prior art's order, blaming the docs only for what they caused.
import type { ClassificationName, StopReasonName } from '@quickloop/events';

export interface RunEvidence {
  stopReason: StopReasonName;
  detail: string;
  /** null when the check did not run. */
  checkPassed: boolean | null;
  /** The check did not parse (bash's message): it could not have said anything about the docs. */
  checkSyntaxError?: string;
  /** The check failed in one of its own helpers, before it looked at anything (facts.ts `helperFailure`). */
  checkHelperFailed?: string;
  /** The check was killed at max_command_seconds: it never gave its verdict. */
  checkTimedOut?: boolean;
  /** expect_output missed, and output it read was cut to max_output_chars (facts.ts `sessionCut`). */
  sessionCut?: boolean;
  /** A page of the docs route the run tried to read and never could (facts.ts `unreadRoute`); `infra` when the site failed. */
  routeUnread?: { infra: boolean; detail: string };
  /**
   * Egress errors and blocks of a command that failed (setup, a bash call) or of the check;
   * those of a command that succeeded, or of no command at all, are not here (facts.ts).
   */
  egressErrors: number;
  egressBlocked: number;
  /** Filesystem accesses the sandbox refused (sandbox.denied) a command that failed, or the check. */
  denied: number;
  /**
   * The first sandbox limit (sandbox.limit_hit) that a command which failed, or the check when it
   * failed, ran into, in words (facts.ts `limitHitDetail`); absent when none did, or when the run
   * later ran that very command again and got through.
   */
  limitHit?: string;
  /**
   * The check passed, but the sandbox's own counters (a cgroup's) say one of its limits refused a
   * fork or killed a process while it ran, in words (facts.ts `limitHitDetail`). Its exit 0 may be
   * that refusal's: `! tool`, `if app | grep -q ERROR; then exit 1; fi` pass when the tool is killed.
   */
  checkLimitHit?: string;
  /** A model agent's error kind (agent.completed error_kind): `infra` is the provider's failure, whatever the detail says. */
  errorKind?: string;
  /** A recorded run's re-driven result differed from the recording where a model acts on it (facts.ts `recordedDiverged`). */
  recordedDiverged?: string;
  /** The agent read none of the docs (facts.ts `docsUnread`); `infra` when the site kept them from it. */
  docsUnread?: { infra: boolean; detail: string };
}

/**
 * Vendor error texts that mean the provider, not the harness, failed. The prior art matched only
 * one vendor's `API error 429:` shape; `api error` followed by the status within a few characters
 * also covers `API error: 503 …`.
 */
const INFRA_MARKERS = [/connection error/, /api error\W{0,3}(429|500|502|503|529)\b/, /overloaded/, /rate limit/];

export function classify(run: RunEvidence): ClassificationName {
  if (run.stopReason === 'skipped') return 'skipped';
  // Cut by the sweep's money, not the task's budgets: even a check that passes says nothing about whether the docs were enough.
  if (run.stopReason === 'spend_cap') return 'budget_exhausted';
  // A pass the harness's own limit may have made (a tool it killed, under `!`) is no evidence.
  if (run.checkPassed === true && run.checkLimitHit !== undefined) return 'harness_error';
  if (run.checkPassed === true) return 'passed';
  if (run.checkSyntaxError !== undefined) return 'harness_error';
  // A helper that was given what it cannot use, or found the sandbox without what it runs, checked nothing.
  if (run.checkHelperFailed !== undefined) return 'harness_error';
  if (run.stopReason === 'refusal') return 'agent_refusal';
  if (run.stopReason === 'error') {
    if (run.errorKind === 'infra') return 'infra_error';
    if (run.errorKind !== undefined) return 'harness_error';
    const detail = run.detail.toLowerCase();
    return INFRA_MARKERS.some((m) => m.test(detail)) ? 'infra_error' : 'harness_error';
  }
  if (run.stopReason === 'max_turns' || run.stopReason === 'timeout' || run.stopReason === 'token_budget' || run.stopReason === 'context_overflow') return 'budget_exhausted';
  // Killed by the harness's clock, the check's exit code (124) is not its answer.
  if (run.checkTimedOut === true) return 'budget_exhausted';
  if (run.sessionCut === true) return 'budget_exhausted';
  if (run.routeUnread) return run.routeUnread.infra ? 'infra_error' : 'harness_error';
  // The sandbox's own limit stopped the command: the harness's choice, never the docs'. It is no task
  // budget (the task format cannot raise it), so harness_error, like a refused write; named before
  // egress errors, which only may have caused the failure where this surely took part in it.
  if (run.limitHit !== undefined) return 'harness_error';
  if (run.egressErrors > 0) return 'infra_error';
  if (run.egressBlocked > 0 || run.denied > 0) return 'harness_error';
  // A gap is what the docs left out for an agent that followed them. A recorded run whose turns no
  // longer answer what this run saw, or an agent that never read the docs, did not follow these docs.
  if (run.recordedDiverged !== undefined) return 'harness_error';
  if (run.docsUnread) return run.docsUnread.infra ? 'infra_error' : 'harness_error';
  return 'docs_gap';
}

export function isEvidential(c: ClassificationName): boolean {
  return c === 'passed' || c === 'docs_gap';
}

export function label(c: ClassificationName): 'PASS' | 'FAIL' | 'SKIP' | 'INCONCLUSIVE' {
  if (c === 'passed') return 'PASS';
  if (c === 'docs_gap') return 'FAIL';
  return c === 'skipped' ? 'SKIP' : 'INCONCLUSIVE';
}
