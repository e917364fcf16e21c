// The spend ledger over its real Unix socket: what it grants, when it trips, and what a broken peer gets.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePriceBook, type Message } from '@quickloop/models/core';
import { checkSpendable, connectSpendLedger, estimateCallUsd, parseMaxSpend, startSpendLedger, type SpendLedger } from './spend.js';

const dirs: string[] = [];
const ledgers: SpendLedger[] = [];
afterEach(async () => {
  for (const l of ledgers.splice(0)) await l.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function ledger(cap: number): Promise<SpendLedger> {
  const dir = mkdtempSync(join(tmpdir(), 'qs-spend-test-'));
  dirs.push(dir);
  const l = await startSpendLedger(join(dir, 'l.sock'), cap);
  ledgers.push(l);
  return l;
}

/** One raw exchange, bypassing the client: what a peer that speaks nonsense gets. */
function rawAsk(path: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = createConnection(path);
    let got = '';
    s.setEncoding('utf8');
    s.on('data', (c: string) => {
      got += c;
      if (got.includes('\n')) {
        s.destroy();
        resolve(got.trim());
      }
    });
    s.on('error', reject);
    s.write(line);
  });
}

describe('the spend ledger', () => {
  it('grants while settled + reserved + the estimate stay within the cap, then refuses everyone for good', async () => {
    const l = await ledger(1);
    expect(statSync(l.path).mode & 0o777).toBe(0o600);
    const a = await connectSpendLedger(l.path);
    const b = await connectSpendLedger(l.path);
    const r1 = await a.reserve(0.4);
    const r2 = await b.reserve(0.4);
    expect(r1.granted && r2.granted).toBe(true);
    // 0.8 reserved: 0.3 more would cross 1.
    expect(await a.reserve(0.3)).toEqual({ granted: false, spent: 0, reserved: 0.8, cap: 1 });
    expect(l.state().tripped).toBe(true);
    // Settling frees room, but a tripped ledger starts nothing anywhere.
    if (r1.granted) await a.settle(r1.id, 0.01);
    expect(await b.reserve(0.000001)).toMatchObject({ granted: false });
    if (r2.granted) await b.settle(r2.id, 0.02);
    expect(l.state()).toMatchObject({ spent: 0.03, reserved: 0, granted: 2, refused: 2 });
    a.close();
    b.close();
  });

  it('a call exactly at the cap is granted; cents summed in millionths do not drift past it', async () => {
    const l = await ledger(0.3);
    const c = await connectSpendLedger(l.path);
    for (let i = 0; i < 3; i++) {
      const r = await c.reserve(0.1);
      expect(r.granted, `call ${i + 1}`).toBe(true);
      if (r.granted) await c.settle(r.id, 0.1);
    }
    expect(await c.reserve(0.000001)).toMatchObject({ granted: false });
    c.close();
  });

  it('never grants more than the cap to many clients asking at once', async () => {
    const l = await ledger(1);
    const clients = await Promise.all(Array.from({ length: 16 }, () => connectSpendLedger(l.path)));
    const answers = await Promise.all(clients.map((c) => c.reserve(0.15)));
    // 6 × 0.15 = 0.9 fits, a seventh would not.
    expect(answers.filter((a) => a.granted)).toHaveLength(6);
    expect(l.state().reserved).toBeCloseTo(0.9, 9);
    for (const c of clients) c.close();
  });

  it('the overrun bound: spent ≤ cap + the overruns of the calls outstanding at the last grant', async () => {
    // A call costs more than its estimate (a provider billing what the request did not show):
    // settlements raise `spent` past what was reserved, and no further grant can follow.
    const l = await ledger(1);
    const [a, b] = await Promise.all([connectSpendLedger(l.path), connectSpendLedger(l.path)]);
    const ra = await a.reserve(0.5);
    const rb = await b.reserve(0.5);
    if (!ra.granted || !rb.granted) throw new Error('both fit');
    await a.settle(ra.id, 0.7);
    await b.settle(rb.id, 0.6);
    expect(await a.reserve(0.01)).toMatchObject({ granted: false });
    const s = l.state();
    expect(s.spent).toBeCloseTo(1.3, 9);
    expect(s.spent).toBeLessThanOrEqual(s.cap + (0.7 - 0.5) + (0.6 - 0.5) + 1e-9);
    a.close();
    b.close();
  });

  it('answers nonsense with an error and keeps serving; a settlement of an unknown reservation is refused', async () => {
    const l = await ledger(1);
    expect(JSON.parse(await rawAsk(l.path, 'not json\n'))).toEqual({ error: 'not JSON' });
    expect(JSON.parse(await rawAsk(l.path, '{"op":"reserve","usd":-1}\n'))).toMatchObject({ error: expect.stringContaining('usd') });
    expect(JSON.parse(await rawAsk(l.path, '{"op":"reserve","usd":"0.1"}\n'))).toMatchObject({ error: expect.stringContaining('usd') });
    expect(JSON.parse(await rawAsk(l.path, '{"op":"spend","usd":1}\n'))).toMatchObject({ error: expect.stringContaining('op') });
    expect(JSON.parse(await rawAsk(l.path, '{"op":"settle","id":99,"usd":0}\n'))).toEqual({ error: 'no such reservation' });
    // A settlement can be made once: a replayed one would free room twice.
    const c = await connectSpendLedger(l.path);
    const r = await c.reserve(0.5);
    if (!r.granted) throw new Error('granted');
    await c.settle(r.id, 0.5);
    await expect(c.settle(r.id, 0)).rejects.toThrow(/no such reservation/);
    expect(l.state()).toMatchObject({ spent: 0.5, reserved: 0, tripped: false });
    c.close();
  });

  it('fails closed: no ledger at the path, or a ledger that goes away, rejects the call', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qs-spend-test-'));
    dirs.push(dir);
    await expect(connectSpendLedger(join(dir, 'absent.sock'))).rejects.toThrow(/ENOENT/);
    const l = await startSpendLedger(join(dir, 'l.sock'), 1);
    const c = await connectSpendLedger(l.path);
    await l.close();
    await expect(c.reserve(0.1)).rejects.toThrow();
    c.close();
  });
});

