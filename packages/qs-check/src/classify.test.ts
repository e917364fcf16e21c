import { describe, expect, it } from 'vitest';
import { classify, isEvidential, label, type RunEvidence } from './classify.js';

// Egress and denials here are the attributed ones: of a failed command or of the check (facts.test.ts).
const base: RunEvidence = { stopReason: 'completed', detail: '', checkPassed: false, egressErrors: 0, egressBlocked: 0, denied: 0 };

describe('classify (in order)', () => {
  it.each<[string, Partial<RunEvidence>, string]>([
    ['skipped wins over everything', { stopReason: 'skipped', checkPassed: true, egressErrors: 3 }, 'skipped'],
    ['a passing check wins over a timeout', { stopReason: 'timeout', checkPassed: true }, 'passed'],
    ['a passing check wins over egress trouble', { checkPassed: true, egressErrors: 1, egressBlocked: 2, denied: 1 }, 'passed'],
    ['a check that does not parse', { checkSyntaxError: 'line 3 of the success block: syntax error', stopReason: 'command_failed' }, 'harness_error'],
    ['a check that does not parse but passed anyway is still passed', { checkSyntaxError: 'x', checkPassed: true }, 'passed'],
    ['a check whose helper failed before it checked anything', { checkHelperFailed: 'qs_wait_http needs a URL or a path' }, 'harness_error'],
    ['a check whose helper failed, after a refusal', { stopReason: 'refusal', checkHelperFailed: 'x' }, 'harness_error'],
    ['refusal', { stopReason: 'refusal' }, 'agent_refusal'],
    ['error with an API 529', { stopReason: 'error', detail: 'API error 529: overloaded_error' }, 'infra_error'],
    ['error with a colon-style API 503 (other vendors)', { stopReason: 'error', detail: 'API error: 503 Service Unavailable' }, 'infra_error'],
    ['error with a rate limit', { stopReason: 'error', detail: 'Rate limit reached' }, 'infra_error'],
    ['error with a connection error', { stopReason: 'error', detail: 'Connection error.' }, 'infra_error'],
    ['error with anything else', { stopReason: 'error', detail: 'no API key for anthropic' }, 'harness_error'],
    ['a model error the models library called infra, whatever its words', { stopReason: 'error', detail: 'the provider kept failing', errorKind: 'infra' }, 'infra_error'],
    ['a model error of another kind, even with a rate-limit phrase in it', { stopReason: 'error', detail: 'rate limit config is invalid', errorKind: 'config' }, 'harness_error'],
    ['a context overflow is out of budget, not evidence', { stopReason: 'context_overflow', detail: 'prompt is too long' }, 'budget_exhausted'],
    ['an API 400 is not infrastructure', { stopReason: 'error', detail: 'API error 400: bad request' }, 'harness_error'],
    ['max_turns', { stopReason: 'max_turns' }, 'budget_exhausted'],
    ['timeout (max_seconds, or a replay step killed at max_command_seconds)', { stopReason: 'timeout', egressBlocked: 1 }, 'budget_exhausted'],
    ['token_budget', { stopReason: 'token_budget' }, 'budget_exhausted'],
    ['stopped by the sweep\'s spend cap, even with a check that passed: not evidence', { stopReason: 'spend_cap', checkPassed: true }, 'budget_exhausted'],
    ['stopped by the spend cap before the check ran', { stopReason: 'spend_cap', checkPassed: null }, 'budget_exhausted'],
    ['an egress error of a failed command', { stopReason: 'command_failed', egressErrors: 1, egressBlocked: 1 }, 'infra_error'],
    ['a block of a failed command', { stopReason: 'command_failed', egressBlocked: 1 }, 'harness_error'],
    ['a block in the check of a completed run', { stopReason: 'completed', egressBlocked: 1 }, 'harness_error'],
    ['a refused filesystem access of a failed command', { stopReason: 'command_failed', denied: 1 }, 'harness_error'],
    ['a failed replay command with no egress at all', { stopReason: 'command_failed' }, 'docs_gap'],
    ['a check killed at max_command_seconds gave no verdict: out of budget, not evidence', { checkTimedOut: true }, 'budget_exhausted'],
    ['a check killed at max_command_seconds after a failed replay step', { stopReason: 'command_failed', checkTimedOut: true }, 'budget_exhausted'],
    ['a check that timed out but passed is impossible; a passing check still wins', { checkPassed: true, checkTimedOut: true }, 'passed'],
    ['a route page the docs site failed to serve (5xx, network): infrastructure', { stopReason: 'command_failed', routeUnread: { infra: true, detail: 'HTTP 503' } }, 'infra_error'],
    ['a route page that could not be read for another reason (404, off the allow list, a redirect loop)', { routeUnread: { infra: false, detail: 'HTTP 404' } }, 'harness_error'],
    ['an unreadable route page does not undo a pass', { checkPassed: true, routeUnread: { infra: false, detail: 'HTTP 404' } }, 'passed'],
    ['expect_output missed what the run printed in output cut to max_output_chars: out of budget, not evidence', { sessionCut: true }, 'budget_exhausted'],
    ['a failed command, or the check, that hit a sandbox limit (process, memory, tmpfs): the harness\'s, not evidence', { stopReason: 'command_failed', limitHit: 'the process limit' }, 'harness_error'],
    ['a failed check that hit a sandbox limit', { limitHit: 'the memory limit' }, 'harness_error'],
    ['a limit hit is named before an egress error of the same failed command', { stopReason: 'command_failed', limitHit: 'x', egressErrors: 1 }, 'harness_error'],
    ['a passing check wins over a limit hit', { checkPassed: true, limitHit: 'x' }, 'passed'],
    ['a passing check that itself ran into a limit by the kernel\'s count: the pass may be the kill\'s', { checkPassed: true, checkLimitHit: 'x' }, 'harness_error'],
    ['skipped and the spend cap still come first', { stopReason: 'skipped', checkPassed: true, checkLimitHit: 'x' }, 'skipped'],
    ['a run out of budget stays out of budget with a limit hit (not evidence either way)', { stopReason: 'timeout', limitHit: 'x' }, 'budget_exhausted'],
    ['a recorded run whose re-driven result differs from the recording, then a failed check: its turns did not answer this run', { recordedDiverged: 'turn 2: exit_code' }, 'harness_error'],
    ['an agent that read none of the docs, then a failed check', { docsUnread: { infra: false, detail: 'read no page' } }, 'harness_error'],
    ['an agent the docs site kept from every page it asked for', { docsUnread: { infra: true, detail: 'HTTP 503' } }, 'infra_error'],
    ['a passing check wins over both', { checkPassed: true, recordedDiverged: 'x', docsUnread: { infra: false, detail: 'x' } }, 'passed'],
    ['a budget that ran out is still out of budget', { stopReason: 'max_turns', docsUnread: { infra: false, detail: 'x' } }, 'budget_exhausted'],
    ['an egress error of a failed command is named before them', { stopReason: 'command_failed', egressErrors: 1, docsUnread: { infra: false, detail: 'x' } }, 'infra_error'],
    ['a failing check', {}, 'docs_gap'],
  ])('%s', (_name, over, expected) => {
    expect(classify({ ...base, ...over })).toBe(expected);
  });

  it('labels and evidence', () => {
    expect([label('passed'), label('docs_gap'), label('skipped'), label('infra_error')]).toEqual(['PASS', 'FAIL', 'SKIP', 'INCONCLUSIVE']);
    expect(['passed', 'docs_gap', 'skipped', 'harness_error'].map((c) => isEvidential(c as never))).toEqual([true, true, false, false]);
  });
});
