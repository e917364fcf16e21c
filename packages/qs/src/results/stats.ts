// The statistics of a comparison: Fisher's exact test on a 2x2 table and Wilson score intervals.
// Exact (in integers, or from log-factorials for large tables), with no library: the figures a docs team acts on must be checkable.

export interface Interval {
  low: number;
  high: number;
}

/** z for a two-sided 95% interval. */
const Z95 = 1.959963984540054;

/** Wilson score interval for `successes` of `n`: sensible at 0/n and n/n, unlike the normal one. */
export function wilson(successes: number, n: number, z = Z95): Interval {
  if (!Number.isInteger(successes) || !Number.isInteger(n) || n <= 0 || successes < 0 || successes > n) {
    throw new RangeError(`wilson: need 0 <= successes <= n and n > 0 (got ${successes}/${n})`);
  }
  const p = successes / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  // At the extremes the formula's own rounding can land a hair outside [0, 1] or off the exact bound.
  return { low: successes === 0 ? 0 : Math.max(0, centre - half), high: successes === n ? 1 : Math.min(1, centre + half) };
}

const logFactorials: number[] = [0];
function logFactorial(n: number): number {
  for (let i = logFactorials.length; i <= n; i += 1) logFactorials[i] = (logFactorials[i - 1] as number) + Math.log(i);
  return logFactorials[n] as number;
}
const logChoose = (n: number, k: number): number => logFactorial(n) - logFactorial(k) - logFactorial(n - k);

/**
 * Two-sided Fisher exact p for the table [[a, b], [c, d]] (rows: before/after; columns: pass/fail):
 * the probability, with the margins fixed, of every table at most as likely as the one observed.
 * Up to EXACT_UP_TO runs in all it is summed in integers and divided once, so a p that is exactly
 * 0.05 (12/14 against 0/2 is 1/20) is 0.05, never a rounding under it that reads as significant;
 * larger tables go through log-factorials, where a relative tolerance keeps exact ties together.
 */
export function fisherExact(a: number, b: number, c: number, d: number): number {
  for (const x of [a, b, c, d]) if (!Number.isInteger(x) || x < 0) throw new RangeError(`fisherExact: cells must be non-negative integers (got ${a}, ${b}, ${c}, ${d})`);
  const row1 = a + b;
  const row2 = c + d;
  const col1 = a + c;
  const n = row1 + row2;
  if (row1 === 0 || row2 === 0 || col1 === 0 || col1 === n) return 1;
  return n <= EXACT_UP_TO ? fisherInIntegers(a, row1, row2, col1) : fisherInLogs(a, row1, row2, col1);
}

/** Tables this size sum in BigInt in well under a millisecond each; beyond, the logs are quicker. */
const EXACT_UP_TO = 20_000;

function choose(n: number, k0: number): bigint {
  const k = Math.min(k0, n - k0);
  let r = 1n;
  for (let i = 1; i <= k; i += 1) r = (r * BigInt(n - k + i)) / BigInt(i);
  return r;
}

/** num/den (0 <= num <= den) as the nearest double: 64 bits of the quotient, then one rounding. */
function quotient(num: bigint, den: bigint): number {
  if (num === 0n) return 0;
  const shift = den.toString(2).length - num.toString(2).length + 64;
  let v = Number((num << BigInt(shift)) / den);
  let s = shift;
  // 2 ** -s underflows past s = 1074 even where v * 2 ** -s does not yet.
  for (; s > 1000; s -= 1000) v *= 2 ** -1000;
  return v * 2 ** -s;
}

function fisherInIntegers(a: number, row1: number, row2: number, col1: number): number {
  // The table with x passes before has weight C(row1, x) * C(row2, col1 - x); they sum to C(n, col1).
  const lo = Math.max(0, col1 - row2);
  const hi = Math.min(row1, col1);
  const observed = choose(row1, a) * choose(row2, col1 - a);
  let term = choose(row1, lo) * choose(row2, col1 - lo);
  let sum = 0n;
  let all = true;
  for (let x = lo; x <= hi; x += 1) {
    if (term <= observed) sum += term;
    else all = false;
    // The next weight from this one; the division is exact, since both are integers.
    if (x < hi) term = (term * BigInt(row1 - x) * BigInt(col1 - x)) / (BigInt(x + 1) * BigInt(row2 - col1 + x + 1));
  }
  return all ? 1 : quotient(sum, choose(row1 + row2, col1));
}

function fisherInLogs(a: number, row1: number, row2: number, col1: number): number {
  const logDenom = logChoose(row1 + row2, col1);
  const logP = (x: number): number => logChoose(row1, x) + logChoose(row2, col1 - x) - logDenom;
  const lo = Math.max(0, col1 - row2);
  const hi = Math.min(row1, col1);
  const observed = logP(a);
  let p = 0;
  let all = true;
  for (let x = lo; x <= hi; x += 1) {
    const lp = logP(x);
    if (lp <= observed + 1e-7) p += Math.exp(lp);
    else all = false;
  }
  // Every table counted: the sum is 1 exactly, whatever the rounding of its terms says.
  return all ? 1 : Math.min(1, p);
}

/** The smallest p any outcome of n1 vs n2 runs could give (an all-pass side against an all-fail side). */
export function smallestReachableP(n1: number, n2: number): number {
  if (n1 === 0 || n2 === 0) return 1;
  return Math.min(fisherExact(n1, 0, 0, n2), fisherExact(0, n1, n2, 0));
}
