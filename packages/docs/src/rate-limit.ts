// A minimum gap between requests to one host, with no lock shared between hosts.

export interface Clock {
  /** Milliseconds, monotonic enough for gaps. */
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realClock: Clock = {
  now: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(signal!.reason as Error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

export interface RateLimiter {
  /** Resolves when a request to `host` may start; waits for that host only. */
  acquire(host: string, signal?: AbortSignal): Promise<void>;
}

/**
 * Each host has its own next free slot, claimed synchronously before any wait, so concurrent callers
 * of one host queue up one gap apart while a caller of another host never waits on them (the prior
 * art slept under one client-wide lock, so a wait on one host held up every host).
 */
export function createRateLimiter(gapSeconds: number, clock: Clock = realClock): RateLimiter {
  const next = new Map<string, number>();
  const gap = Math.max(0, gapSeconds * 1000);
  return {
    async acquire(host, signal) {
      const now = clock.now();
      const slot = Math.max(now, next.get(host) ?? now);
      next.set(host, slot + gap);
      if (slot > now) await clock.sleep(slot - now, signal);
    },
  };
}
