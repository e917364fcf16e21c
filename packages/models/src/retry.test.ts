// Backoff arithmetic, the deadline rule and the cost helper, with injected randomness, sleep and clock.
import { describe, expect, it } from 'vitest';
import { costUsd } from './cost.js';
import { backoffMs, withRetries } from './retry.js';

describe('backoffMs', () => {
  it('doubles the ceiling per retry, caps it, and keeps at least half of it', () => {
    const low = { baseMs: 100, maxMs: 1000, random: () => 0 };
    const high = { baseMs: 100, maxMs: 1000, random: () => 0.999999 };
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffMs(n, low))).toEqual([50, 100, 200, 400, 500, 500]);
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffMs(n, high))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('treats a server hint as a floor', () => {
    expect(backoffMs(0, { baseMs: 100, random: () => 0 }, 3000)).toBe(3000);
    expect(backoffMs(3, { baseMs: 100, random: () => 0 }, 10)).toBe(400);
  });
});

describe('withRetries', () => {
  it('stops at the first non-retryable outcome, and after the retry budget', async () => {
    const seen: number[] = [];
    const first = await withRetries(async (n) => (seen.push(n), { value: n, retry: n < 1 }), { retries: 5, sleep: async () => {} });
    expect(first).toEqual({ value: 1, attempts: 2 });
    const budget = await withRetries(async (n) => ({ value: n, retry: true }), { retries: 2, sleep: async () => {} });
    expect(budget).toEqual({ value: 2, attempts: 3 });
  });

  it('never sleeps past the deadline', async () => {
    let clock = 0;
    const slept: number[] = [];
    const policy = { retries: 10, baseMs: 200, maxMs: 800, random: () => 0, now: () => clock, sleep: async (ms: number) => void (slept.push(ms), (clock += ms)) };
    const r = await withRetries(async (n) => ({ value: n, retry: true }), policy, { deadline: 1000 });
    // Waits of 100, 200, 400 end at 700; the next (400) would reach 1100, past the deadline of 1000.
    expect(slept).toEqual([100, 200, 400]);
    expect(r.attempts).toBe(4);
  });
});

describe('costUsd', () => {
  it('prices each counter per million tokens', () => {
    const price = { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15 };
    expect(costUsd({ input: 1_000_000, cache_read: 0, cache_write: 0, output: 0, reasoning: 0 }, price)).toBe(3);
    expect(costUsd({ input: 12, cache_read: 100, cache_write: 100, output: 7, reasoning: 3 }, price)).toBe(0.000546);
  });
});
