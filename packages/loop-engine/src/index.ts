// Public surface of @quickloop/loop-engine: what loop-gate (one round) and loop-run (the whole loop) share.
export { loadSpec, validateSpec, checkConsentIds, refusePlaceholders, maxRevisions, timeoutMs, type LoadedSpec } from './spec.js';
export { runArgv, tailKeptWarning, universalNewlines, type ExecResult, type ExecOptions } from './exec.js';
export { outputMode } from './model-output.js';
export { parseJudge, parseJudgeOutput, verdictBlock, type JudgeVerdict, type ParsedJudge } from './judge.js';
export { fnmatch, isRedacted } from './globs.js';
export { Scrubber, DEFAULT_GLOBS, envSecrets, type ScrubResult } from './scrub.js';
export { Session, totalTokens, type SessionHooks, type SessionOptions, type ConsentRecord, type Role, type TokenUsage } from './session.js';
export { runGateRound, namedFailures, substitute, evaluate, FIXED_PASSES_MARKER, type RoundInput, type RoundResult } from './gate.js';
export { planPrompt, deliveryPrompt, revisePrompt, reviewerPrompt, judgePrompt, type PriorDelivery } from './prompts.js';
export { LoopStop, ConsentRefused, InputRequired, ModelCallFailed } from './errors.js';
export { LineReader, answerOrInterrupt } from './line-reader.js';
export { ProgressView, openEvents, type EventSinks, type LiveLine } from './progress.js';
