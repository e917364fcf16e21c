import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { DEFAULT_PRICE_BOOK, parsePriceBook, priceFor, usdFor } from './prices.js';
import { ZERO_USAGE } from './types.js';

const book = parsePriceBook(JSON.stringify({ as_of: '2026-12-01', models: { 'gpt-5': { input: 1, cache_read: 0.1, cache_write: 0, output: 10 }, 'gpt-5-mini': { input: 0.25, cache_read: 0, cache_write: 0, output: 2 } } }), 'book.json');

describe('the price book', () => {
  it('is the dated prices.json, embedded', () => {
    const file = JSON.parse(readFileSync(new URL('../prices.json', import.meta.url), 'utf8')) as { as_of: string; models: Record<string, unknown> };
    expect(DEFAULT_PRICE_BOOK.as_of).toBe(file.as_of);
    expect(Object.keys(DEFAULT_PRICE_BOOK.models)).toEqual(Object.keys(file.models));
  });

  it('matches the exact id, then the longest key a snapshot id extends with "-", and nothing else', () => {
    expect(priceFor(book, 'gpt-5')?.input).toBe(1);
    expect(priceFor(book, 'gpt-5-2025-08-07')?.input).toBe(1);
    expect(priceFor(book, 'gpt-5-mini-2025-08-07')?.input).toBe(0.25);
    for (const id of ['gpt-5.1', 'gpt-50', 'GPT-5', 'constructor', '__proto__', 'toString', '']) expect(priceFor(book, id), id).toBeUndefined();
  });

  it('prices usage, and says null (never 0) for a model it does not know', () => {
    expect(usdFor(book, 'gpt-5', { ...ZERO_USAGE, input: 1_000_000, cache_read: 1_000_000, output: 100_000, reasoning: 50_000 })).toBeCloseTo(1 + 0.1 + 1, 9);
    expect(usdFor(book, 'mystery', { ...ZERO_USAGE, input: 5 })).toBeNull();
    expect(usdFor(book, 'mystery', ZERO_USAGE)).toBeNull();
  });

  it("bills a long prompt at the model's long-context rates, cached tokens counted in the prompt", () => {
    const long = parsePriceBook(JSON.stringify({ as_of: '2026-12-01', models: { pro: { input: 1, cache_read: 0.1, cache_write: 2, output: 10, long_context: { above: 200_000, input: 2, cache_read: 0.2, cache_write: 4, output: 15 } } } }), 'b.json');
    // At the tier's start: the short rates.
    expect(usdFor(long, 'pro', { ...ZERO_USAGE, input: 200_000, output: 1_000_000 })).toBeCloseTo(0.2 + 10, 9);
    // One token over, counting cache reads and writes: every token at the long rates, output included.
    expect(usdFor(long, 'pro', { ...ZERO_USAGE, input: 100_000, cache_read: 50_000, cache_write: 50_001, output: 1_000_000 })).toBeCloseTo(0.2 + 0.01 + 0.200004 + 15, 6);
    expect(usdFor(DEFAULT_PRICE_BOOK, 'gemini-2.5-pro', { ...ZERO_USAGE, input: 300_000, output: 100_000 })).toBeCloseTo(0.75 + 1.5, 9);
    expect(usdFor(DEFAULT_PRICE_BOOK, 'gemini-2.5-pro', { ...ZERO_USAGE, input: 100_000, output: 100_000 })).toBeCloseTo(0.125 + 1, 9);
    const bad = (lc: unknown) => () => parsePriceBook(JSON.stringify({ as_of: '2026-01-01', models: { m: { input: 1, cache_read: 0, cache_write: 0, output: 1, long_context: lc } } }), 'p.json');
    expect(bad(3)).toThrow('p.json: models.m.long_context must be an object with above, input, cache_read, cache_write, output');
    expect(bad({ input: 1, cache_read: 0, cache_write: 0, output: 1 })).toThrow('p.json: models.m.long_context.above must be a whole number of prompt tokens ≥ 0');
    expect(bad({ above: 1.5, input: 1, cache_read: 0, cache_write: 0, output: 1 })).toThrow('p.json: models.m.long_context.above must be a whole number');
    expect(bad({ above: 10, input: 1, cache_read: 0, cache_write: 0 })).toThrow('p.json: models.m.long_context.output must be a number ≥ 0');
  });

  it('bills the part of the cache writes made for an hour at its own rate, where the book has one (Anthropic: twice the input rate, against 1.25 times for five minutes)', () => {
    const b = parsePriceBook(JSON.stringify({ as_of: '2026-12-01', models: { c: { input: 2, cache_read: 0.2, cache_write: 2.5, cache_write_1h: 4, output: 10, long_context: { above: 1000, input: 4, cache_read: 0.4, cache_write: 5, cache_write_1h: 8, output: 15 } }, d: { input: 2, cache_read: 0.2, cache_write: 2.5, output: 10 } } }), 'b.json');
    // 400 written, 300 of them for an hour.
    expect(usdFor(b, 'c', { ...ZERO_USAGE, cache_write: 400, cache_write_1h: 300 })).toBe((100 * 2.5 + 300 * 4) / 1e6);
    // A book without the rate bills every write at cache_write, as before; a count over the writes is held to them.
    expect(usdFor(b, 'd', { ...ZERO_USAGE, cache_write: 400, cache_write_1h: 300 })).toBe((400 * 2.5) / 1e6);
    expect(usdFor(b, 'c', { ...ZERO_USAGE, cache_write: 100, cache_write_1h: 300 })).toBe((100 * 4) / 1e6);
    // The long-context tier has its own.
    expect(usdFor(b, 'c', { ...ZERO_USAGE, cache_write: 2000, cache_write_1h: 1000 })).toBe((1000 * 5 + 1000 * 8) / 1e6);
    for (const [id, p] of Object.entries(DEFAULT_PRICE_BOOK.models)) if (id.startsWith('claude-')) expect(p.cache_write_1h, id).toBe(p.input * 2);
    expect(() => parsePriceBook(JSON.stringify({ as_of: '2026-01-01', models: { m: { input: 1, cache_read: 0, cache_write: 0, cache_write_1h: -1, output: 1 } } }), 'p.json')).toThrow('p.json: models.m.cache_write_1h must be a number ≥ 0');
  });

  it("prices a dated snapshot whose list price is not its family's at its own entry", () => {
    expect(priceFor(DEFAULT_PRICE_BOOK, 'gpt-4o-2024-05-13')?.input).toBe(5);
    expect(priceFor(DEFAULT_PRICE_BOOK, 'gpt-4o-2024-08-06')?.input).toBe(2.5);
  });

  it('refuses a bad book in one line naming the file and the field', () => {
    const bad = (doc: unknown) => () => parsePriceBook(typeof doc === 'string' ? doc : JSON.stringify(doc), 'p.json');
    expect(bad('{')).toThrow(/^p\.json: not JSON/);
    expect(bad([])).toThrow('p.json: the price book must be an object with as_of and models');
    expect(bad({ models: {} })).toThrow('p.json: as_of must be a date (YYYY-MM-DD)');
    expect(bad({ as_of: '2026-01-01', models: [] })).toThrow('p.json: models must be an object');
    expect(bad({ as_of: '2026-01-01', models: { m: 3 } })).toThrow('p.json: models.m must be an object with input, cache_read, cache_write, output');
    expect(bad({ as_of: '2026-01-01', models: { m: { input: 1, cache_read: 0, cache_write: 0 } } })).toThrow('p.json: models.m.output must be a number ≥ 0');
    expect(bad({ as_of: '2026-01-01', models: { m: { input: '1', cache_read: 0, cache_write: 0, output: 1 } } })).toThrow('p.json: models.m.input must be a number ≥ 0');
    const proto = parsePriceBook('{"as_of":"2026-01-01","models":{"__proto__":{"input":1,"cache_read":0,"cache_write":0,"output":1}}}', 'p.json');
    expect(priceFor(proto, '__proto__')?.input).toBe(1);
    expect(priceFor(proto, 'x')).toBeUndefined();
  });
});