describe('estimateCallUsd', () => {
  const book = parsePriceBook(JSON.stringify({ as_of: '2026-12-01', models: { m: { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15 } } }), 'p.json');
  it('counts every byte of the request at the dearest input rate, plus all of max output at the output rate', () => {
    const messages: Message[] = [{ role: 'user', blocks: [{ type: 'text', text: 'é'.repeat(1000) }] }];
    const bytes = Buffer.byteLength('sys') + Buffer.byteLength(JSON.stringify(messages)) + Buffer.byteLength('[]');
    expect(estimateCallUsd(book, 'm', { system: 'sys', messages, tools: [], maxTokens: 1000 })).toBe(Math.ceil(bytes * 3.75 + 1000 * 15) / 1e6);
    // A snapshot id is priced as its family, as usdFor prices it.
    expect(estimateCallUsd(book, 'm-20260101', { system: '', messages: [], tools: [], maxTokens: 1 })).toBeGreaterThan(0);
    expect(estimateCallUsd(book, 'other', { system: '', messages: [], tools: [], maxTokens: 1 })).toBeNull();
  });

  it("bounds a request longer than a long-context tier's start at the tier's rates, never below what it may be billed", () => {
    const tiered = parsePriceBook(JSON.stringify({ as_of: '2026-12-01', models: { p: { input: 1, cache_read: 0.1, cache_write: 0, output: 10, long_context: { above: 100, input: 2, cache_read: 0.2, cache_write: 0, output: 15 } } } }), 'p.json');
    const short: Message[] = [{ role: 'user', blocks: [{ type: 'text', text: 'x' }] }];
    const long: Message[] = [{ role: 'user', blocks: [{ type: 'text', text: 'x'.repeat(200) }] }];
    const bytes = (m: Message[]): number => Buffer.byteLength(JSON.stringify(m)) + Buffer.byteLength('[]');
    expect(estimateCallUsd(tiered, 'p', { system: '', messages: short, tools: [], maxTokens: 10 })).toBe(Math.ceil(bytes(short) * 1 + 10 * 10) / 1e6);
    expect(estimateCallUsd(tiered, 'p', { system: '', messages: long, tools: [], maxTokens: 10 })).toBe(Math.ceil(bytes(long) * 2 + 10 * 15) / 1e6);
  });
});

describe('checkSpendable and parseMaxSpend', () => {
  it('refuses a cap that cannot be kept or priced, and frees the agents that cost nothing', () => {
    expect(checkSpendable('replay', undefined)).toBe(false);
    expect(checkSpendable('recorded', undefined)).toBe(false);
    expect(checkSpendable('anthropic', 'claude-sonnet-4-6')).toBe(true);
    expect(() => checkSpendable('openai-chat', 'local-coder')).toThrow("--max-spend: model 'local-coder' is not in the price book");
    expect(() => checkSpendable('claude-code', undefined)).toThrow('--max-spend cannot be kept with --agent claude-code');
    for (const bad of ['', '0', '-1', 'abc', 'Infinity', 'NaN', '1e400', '0x10', '1e1', '$5', '5 USD', '1_000']) expect(() => parseMaxSpend(bad), bad).toThrow('--max-spend must be an amount in USD greater than 0');
    expect(['5', '0.50', '.5', ' 2.25 '].map(parseMaxSpend)).toEqual([5, 0.5, 0.5, 2.25]);
    expect(parseMaxSpend(' 2.5 ')).toBe(2.5);
  });
});
