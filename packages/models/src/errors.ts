// ModelError: a failed model call with its kind, and whether trying again could help.
import { CliError } from '@quickloop/cli-kit/errors';
import type { ErrorKind } from './types.js';

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
  constructor(
    errorKind: ErrorKind,
    message: string,
    options: { transient?: boolean; status?: number; requestId?: string; retryAfterMs?: number; keyRefused?: boolean; noCredit?: boolean; cause?: unknown } = {},
  ) {
    super('internal', message, options.cause === undefined ? undefined : { cause: options.cause });
    this.errorKind = errorKind;
    this.transient = options.transient ?? false;
    this.status = options.status;
    this.requestId = options.requestId;
    this.retryAfterMs = options.retryAfterMs;
    this.keyRefused = options.keyRefused ?? options.status === 401;
    this.noCredit = options.noCredit ?? false;
  }
}
