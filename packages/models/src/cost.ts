// Cost from the five counters and a price per million tokens; prices are data the caller supplies, never code.
import type { Usage } from './types.js';

/** USD per million tokens. Reasoning is billed as output, so it has no price of its own. */
export interface Rates {
  input: number;
  cache_read: number;
  cache_write: number;
  output: number;
  /** Cache writes that live an hour (Anthropic's are twice the input rate); absent: at `cache_write`. */
  cache_write_1h?: number;
}

/**
 * A model's rates, and the dearer ones some vendors bill for a long prompt (Gemini 2.5 Pro, Claude Sonnet's
 * 1M context): a call whose prompt (input, cache reads and cache writes together) is over `above` tokens
 * is billed at `long_context` for all of its tokens.
 */
export interface Price extends Rates {
  long_context?: Rates & { above: number };
}

/** The prompt's tokens as the vendors count them for a long-context tier: cached ones included. */
export const promptTokens = (usage: Pick<Usage, 'input' | 'cache_read' | 'cache_write'>): number => usage.input + usage.cache_read + usage.cache_write;

/** The rates a call with a prompt of `prompt` tokens is billed at. */
export function ratesFor(price: Price, prompt: number): Rates {
  return price.long_context !== undefined && prompt > price.long_context.above ? price.long_context : price;
}

export function costUsd(usage: Usage, price: Price): number {
  const r = ratesFor(price, promptTokens(usage));
  const hour = Math.min(usage.cache_write, usage.cache_write_1h ?? 0);
  const micro = usage.input * r.input + usage.cache_read * r.cache_read + (usage.cache_write - hour) * r.cache_write + hour * (r.cache_write_1h ?? r.cache_write) + usage.output * r.output;
  // Rounded to a millionth of a dollar so sums over many calls stay stable.
  return Math.round(micro) / 1e6;
}
