// Error kinds from what a CLI printed: its own status fields when it has them, else the words it used.
import type { ErrorKind } from '../types.js';

export interface Classified {
  errorKind: ErrorKind;
  transient: boolean;
}

// Anthropic also says "input length and `max_tokens` exceed context limit" (the prompt fits, but not with the
// answer's room) and, on some platforms, "input is too long": the conversation outgrew the model all the same.
const CONTEXT = /prompt is too long|prompt_too_long|context.?window|context_length_exceeded|maximum context length|too many tokens|exceeds the maximum number of tokens|exceed(?:s|ed)? (?:the |your )?context limit|input is too long|request too large for .{0,200}\bper min/i;
const CONFIG = /unknown option|unknown argument|unexpected argument|unrecognized (option|argument)|invalid value for|invalid (--)?model|unknown model|invalid auth method|not logged in|invalid api key|authentication|unauthori[sz]ed|forbidden|\b40[13]\b|model .* not found|command not found/i;
// A bare 429 or 5xx is not a status (a stack frame's line number, an offset, a byte count): it needs an HTTP word beside it.
const TRANSIENT = /rate.?limit|too many requests|overloaded|(?:status|http|error|code)[ :=]*\(?(?:429|5\d\d)\b|\b5\d\d (?:internal|bad gateway|service unavailable|gateway time-?out)|high demand|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|socket hang up|network error|temporarily unavailable|RESOURCE_EXHAUSTED|UNAVAILABLE|timed? ?out/i;

/** Stack frames (node's `at f (file:1:2)`, Python's `File "x", line 1`): a crash's own words, not the CLI's. */
const FRAME = /^\s+at .*$|^\s+File ".*", line \d+.*$/gm;
const STACK = /^Traceback \(most recent call last\):$|^\s+at .*:\d+:\d+\)?$/m;
/**
 * A crash of the program itself: an error of its own code, named by the language's own class, at the
 * head of a Node stack or the foot of a Python traceback. Deterministic whatever its message holds
 * (`ValueError: bad offset 429`, `KeyError: 'status 503'`): the same input crashes the same way.
 */
const PROGRAM_ERROR = /^(?:TypeError|ReferenceError|RangeError|SyntaxError|KeyError|ValueError|AttributeError|IndexError|NameError|AssertionError|ZeroDivisionError|ImportError|ModuleNotFoundError|IndentationError|NotImplementedError|RecursionError|UnboundLocalError|UnicodeDecodeError|UnicodeEncodeError|LookupError|(?:json\.decoder\.)?JSONDecodeError)(?::|$)/m;

/** Classifies a failure from free text (stderr, an error message, a text-mode stdout). */
export function classifyText(raw: string): Classified {
  const text = raw.replace(FRAME, '');
  if (CONTEXT.test(text)) return { errorKind: 'context_overflow', transient: false };
  if (CONFIG.test(text)) return { errorKind: 'config', transient: false };
  if (STACK.test(raw) && PROGRAM_ERROR.test(text)) return { errorKind: 'infra', transient: false };
  if (TRANSIENT.test(text)) return { errorKind: 'infra', transient: true };
  // A CLI that fails without saying why is treated as an infrastructure failure, but not retried blindly.
  return { errorKind: 'infra', transient: false };
}

/** Classifies an HTTP status a CLI reported from its API. */
export function classifyStatus(status: number): Classified {
  if (status === 401 || status === 403) return { errorKind: 'config', transient: false };
  if (status === 408 || status === 409 || status === 429 || status >= 500) return { errorKind: 'infra', transient: true };
  if (status === 413) return { errorKind: 'context_overflow', transient: false };
  return { errorKind: 'config', transient: false };
}

/**
 * A content policy that blocked the prompt or the answer, which the vendors send as an error rather than
 * as a stop: OpenAI's 400 `invalid_prompt` ("your prompt was flagged as potentially violating our usage
 * policy"), Azure's `content_filter`, Anthropic's `invalid_request_error` "Output blocked by content
 * filtering policy" (a 400, or an error event mid-stream). The provider declining, as a refusal stop is:
 * no fault of the setup, and the same request again meets the same policy.
 */
const POLICY_NAMES = new Set(['invalid_prompt', 'content_filter']);
const POLICY_WORDS = /output blocked by content filtering policy|flagged as potentially violating our usage policy|content management policy/i;

export function policyBlock(names: readonly string[], text: string): boolean {
  return names.some((n) => POLICY_NAMES.has(n)) || POLICY_WORDS.test(text);
}
