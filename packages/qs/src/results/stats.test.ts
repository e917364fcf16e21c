// Fisher's exact test and Wilson intervals against values derived by hand (exact fractions) and
// against SciPy's fisher_exact, computed apart from this code and written down here.
import { describe, expect, it } from 'vitest';
import { fisherExact, smallestReachableP, wilson } from './stats.js';

describe('fisherExact (two-sided)', () => {
  it.each([
    // 5/5 before, 0/5 after: only the observed table and its mirror are as extreme, 2/C(10,5).
    [[5, 0, 0, 5], 2 / 252],
    // 1/3 vs 3/3: tables 3/15, 9/15, 3/15; the two of p 3/15 count.
    [[1, 2, 3, 0], 6 / 15],
    // 5/5 vs 4/6 (the prior art's "inside the noise, p=0.455"): (15 + 10)/55.
    [[5, 0, 4, 2], 25 / 55],
    // Fisher's tea-tasting table: (1 + 16 + 16 + 1)/70.
    [[3, 1, 1, 3], 34 / 70],
  ])('%j gives the hand-derived %d', (cells, p) => {
    const [a, b, c, d] = cells as [number, number, number, number];
    expect(fisherExact(a, b, c, d)).toBeCloseTo(p, 14);
  });

  it.each([
    [[10, 2, 3, 15], 0.0005367241191434357],
    [[20, 5, 12, 13], 0.037758447311795694],
    [[0, 7, 6, 1], 0.004662004662004661],
    [[100, 0, 95, 5], 0.059383210468586585],
  ])('%j matches scipy.stats.fisher_exact (%d)', (cells, p) => {
    const [a, b, c, d] = cells as [number, number, number, number];
    expect(fisherExact(a, b, c, d)).toBeCloseTo(p, 12);
  });

  it('is symmetric in rows and in columns, and 1 when a margin is empty', () => {
    expect(fisherExact(2, 7, 6, 1)).toBeCloseTo(fisherExact(6, 1, 2, 7), 15);
    expect(fisherExact(2, 7, 6, 1)).toBeCloseTo(fisherExact(7, 2, 1, 6), 15);
    expect(fisherExact(0, 0, 3, 4)).toBe(1);
    expect(fisherExact(3, 0, 4, 0)).toBe(1);
    expect(fisherExact(0, 3, 0, 4)).toBe(1);
  });

  it('stays exact and finite for large tables (log-factorials, no overflow)', () => {
    const p = fisherExact(900, 100, 850, 150);
    expect(Number.isFinite(p)).toBe(true);
    expect(p).toBeGreaterThan(0);
    expect(p).toBeLessThan(0.01);
    expect(fisherExact(500, 500, 500, 500)).toBeCloseTo(1, 12);
  });

  it('is exact where p is exactly 1/20: such a table is not significant at 0.05 (as the prior art reads it)', () => {
    // [[0, 2], [12, 2]]: the observed table and every rarer one add up to 1/20 in exact fractions;
    // summed from rounded log-probabilities it came out a hair under 0.05 and counted as significant.
    for (const cells of [[0, 2, 12, 2], [12, 2, 0, 2], [2, 2, 0, 12], [0, 2, 19, 4], [19, 4, 0, 2], [4, 2, 19, 0]] as const) {
      const p = fisherExact(...cells);
      expect(p).toBe(0.05);
      expect(p < 0.05).toBe(false);
    }
  });

  it('gives hand-derived fractions to the last bit on small tables, however many tables tie', () => {
    expect(fisherExact(5, 0, 0, 5)).toBe(2 / 252);
    expect(fisherExact(1, 2, 3, 0)).toBe(6 / 15);
    expect(fisherExact(5, 0, 4, 2)).toBe(25 / 55);
    expect(fisherExact(3, 1, 1, 3)).toBe(34 / 70);
  });

  it('refuses cells that are not counts', () => {
    expect(() => fisherExact(-1, 0, 0, 1)).toThrow(RangeError);
    expect(() => fisherExact(1.5, 0, 0, 1)).toThrow(RangeError);
    expect(() => fisherExact(Number.NaN, 0, 0, 1)).toThrow(RangeError);
  });

  it('smallestReachableP: 3 vs 3 can never reach 0.05 (best 0.1), 4 vs 4 can', () => {
    expect(smallestReachableP(3, 3)).toBeCloseTo(2 / 20, 14);
    expect(smallestReachableP(4, 4)).toBeCloseTo(2 / 70, 14);
    expect(smallestReachableP(0, 4)).toBe(1);
  });
});

describe('wilson (95%)', () => {
  const z = 1.959963984540054;
  // The closed form (k + z²/2 ± z·sqrt(k(n−k)/n + z²/4)) / (n + z²), rearranged apart from the code's.
  const closed = (k: number, n: number): [number, number] => {
    const r = z * Math.sqrt((k * (n - k)) / n + (z * z) / 4);
    return [(k + (z * z) / 2 - r) / (n + z * z), (k + (z * z) / 2 + r) / (n + z * z)];
  };

  it('0/n is [0, z²/(n+z²)] and n/n is [n/(n+z²), 1]', () => {
    expect(wilson(0, 5)).toEqual({ low: 0, high: expect.closeTo((z * z) / (5 + z * z), 14) as number });
    expect(wilson(5, 5).low).toBeCloseTo(5 / (5 + z * z), 14);
    expect(wilson(5, 5).high).toBe(1);
    expect(wilson(0, 5).high).toBeCloseTo(0.43448246478317476, 12);
  });

  it.each([
    [1, 3],
    [4, 5],
    [7, 20],
    [1, 1000],
  ])('%d/%d matches the closed form', (k, n) => {
    const [low, high] = closed(k, n);
    expect(wilson(k, n).low).toBeCloseTo(low, 13);
    expect(wilson(k, n).high).toBeCloseTo(high, 13);
  });

  it('contains the rate and stays inside [0, 1]', () => {
    for (let n = 1; n <= 30; n += 1) {
      for (let k = 0; k <= n; k += 1) {
        const { low, high } = wilson(k, n);
        expect(low).toBeGreaterThanOrEqual(0);
        expect(high).toBeLessThanOrEqual(1);
        expect(low).toBeLessThanOrEqual(k / n + 1e-12);
        expect(high).toBeGreaterThanOrEqual(k / n - 1e-12);
      }
    }
  });

  it('refuses an impossible count', () => {
    expect(() => wilson(4, 3)).toThrow(RangeError);
    expect(() => wilson(0, 0)).toThrow(RangeError);
  });
});
