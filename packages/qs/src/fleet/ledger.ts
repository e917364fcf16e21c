// One spend cap for a whole fleet, held in Redis: every model call reserves its estimate before it
// is made and settles the actual cost after, each step one Lua script, so no two machines can
// both take the last dollars.
import { InputError } from '@quickloop/cli-kit';
import type { LedgerBackend, Reservation } from '@quickloop/qs-agent/spend';
import { probe, spendKeys, type QueueTarget } from './queue.js';

// Money as whole micro-dollars: Redis adds integers exactly, and a float sum could drift past the cap.
// Costs round up and the cap down, so rounding never lets a call through that the dollars would not.
const micro = (usd: number, what: string, round: (n: number) => number = (n) => Math.ceil(n - 1e-6)): number => {
  if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0) throw new InputError(`spend ledger: ${what} must be a non-negative number of dollars (got ${String(usd)})`);
  return round(usd * 1e6);
};

// A call is granted only while spent + reserved + estimate <= cap; the first refusal trips the cap,
// and a tripped cap grants nothing more to anyone, so no new call starts on any machine.
const RESERVE = `
local cap = redis.call('HGET', KEYS[1], 'cap')
if not cap then return {-1, 0, 0, 0} end
cap = tonumber(cap)
local spent = tonumber(redis.call('HGET', KEYS[1], 'spent') or '0')
local reserved = tonumber(redis.call('HGET', KEYS[1], 'reserved') or '0')
local est = tonumber(ARGV[1])
if redis.call('HGET', KEYS[1], 'exhausted') == '1' or spent + reserved + est > cap then
  redis.call('HSET', KEYS[1], 'exhausted', '1')
  return {0, spent, reserved, cap}
end
local id = redis.call('HINCRBY', KEYS[1], 'next', 1)
redis.call('HINCRBY', KEYS[1], 'reserved', est)
redis.call('HSET', KEYS[2], id, est)
return {1, id, 0, 0}
`;

// The producer's cap is the sweep's from now on: a run of the same plan again with a larger cap goes
// on where the last stopped, what was spent under it still counted; a tripped cap stays tripped
// unless the new one leaves room.
const SET_CAP = `
redis.call('HSET', KEYS[1], 'cap', ARGV[1])
local spent = tonumber(redis.call('HGET', KEYS[1], 'spent') or '0')
local reserved = tonumber(redis.call('HGET', KEYS[1], 'reserved') or '0')
if spent + reserved < tonumber(ARGV[1]) then redis.call('HDEL', KEYS[1], 'exhausted') end
return 1
`;

const SETTLE = `
local est = redis.call('HGET', KEYS[2], ARGV[1])
if not est then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HINCRBY', KEYS[1], 'reserved', -tonumber(est))
redis.call('HINCRBY', KEYS[1], 'spent', tonumber(ARGV[2]))
return 1
`;

export interface RedisLedger extends LedgerBackend {
  reserve(estimateUsd: number): Promise<Reservation>;
  settle(reservationId: number, actualUsd: number): Promise<void>;
  /** Sets the sweep's cap (the producer does, before any attempt is enqueued). */
  setCap(capUsd: number): Promise<void>;
  /** The cap, what settled calls cost, what granted calls not yet settled may cost, and whether it tripped. */
  state(): Promise<{ capUsd: number; spentUsd: number; reservedUsd: number; exhausted: boolean }>;
  close(): void;
}

/** Opens the fleet's ledger for a plan: the producer sets its cap, and every worker's agents spend from it. */
export async function openRedisLedger(target: QueueTarget, plan: string, options: { commandTimeoutMs?: number } = {}): Promise<RedisLedger> {
  await probe(target);
  const { Redis } = await import('ioredis');
  // A Redis that stops answering fails the call within seconds: the agent then stops, unaccounted calls never start.
  const client = new Redis({ ...target.connection, maxRetriesPerRequest: 2, commandTimeout: options.commandTimeoutMs ?? 10_000 });
  client.on('error', () => undefined);
  const keys = spendKeys(plan);
  return {
    async setCap(capUsd) {
      await client.eval(SET_CAP, 1, keys[0], String(micro(capUsd, 'the cap', (n) => Math.floor(n + 1e-6))));
    },
    async reserve(estimateUsd) {
      const est = micro(estimateUsd, 'an estimate');
      const [ok, a, b, c] = (await client.eval(RESERVE, 2, keys[0], keys[1], String(est))) as [number, number, number, number];
      if (ok === -1) throw new InputError(`spend ledger: no cap is set for sweep ${plan.slice(0, 12)} in ${target.shown}`);
      return ok === 1 ? { granted: true, id: a } : { granted: false, spent: a / 1e6, reserved: b / 1e6, cap: c / 1e6 };
    },
    async settle(reservationId, actualUsd) {
      const actual = micro(actualUsd, 'a cost');
      // Settling twice (a retried message) changes nothing the second time.
      await client.eval(SETTLE, 2, keys[0], keys[1], String(reservationId), String(actual));
    },
    async state() {
      const h = await client.hgetall(keys[0]);
      return { capUsd: Number(h.cap ?? 0) / 1e6, spentUsd: Number(h.spent ?? 0) / 1e6, reservedUsd: Number(h.reserved ?? 0) / 1e6, exhausted: h.exhausted === '1' };
    },
    close() {
      client.disconnect();
    },
  };
}
