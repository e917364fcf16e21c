// One spend cap for a whole fleet, held in Redis: every model call reserves its estimate before it
// is made and settles the actual cost after, each step one Lua script, so no two machines can
// both take the last dollars.
import { randomBytes } from 'node:crypto';
import { InputError } from '@quickloop/cli-kit';
import { probe, spendKeys, type QueueTarget } from './queue.js';

export type Reservation = { ok: true; id: string } | { ok: false; remainingUsd: number };

/** What a spend cap is to whoever spends: the in-process ledger and this one take the same two calls. */
export interface SpendLedger {
  reserve(estimateUsd: number): Promise<Reservation>;
  settle(reservationId: string, actualUsd: number): Promise<void>;
}

// Money as whole micro-dollars: Redis adds integers exactly, and a float sum could drift past the cap.
const micro = (usd: number, what: string): number => {
  if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0) throw new InputError(`spend ledger: ${what} must be a non-negative number of dollars (got ${String(usd)})`);
  return Math.ceil(usd * 1e6 - 1e-6);
};

const RESERVE = `
local cap = redis.call('HGET', KEYS[1], 'cap')
if not cap then return {-1, '0'} end
cap = tonumber(cap)
local used = tonumber(redis.call('HGET', KEYS[1], 'used') or '0')
local est = tonumber(ARGV[1])
if used + est > cap then
  redis.call('HSET', KEYS[1], 'exhausted', '1')
  return {0, tostring(cap - used)}
end
redis.call('HINCRBY', KEYS[1], 'used', est)
redis.call('HSET', KEYS[2], ARGV[2], est)
return {1, tostring(cap - used - est)}
`;

const SETTLE = `
local est = redis.call('HGET', KEYS[2], ARGV[1])
if not est then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HINCRBY', KEYS[1], 'used', tonumber(ARGV[2]) - tonumber(est))
return 1
`;


export interface RedisLedger extends SpendLedger {
  /** Dollars reserved or spent so far, and the cap. */
  state(): Promise<{ capUsd: number; usedUsd: number; exhausted: boolean }>;
  close(): void;
}

/**
 * Opens the fleet's ledger for a plan. The producer gives `capUsd` (set once: a second producer of
 * the same plan keeps the first cap and what was spent under it); a worker opens it without.
 */
export async function openRedisLedger(target: QueueTarget, plan: string, capUsd?: number): Promise<RedisLedger> {
  await probe(target);
  const { Redis } = await import('ioredis');
  const client = new Redis({ ...target.connection, maxRetriesPerRequest: null });
  client.on('error', () => undefined);
  const keys = spendKeys(plan);
  if (capUsd !== undefined) await client.hsetnx(keys[0], 'cap', String(micro(capUsd, 'the cap')));
  return {
    async reserve(estimateUsd) {
      const est = micro(estimateUsd, 'an estimate');
      const id = randomBytes(8).toString('hex');
      const [ok, left] = (await client.eval(RESERVE, 2, keys[0], keys[1], String(est), id)) as [number, string];
      if (ok === -1) throw new InputError(`spend ledger: no cap is set for sweep ${plan.slice(0, 12)} in ${target.shown}`);
      return ok === 1 ? { ok: true, id } : { ok: false, remainingUsd: Math.max(0, Number(left)) / 1e6 };
    },
    async settle(reservationId, actualUsd) {
      const actual = micro(actualUsd, 'a cost');
      // Settling twice (a retried message) changes nothing the second time.
      await client.eval(SETTLE, 2, keys[0], keys[1], reservationId, String(actual));
    },
    async state() {
      const h = await client.hgetall(keys[0]);
      return { capUsd: Number(h.cap ?? 0) / 1e6, usedUsd: Number(h.used ?? 0) / 1e6, exhausted: h.exhausted === '1' };
    },
    close() {
      client.disconnect();
    },
  };
}
