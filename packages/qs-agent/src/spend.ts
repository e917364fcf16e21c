// The spend ledger of a sweep (`qs run --max-spend USD`): every attempt's qs-agent asks it, over a Unix
// socket, before each model call and reports the cost after. On one machine qs run holds the cap
// itself; on a fleet each worker serves the socket from the cap the fleet shares in Redis. A cap
// checked between runs is blind to the calls of other workers in flight; this one is not.
//
// Wire: one JSON object a line each way, strictly request then answer.
//   → {"op":"reserve","usd":E}   ← {"granted":true,"id":N} | {"granted":false,"spent":S,"reserved":R,"cap":C}
//   → {"op":"settle","id":N,"usd":A}   ← {"ok":true}
//   ← {"error":"…"} for anything the ledger cannot answer: the agent stops rather than spend unaccounted.
// A call is granted only while settled + reserved + E ≤ cap; the first refusal trips the ledger, and a
// tripped ledger grants nothing more to anyone, so no new call starts anywhere.
import { once } from 'node:events';
import { chmodSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { UsageError } from '@quickloop/cli-kit';
import { DEFAULT_PRICE_BOOK, priceFor, ratesFor, type Message, type PriceBook, type ToolSpec } from '@quickloop/models/core';

export interface LedgerState {
  cap: number;
  /** Settled calls at their actual cost. */
  spent: number;
  /** Granted calls not yet settled, at their estimates. */
  reserved: number;
  granted: number;
  refused: number;
  /** A call was refused: the sweep starts nothing more. */
  tripped: boolean;
}

/** A reservation's answer: the call may start, or the cap would be crossed (or was, by someone). */
export type Reservation = { granted: true; id: number } | { granted: false; spent: number; reserved: number; cap: number };

/**
 * Whatever holds a cap: this process (one machine's sweep) or a store the whole fleet shares. A
 * method that throws is answered as an error, and the agent stops rather than spend unaccounted.
 */
export interface LedgerBackend {
  reserve(usd: number): Reservation | Promise<Reservation>;
  settle(id: number, usd: number): void | Promise<void>;
}

export interface SpendLedger {
  path: string;
  state(): LedgerState;
  /** Called once, on the first refusal. */
  onTrip(listener: () => void): void;
  close(): Promise<void>;
}

export interface LedgerServer {
  path: string;
  close(): Promise<void>;
}

const micro = (usd: number): number => Math.round(usd * 1e6) / 1e6;

/** A cap held in this process, for the agents of one sweep on one machine. */
export function memoryLedger(cap: number): LedgerBackend & { state(): LedgerState; onTrip(listener: () => void): void } {
  const s: LedgerState = { cap, spent: 0, reserved: 0, granted: 0, refused: 0, tripped: false };
  const open = new Map<number, number>();
  const listeners: (() => void)[] = [];
  let nextId = 1;
  return {
    reserve(usd) {
      // Amounts in millionths of a dollar, as costUsd rounds them, so a sum of many calls does not drift past the cap.
      if (s.tripped || micro(s.spent + s.reserved + usd) > cap) {
        s.refused += 1;
        if (!s.tripped) {
          s.tripped = true;
          for (const l of listeners) l();
        }
        return { granted: false, spent: micro(s.spent), reserved: micro(s.reserved), cap };
      }
      const id = nextId++;
      open.set(id, usd);
      s.reserved = micro(s.reserved + usd);
      s.granted += 1;
      return { granted: true, id };
    },
    settle(id, usd) {
      const est = open.get(id);
      if (est === undefined) throw new Error('no such reservation');
      open.delete(id);
      s.reserved = micro(s.reserved - est);
      s.spent = micro(s.spent + usd);
    },
    state: () => ({ ...s }),
    onTrip: (l) => listeners.push(l),
  };
}

/**
 * Serves a ledger on `path` (a socket file in a private folder the caller made) in the wire above.
 * Each connection is answered strictly in order, however long the backend takes.
 */
export async function serveSpendLedger(path: string, backend: LedgerBackend): Promise<LedgerServer> {
  const sockets = new Set<Socket>();
  const answer = async (line: string): Promise<Record<string, unknown>> => {
    let req: Record<string, unknown>;
    try {
      req = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return { error: 'not JSON' };
    }
    const usd = req.usd;
    if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0) return { error: 'usd must be a number ≥ 0' };
    try {
      if (req.op === 'reserve') return await backend.reserve(usd);
      if (req.op === 'settle') {
        if (typeof req.id !== 'number') return { error: 'no such reservation' };
        await backend.settle(req.id, usd);
        return { ok: true };
      }
    } catch (error) {
      return { error: (error as Error).message };
    }
    return { error: 'op must be reserve or settle' };
  };
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.setEncoding('utf8');
    let partial = '';
    let turn: Promise<void> = Promise.resolve();
    socket.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      // A client that never ends a line must not grow this without bound.
      if (partial.length > 4096) socket.destroy();
      for (const l of lines) {
        if (l.trim() === '') continue;
        turn = turn.then(async () => {
          const a = await answer(l);
          if (!socket.destroyed) socket.write(`${JSON.stringify(a)}\n`);
        });
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(path);
  await once(server, 'listening');
  chmodSync(path, 0o600);
  return {
    path,
    close: async () => {
      for (const c of sockets) c.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Listens on `path` for the agents of one sweep, holding `cap` in this process. */
export async function startSpendLedger(path: string, cap: number): Promise<SpendLedger> {
  const ledger = memoryLedger(cap);
  const server = await serveSpendLedger(path, ledger);
  return { path, state: ledger.state, onTrip: ledger.onTrip, close: server.close };
}

export interface LedgerClient {
  /** true: the call may start; false: the cap would be crossed (or was, by someone). */
  reserve(usd: number): Promise<Reservation>;
  settle(id: number, usd: number): Promise<void>;
  close(): void;
}

/** Connects to the ledger at `path`; every failure rejects, and the caller stops rather than spend unaccounted. */
export async function connectSpendLedger(path: string): Promise<LedgerClient> {
  const socket = createConnection(path);
  socket.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let partial = '';
  const waiting: { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }[] = [];
  let broken: Error | null = null;
  const fail = (e: Error): void => {
    broken ??= e;
    for (const w of waiting.splice(0)) w.reject(broken);
  };
  socket.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) {
      try {
        waiting.shift()?.resolve(JSON.parse(l) as Record<string, unknown>);
      } catch {
        fail(new Error('the spend ledger answered something that is not JSON'));
      }
    }
  });
  socket.on('error', (e) => fail(e));
  socket.on('close', () => fail(new Error('the spend ledger closed the connection')));
  const ask = (req: Record<string, unknown>): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      if (broken) return reject(broken);
      waiting.push({ resolve, reject });
      socket.write(`${JSON.stringify(req)}\n`);
    });
  return {
    async reserve(usd) {
      const r = await ask({ op: 'reserve', usd });
      if (r.granted === true && typeof r.id === 'number') return { granted: true, id: r.id };
      if (r.granted === false) return { granted: false, spent: Number(r.spent), reserved: Number(r.reserved ?? 0), cap: Number(r.cap) };
      throw new Error(`the spend ledger refused the request: ${String(r.error)}`);
    },
    async settle(id, usd) {
      const r = await ask({ op: 'settle', id, usd });
      if (r.ok !== true) throw new Error(`the spend ledger refused the settlement: ${String(r.error)}`);
    },
    close: () => socket.destroy(),
  };
}

