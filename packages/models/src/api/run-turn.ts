// The retry loop every API adapter shares: one policy, one error taxonomy, attempts counted.
import { InterruptedError } from '@quickloop/cli-kit/errors';
import { ModelError } from '../errors.js';
import { withRetries, type RetryPolicy } from '../retry.js';
import { toModelError } from './classify.js';
import type { TurnRequest } from '../types.js';

export async function retryingTurn<T>(
  adapter: string,
  policy: RetryPolicy,
  request: Pick<TurnRequest, 'signal' | 'deadline' | 'onRetry'>,
  call: () => Promise<T>,
  scrub: (text: string) => string = (s) => s,
): Promise<{ value: T; attempts: number }> {
  const signal = request.signal;
  const { value, attempts } = await withRetries<{ ok: T } | { error: Error }>(
    async () => {
      try {
        return { value: { ok: await call() }, retry: false };
      } catch (error) {
        const e = scrubbed(toModelError(error, adapter, signal), scrub);
        if (!(e instanceof ModelError)) throw e;
        return { value: { error: e }, retry: e.transient, ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}) };
      }
    },
    policy,
    {
      ...(signal ? { signal } : {}),
      ...(request.deadline !== undefined ? { deadline: request.deadline } : {}),
      ...(request.onRetry ? { onRetry: ({ attempt, waitMs, value }) => request.onRetry?.({ attempt, waitMs, error: (value as { error: ModelError }).error }) } : {}),
    },
  ).catch((error: unknown) => {
    // An abort during a backoff wait rejects the sleep, not a request.
    if (signal?.aborted) throw new InterruptedError(`${adapter}: request aborted`);
    throw error;
  });
  if ('error' in value) throw value.error;
  return { value: value.ok, attempts };
}

/**
 * The error without the adapter's secrets in its message: an SDK's message may quote the request URL
 * (and a gateway's key in its query) or a body that echoes it. The SDK's error goes with it as the
 * cause only when neither had anything to scrub: the message may be the vendor's words alone while
 * the cause's message and stack quote the whole body.
 */
export function scrubbed(e: Error, scrub: (text: string) => string): Error {
  if (!(e instanceof ModelError)) return e;
  const message = scrub(e.message);
  const cause = e.cause instanceof Error ? `${e.cause.message}\n${e.cause.stack ?? ''}` : e.cause === undefined ? '' : String(e.cause);
  if (message === e.message && scrub(cause) === cause) return e;
  const { errorKind, transient, status, requestId, retryAfterMs, keyRefused, noCredit } = e;
  return new ModelError(errorKind, message, { transient, keyRefused, noCredit, ...(status !== undefined ? { status } : {}), ...(requestId !== undefined ? { requestId } : {}), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
}
