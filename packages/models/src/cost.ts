// Cost from the five counters and a price per million tokens; prices are data the caller supplies, never code.
import type { Usage } from './types.js';

/** USD per million tokens. Reasoning is billed as output, so it has no price of its own. */
export interface Price {
  input: number;
  cache_read: number;
  cache_write: number;
  output: number;
}

export function costUsd(usage: Usage, price: Price): number {
  const micro = usage.input * price.input + usage.cache_read * price.cache_read + usage.cache_write * price.cache_write + usage.output * price.output;
  // Rounded to a millionth of a dollar so sums over many calls stay stable.
  return Math.round(micro) / 1e6;
}