/**
 * What a call can cost at most, as far as the request tells: every byte of the request counted as an
 * input token (a token of the byte-level tokenizers the vendors use is at least one byte) at the
 * dearest input rate (a cache write costs more than a fresh read), plus `maxTokens` of output
 * (reasoning included: it is billed as output and counted inside the output limit). null: unpriced.
 */
export function estimateCallUsd(book: PriceBook, model: string, request: { system: string; messages: readonly Message[]; tools: readonly ToolSpec[]; maxTokens: number }): number | null {
  const price = priceFor(book, model);
  if (!price) return null;
  const bytes = Buffer.byteLength(request.system) + Buffer.byteLength(JSON.stringify(request.messages)) + Buffer.byteLength(JSON.stringify(request.tools));
  // The bytes bound the prompt's tokens: a prompt of more bytes than a long-context tier's start may be billed at it.
  const rates = ratesFor(price, bytes);
  const inputRate = Math.max(rates.input, rates.cache_write, rates.cache_read);
  // Rounded up to the millionth: an estimate must never be below what it bounds.
  return Math.ceil(bytes * inputRate + request.maxTokens * rates.output) / 1e6;
}

/** The agents whose calls the ledger can see; the others cost nothing (replay, recorded) or are refused under a cap. */
const FREE_AGENTS = new Set(['replay', 'recorded']);
const UNMETERED = new Set(['claude-code', 'codex']);

/** `--spend-ledger` on an agent whose calls it cannot see would be a cap that is not kept: refused. A free agent needs none. */
export function checkLedgerAgent(agent: string): void {
  if (UNMETERED.has(agent)) throw new UsageError(`--spend-ledger cannot be kept with --agent ${agent}: its model calls are made inside the CLI, where they cannot be reserved one by one`);
}

/**
 * Checks before anything runs that `--max-spend` can be kept for this agent and model: a cap that cannot
 * be priced is not a cap. Returns whether qs-agent needs the ledger at all.
 */
export function checkSpendable(agent: string, model: string | undefined, book: PriceBook = DEFAULT_PRICE_BOOK): boolean {
  if (FREE_AGENTS.has(agent)) return false;
  if (UNMETERED.has(agent)) throw new UsageError(`--max-spend cannot be kept with --agent ${agent}: its model calls are made inside the CLI, where qs cannot stop them one by one`);
  if (model === undefined) throw new UsageError(`--max-spend needs a model to price (--model)`);
  if (!priceFor(book, model)) throw new UsageError(`--max-spend: model '${model}' is not in the price book, so its calls cannot be priced (give --prices FILE with it)`);
  return true;
}

/** --max-spend's value: USD, a finite number > 0. */
export function parseMaxSpend(value: unknown): number {
  const text = String(value).trim();
  const n = Number(text);
  // Written as an amount is: digits and a decimal point (Number() also reads 0x10 as 16 and 1e1 as 10).
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(text) || !Number.isFinite(n) || n <= 0) throw new UsageError(`--max-spend must be an amount in USD greater than 0, such as 5 or 0.50 (got ${String(value)})`);
  return n;
}
