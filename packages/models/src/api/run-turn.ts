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
): Promise<{ value: T; attempts: number }> {
  const signal = request.signal;
  const { value, attempts } = await withRetries<{ ok: T } | { error: Error }>(
    async () => {
      try {
        return { value: { ok: await call() }, retry: false };
      } catch (error) {
        const e = toModelError(error, adapter, signal);
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
