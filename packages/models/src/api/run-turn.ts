// The retry loop every API adapter shares: one policy, one error taxonomy, attempts counted, and what
// each failed attempt was billed kept.
import { InterruptedError } from '@quickloop/cli-kit/errors';
import { ModelError, withBilled } from '../errors.js';
import { withRetries, type RetryPolicy } from '../retry.js';
import { toModelError } from './classify.js';
import { addUsage, ZERO_USAGE, type TurnRequest, type Usage } from '../types.js';

/** What one attempt's response said it was billed so far; an adapter sets it as usage arrives (a stream's message_start, its last chunk). */
export interface Meter {
  usage?: Usage;
}

const billed = (u: Usage | undefined): u is Usage => u !== undefined && u.input + u.cache_read + u.cache_write + u.output > 0;

export async function retryingTurn<T>(
  adapter: string,
  policy: RetryPolicy,
  request: Pick<TurnRequest, 'signal' | 'deadline' | 'onRetry'>,
  call: (meter: Meter) => Promise<T>,
  scrub: (text: string) => string = (s) => s,
): Promise<{ value: T; attempts: number; failedUsage?: Usage }> {
  const signal = request.signal;
  /** The attempts that failed after their responses reported usage: billed all the same. */
  let failed: Usage | undefined;
  let meter: Meter = {};
  const { value, attempts } = await withRetries<{ ok: T } | { error: Error }>(
    async () => {
      meter = {};
      try {
        return { value: { ok: await call(meter) }, retry: false };
      } catch (error) {
        let e = scrubbed(toModelError(error, adapter, signal), scrub);
        if (billed(meter.usage)) {
          failed = addUsage(failed ?? ZERO_USAGE, meter.usage);
          e = withBilled(e, meter.usage);
        }
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
    // An abort during a backoff wait rejects the sleep, not a request. Whatever ends the loop here (an
    // abort, or the caller's onRetry refusing another attempt) takes what the attempts were billed with it.
    const e = signal?.aborted ? new InterruptedError(`${adapter}: request aborted`) : error;
    throw failed !== undefined && e instanceof Error ? withBilled(e, failed) : e;
  });
  // The error of the last attempt carries the sum over every attempt, as a turn's error says it.
  if ('error' in value) throw failed !== undefined ? withBilled(value.error, failed) : value.error;
  return { value: value.ok, attempts, ...(failed !== undefined ? { failedUsage: failed } : {}) };
}

/**
 * The result read from a response, whatever shape the response had: a list holding something the
 * reader did not expect is an unreadable answer (a harness ModelError), never a TypeError.
 */
export function readable<T>(adapter: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof ModelError) throw error;
    throw new ModelError('harness', `${adapter}: unreadable response: ${String((error as Error)?.message ?? error)}`, { cause: error });
  }
}

/** The objects of a list a response gave (a null or a number where an item should be carries nothing). */
export const objects = <T>(list: unknown): T[] => (Array.isArray(list) ? list.filter((x): x is T => x !== null && typeof x === 'object' && !Array.isArray(x)) : []);

/** A word a response gave as text (a number or a flag written as one), or undefined for nothing or anything else. */
export function asText(v: unknown): string | undefined {
  if (typeof v === 'string') return v === '' ? undefined : v;
  return typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
}

/** A call's id and name as the loop needs them: the vendor's id when it is a non-empty string (else `newId()`), the name as text. */
export function callIdentity(id: unknown, name: unknown, newId: () => string): { id: string; name: string } {
  return { id: typeof id === 'string' && id !== '' ? id : newId(), name: typeof name === 'string' ? name : name === undefined || name === null ? '' : String(name) };
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
  const { errorKind, transient, status, requestId, retryAfterMs, keyRefused, noCredit, usage } = e;
  return new ModelError(errorKind, message, { transient, keyRefused, noCredit, ...(status !== undefined ? { status } : {}), ...(requestId !== undefined ? { requestId } : {}), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}), ...(usage !== undefined ? { usage } : {}) });
}
