// Retries with jittered exponential backoff, always inside the caller's deadline; sleep and randomness are injectable.

export interface RetryPolicy {
  /** Retries after the first attempt (default 2). */
  retries?: number;
  /** The first backoff before jitter (default 500 ms); it doubles per retry. */
  baseMs?: number;
  /** The largest backoff (default 8000 ms). */
  maxMs?: number;
  /** Waits `ms`; rejects when `signal` aborts. Tests pass one that only records. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** A number in [0, 1); tests pin it. */
  random?: () => number;
  /** A monotonic clock in ms; tests may pin it. */
  now?: () => number;
}

export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The wait before retry number `retry` (0-based): "equal jitter", half fixed and half random, so parallel
 * callers spread out but never retry immediately. A server's retry-after hint is a floor.
 */
export function backoffMs(retry: number, policy: RetryPolicy, hintMs?: number): number {
  const base = policy.baseMs ?? 500;
  const max = policy.maxMs ?? 8000;
  const ceiling = Math.min(max, base * 2 ** retry);
  const jittered = ceiling / 2 + (ceiling / 2) * (policy.random ?? Math.random)();
  return Math.max(Math.round(jittered), hintMs ?? 0);
}

export interface Attempt<T> {
  value: T;
  /** Whether this outcome is a transient failure worth another attempt. */
  retry: boolean;
  retryAfterMs?: number;
}

/**
 * Runs `attempt` until it succeeds, fails for good, runs out of retries, or the next wait would cross
 * `deadline` (a `now()` value; no deadline when undefined). Returns the last outcome and the attempt count.
 */
export async function withRetries<T>(
  attempt: (n: number) => Promise<Attempt<T>>,
  policy: RetryPolicy,
  options: { deadline?: number; signal?: AbortSignal; onRetry?: (failed: { attempt: number; waitMs: number; value: T }) => void | Promise<void> } = {},
): Promise<{ value: T; attempts: number }> {
  const retries = policy.retries ?? 2;
  const now = policy.now ?? (() => performance.now());
  const sleep = policy.sleep ?? defaultSleep;
  for (let n = 0; ; n++) {
    const outcome = await attempt(n);
    if (!outcome.retry || n >= retries) return { value: outcome.value, attempts: n + 1 };
    const wait = backoffMs(n, policy, outcome.retryAfterMs);
    if (options.deadline !== undefined && now() + wait >= options.deadline) return { value: outcome.value, attempts: n + 1 };
    await options.onRetry?.({ attempt: n + 1, waitMs: wait, value: outcome.value });
    await sleep(wait, options.signal);
  }
}
