// ModelError: a failed model call with its kind, and whether trying again could help.
import { CliError } from '@quickloop/cli-kit/errors';
import type { ErrorKind, Usage } from './types.js';

export class ModelError extends CliError {
  readonly errorKind: ErrorKind;
  /** Worth retrying: rate limits, overload, 5xx, dropped connections. */
  readonly transient: boolean;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  /** The server's own wait hint, when it sent one. */
  readonly retryAfterMs: number | undefined;
  /**
   * The vendor refused the API key, whatever the status says (Gemini answers a bad key with 400). A 403
   * is one only when its body says so: it is as often an access the key does not have (a model, a
   * project, a region) or a policy block.
   */
  readonly keyRefused: boolean;
  /** The account has no credit or quota left (Anthropic's 402 billing_error, OpenAI's insufficient_quota): no later call fares better. */
  readonly noCredit: boolean;
  /**
   * What the failed attempts were billed, as far as their responses said: a stream that reported its
   * usage, then failed or was cut. On a turn's error, the sum over its attempts; on a retry notice's,
   * that attempt's. Absent when none said anything (an HTTP error: no answer was made).
   */
  readonly usage: Usage | undefined;
  constructor(
    errorKind: ErrorKind,
    message: string,
    options: { transient?: boolean; status?: number; requestId?: string; retryAfterMs?: number; keyRefused?: boolean; noCredit?: boolean; usage?: Usage; cause?: unknown } = {},
  ) {
    super('internal', message, options.cause === undefined ? undefined : { cause: options.cause });
    this.errorKind = errorKind;
    this.transient = options.transient ?? false;
    this.status = options.status;
    this.requestId = options.requestId;
    this.retryAfterMs = options.retryAfterMs;
    this.keyRefused = options.keyRefused ?? options.status === 401;
    this.noCredit = options.noCredit ?? false;
    this.usage = options.usage;
  }
}

/** An abort's error (InterruptedError) that cut a stream which had reported usage: what that was. */
const BILLED = new WeakMap<object, Usage>();

/** `error` with `usage` as what its attempts were billed (a ModelError is copied; any other error keeps it aside). */
export function withBilled<E extends Error>(error: E, usage: Usage): E {
  if (error instanceof ModelError) {
    const { errorKind, transient, status, requestId, retryAfterMs, keyRefused, noCredit } = error;
    const copy = new ModelError(errorKind, error.message, { transient, keyRefused, noCredit, usage, ...(status !== undefined ? { status } : {}), ...(requestId !== undefined ? { requestId } : {}), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}), ...(error.cause !== undefined ? { cause: error.cause } : {}) });
    return copy as unknown as E;
  }
  BILLED.set(error, usage);
  return error;
}

/** What the attempts a failed model call made were billed, as far as their responses said; undefined: nothing said. */
export function billedUsage(error: unknown): Usage | undefined {
  if (error instanceof ModelError) return error.usage;
  return error !== null && typeof error === 'object' ? BILLED.get(error) : undefined;
}
