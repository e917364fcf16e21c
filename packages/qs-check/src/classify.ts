// The classification of a finished run (research §4.3, in its order), decided from every event of the run.
import type { ClassificationName, StopReasonName } from '@quickloop/events';

export interface RunEvidence {
  stopReason: StopReasonName;
  detail: string;
  /** null when the check did not run. */
  checkPassed: boolean | null;
  /** Every egress decision of the run: setup, agent and check, all merged before this is called. */
  egressErrors: number;
  egressBlocked: number;
  /** Blocks of hosts on no list at all (not docs hosts). */
  egressNotAllowlisted: number;
}

/**
 * Vendor error texts that mean the provider, not the harness, failed. The prior art matched only
 * one vendor's `API error 429:` shape; `api error` followed by the status within a few characters
 * also covers `API error: 503 …`.
 */
const INFRA_MARKERS = [/connection error/, /api error\W{0,3}(429|500|502|503|529)\b/, /overloaded/, /rate limit/];

export function classify(run: RunEvidence): ClassificationName {
  if (run.stopReason === 'skipped') return 'skipped';
  if (run.checkPassed === true) return 'passed';
  if (run.stopReason === 'refusal') return 'agent_refusal';
  if (run.stopReason === 'error') {
    const detail = run.detail.toLowerCase();
    return INFRA_MARKERS.some((m) => m.test(detail)) ? 'infra_error' : 'harness_error';
  }
  if (run.stopReason === 'max_turns' || run.stopReason === 'timeout' || run.stopReason === 'token_budget') return 'budget_exhausted';
  if (run.egressErrors > 0) return 'infra_error';
  if (run.egressBlocked > 0 && run.stopReason === 'command_failed') return 'harness_error';
  if (run.egressNotAllowlisted > 0) return 'harness_error';
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
