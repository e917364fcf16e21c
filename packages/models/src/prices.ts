// The price book: USD per million tokens per model, dated; matched by exact id, then by the longest key a snapshot id extends.
import { UsageError } from '@quickloop/cli-kit/errors';
import { costUsd, type Price, type Rates } from './cost.js';
import { PRICE_BOOK_JSON } from './prices.generated.js';
import type { Usage } from './types.js';

export interface PriceBook {
  as_of: string;
  models: Record<string, Price>;
}

const COUNTERS = ['input', 'cache_read', 'cache_write', 'output'] as const;

/** The four rates of `p` (at `at` in the book), each a number ≥ 0. */
function rates(p: Record<string, unknown>, at: string, source: string): Rates {
  const out = {} as Rates;
  for (const k of COUNTERS) {
    const v = p[k];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new UsageError(`${source}: ${at}.${k} must be a number ≥ 0 (USD per million tokens)`);
    out[k] = v;
  }
  const hour = p.cache_write_1h;
  if (hour !== undefined) {
    if (typeof hour !== 'number' || !Number.isFinite(hour) || hour < 0) throw new UsageError(`${source}: ${at}.cache_write_1h must be a number ≥ 0 (USD per million tokens)`);
    out.cache_write_1h = hour;
  }
  return out;
}

/** Checks a price book read from `source` (a file name, for the message); throws a one-line UsageError naming the field. */
export function parsePriceBook(text: string, source: string): PriceBook {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${source}: not JSON: ${(error as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new UsageError(`${source}: the price book must be an object with as_of and models`);
  const d = doc as Record<string, unknown>;
  if (typeof d.as_of !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(d.as_of)) throw new UsageError(`${source}: as_of must be a date (YYYY-MM-DD)`);
  if (!d.models || typeof d.models !== 'object' || Array.isArray(d.models)) throw new UsageError(`${source}: models must be an object of model id → prices`);
  // No prototype: a model id such as `constructor` or `__proto__` is only ever a key.
  const models: Record<string, Price> = Object.create(null) as Record<string, Price>;
  for (const [id, p] of Object.entries(d.models as Record<string, unknown>)) {
    if (!p || typeof p !== 'object' || Array.isArray(p)) throw new UsageError(`${source}: models.${id} must be an object with ${COUNTERS.join(', ')}`);
    const price: Price = rates(p as Record<string, unknown>, `models.${id}`, source);
    const long = (p as Record<string, unknown>).long_context;
    if (long !== undefined) {
      const at = `models.${id}.long_context`;
      if (!long || typeof long !== 'object' || Array.isArray(long)) throw new UsageError(`${source}: ${at} must be an object with above, ${COUNTERS.join(', ')}`);
      const above = (long as Record<string, unknown>).above;
      if (typeof above !== 'number' || !Number.isInteger(above) || above < 0) throw new UsageError(`${source}: ${at}.above must be a whole number of prompt tokens ≥ 0`);
      price.long_context = { above, ...rates(long as Record<string, unknown>, at, source) };
    }
    models[id] = price;
  }
  return { as_of: d.as_of, models };
}

/** The book shipped with quickloop (prices.json, embedded at build time). */
export const DEFAULT_PRICE_BOOK: PriceBook = parsePriceBook(PRICE_BOOK_JSON, 'prices.json');

/**
 * The price of `model`: its exact id, else the longest key K with `model` starting `K-` (providers
 * report dated snapshots such as `claude-sonnet-4-5-20250929`). `gpt-5.1` does not match `gpt-5`:
 * a guess would be a wrong number, and no number is better (usd null).
 */
export function priceFor(book: PriceBook, model: string): Price | undefined {
  if (Object.hasOwn(book.models, model)) return book.models[model];
  let best: string | undefined;
  for (const key of Object.keys(book.models)) if (model.startsWith(`${key}-`) && (best === undefined || key.length > best.length)) best = key;
  return best === undefined ? undefined : book.models[best];
}

/** USD for `usage` on `model`, or null when the book has no price for it (never 0). */
export function usdFor(book: PriceBook, model: string, usage: Usage): number | null {
  const price = priceFor(book, model);
  return price ? costUsd(usage, price) : null;
}
