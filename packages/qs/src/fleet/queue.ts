// A sweep on a worker fleet: BullMQ over Redis. The producer (`qs run --queue URL`) enqueues one
// job per attempt and writes what comes back exactly as a local sweep writes it; each worker
// (`qs worker --queue URL`) runs an attempt with the local sweep's own attempt runner.
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { InputError, type Io, makeDirs, UsageError } from '@quickloop/cli-kit';
import { isTerminal, parseLine, type WireEvent } from '@quickloop/events';
import { serveSpendLedger } from '@quickloop/qs-agent/spend';
import type { AttemptStream } from '../results/fold.js';
import { agentOfArgv, writeQuickstartedTrace } from '../results/trace-export.js';
import type { Progress } from '../sweep/progress.js';
import { openRedisLedger, type RedisLedger } from './ledger.js';
import { runAttempt, type LoadedTask, type SweepOptions, type SweepOutcome } from '../sweep/sweep.js';

/** BullMQ's key prefix and queue name: every producer and worker of one Redis database meet here. */
export const PREFIX = 'quickloop';
export const QUEUE = 'attempts';

export interface QueueTarget {
  /** host, port, db and credentials, as ioredis takes them. */
  connection: { host: string; port: number; db: number; username?: string; password?: string; tls?: Record<string, never> };
  /** The URL without credentials: what a log line or sweep.plan may show. */
  shown: string;
}

/** `redis://[USER:PASS@]HOST[:PORT][/DB]` (or `rediss://` for TLS); anything else is a usage error naming the flag. */
export function parseQueueUrl(value: string, flag = '--queue'): QueueTarget {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${flag} ${value}: not a URL (expected redis://HOST:PORT/DB)`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new UsageError(`${flag}: ${url.protocol} is not redis: or rediss: (expected redis://HOST:PORT/DB)`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === '') throw new UsageError(`${flag} ${url.protocol}//…: the host is missing (expected redis://HOST:PORT/DB)`);
  const port = url.port === '' ? 6379 : Number(url.port);
  const path = url.pathname.replace(/^\//, '');
  if (!/^\d{0,5}$/.test(path)) throw new UsageError(`${flag}: the database must be a number (redis://HOST:PORT/DB; got /${path})`);
  if (url.search !== '' || url.hash !== '') throw new UsageError(`${flag}: options after ? or # are not read (redis://HOST:PORT/DB)`);
  const db = path === '' ? 0 : Number(path);
  const connection: QueueTarget['connection'] = { host, port, db };
  if (url.username !== '') connection.username = decodeURIComponent(url.username);
  if (url.password !== '') connection.password = decodeURIComponent(url.password);
  if (url.protocol === 'rediss:') connection.tls = {};
  return { connection, shown: `${url.protocol}//${url.host}/${db}` };
}

/** What a job carries: everything a worker needs to run the attempt as the producer's machine would. */
export interface AttemptJob {
  v: 1;
  plan: string;
  slug: string;
  name: string;
  attempt: number;
  label: string;
  lines: WireEvent[];
  argvOf: SweepOptions['argvOf'];
  /** The sweep has a spend cap: the worker gives the agent a ledger socket backed by the fleet's cap in Redis. */
  spend?: true;
}

/** What a worker sends back: the attempt's whole stream, with a count and a hash so a cut one is seen. */
export type AttemptReturn = { v: 1; lines: string[]; count: number; sha256: string; usage: boolean } | { v: 1; stopped: 'producer' | 'spend' };

/** One job per attempt, its id the plan's identity and the attempt: enqueueing a plan again adds nothing. */
export function jobId(plan: string, slug: string, attempt: number): string {
  // BullMQ keeps `:` for its own keys; the plan is fixed-length hex, so the id still reads back.
  return `${plan}-${slug}-${attempt}`;
}

/** The spend cap's hash for a plan (ledger.ts reads and writes it with Lua). */
export const spendKeys = (plan: string): [string, string] => [`${PREFIX}:spend:${plan}`, `${PREFIX}:spend:${plan}:reservations`];

/** Set when a producer is stopped: a worker that took one of its attempts in the meantime skips it. */
export const stopKey = (plan: string): string => `${PREFIX}:stop:${plan}`;

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

// ioredis and BullMQ are loaded only by the commands that use them: every other `qs` start-up stays as light as it was.
async function bull(): Promise<typeof import('bullmq')> {
  return import('bullmq');
}

/** Fails fast, with the URL and the reason, when Redis cannot be reached (ioredis would retry for ever). */
export async function probe(target: QueueTarget, flag = '--queue'): Promise<void> {
  const { Redis } = await import('ioredis');
  const client = new Redis({ ...target.connection, lazyConnect: true, connectTimeout: 5000, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  let cause = '';
  client.on('error', (e: Error) => {
    cause ||= e.message;
  });
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    // The first error says why (ECONNREFUSED, a DNS failure, NOAUTH); the one connect() rejects with only that it closed.
    throw new InputError(`${flag} ${target.shown}: cannot reach Redis (${cause || (error as Error).message || 'connection failed'})`);
  } finally {
    client.disconnect();
  }
}

export interface FleetOptions {
  tasks: LoadedTask[];
  repeat: number;
  argvOf: SweepOptions['argvOf'];
  out: string | null;
  progress: Progress;
  label: (slug: string, attempt: number) => string;
  target: QueueTarget;
  /** The sweep's identity (plan_sha256). */
  plan: string;
  /** The fleet's spend cap, set in Redis for this plan before any attempt is enqueued (see ledger.ts). */
  spendCapUsd?: number;
}

export interface FleetOutcome extends SweepOutcome {
  notRun: number;
  /** Attempts a worker did not start because the cap had run out. */
  spendStopped: number;
  /** The cap at the end, when the sweep had one. */
  spend?: { capUsd: number; spentUsd: number; reservedUsd: number; exhausted: boolean };
}

/** The producer: enqueues every attempt (attempt-major, as a local sweep starts them) and collects each stream once. */
export async function produce(o: FleetOptions, io: Io): Promise<FleetOutcome> {
  await probe(o.target);
  const { Queue, QueueEvents, Job } = await bull();
  const connection = { ...o.target.connection, maxRetriesPerRequest: null };
  const queue = new Queue(QUEUE, { connection, prefix: PREFIX });
  const { Redis } = await import('ioredis');
  const keys = new Redis(connection);
  keys.on('error', () => undefined);
  const events = new QueueEvents(QUEUE, { connection, prefix: PREFIX });
  const ledger = o.spendCapUsd === undefined ? undefined : await openRedisLedger(o.target, o.plan);
  queue.on('error', (e) => io.stderr.write(`qs run: queue: ${e.message}\n`));
  events.on('error', (e) => io.stderr.write(`qs run: queue events: ${e.message}\n`));
  const attempts: AttemptStream[] = [];
  let usageErrors = 0;
  let notRun = 0;
  let spendStopped = 0;
  let spend: FleetOutcome['spend'];
  const order = Array.from({ length: o.repeat }, (_, a) => o.tasks.map((task) => ({ task, attempt: a + 1 }))).flat();
  const pending = new Map(order.map((j) => [jobId(o.plan, j.task.slug, j.attempt), j]));
  let wake: () => void = () => undefined;
  const record = (task: LoadedTask, attempt: number, lines: string[]): void => {
    const label = o.label(task.slug, attempt);
    let fd: number | null = null;
    if (o.out !== null) {
      const dir = join(o.out, task.slug, String(attempt));
      makeDirs(dir);
      fd = openSync(join(dir, 'events.ndjson'), 'w');
    }
    const parsed: WireEvent[] = [];
    for (const [i, raw] of lines.entries()) {
      parsed.push(parseLine(raw, i + 1, `${label} (from the queue)`).event);
      if (fd !== null) writeSync(fd, `${raw}\n`);
      io.stdout.write(`${raw}\n`);
    }
    if (fd !== null) {
      closeSync(fd);
      writeQuickstartedTrace(join(o.out as string, task.slug, String(attempt)), { slug: task.slug, attempt, events: parsed }, agentOfArgv(o.argvOf['qs-agent']));
    }
    attempts.push({ slug: task.slug, attempt, events: parsed });
    const t = parsed.at(-1) as unknown as Record<string, unknown>;
    const verdict = t.type === 'run.completed' ? String(t.label) : t.type === 'run.interrupted' ? 'INTERRUPTED' : 'INCONCLUSIVE';
    const detail = t.type === 'run.completed' ? `${String(t.classification)} — ${String(t.detail)}` : t.type === 'run.failed' ? `${String(t.failed_stage)}: ${String(t.error)}` : 'interrupted';
    o.progress.finished(label, verdict, detail);
  };
  /** A stream qs writes itself for an attempt the fleet could not run: every saved stream ends. */
  const failedStream = (error: string): string[] => [JSON.stringify({ v: 1, type: 'run.failed', ts: io.now().toISOString(), run_id: io.newId(), stage: 'qs', failed_stage: 'qs worker', error })];
  const take = async (id: string): Promise<void> => {
    const job = pending.get(id);
    if (!job) return;
    // The state first, then the job: read the other way round, a job finishing in between looks completed with no return value.
    const state = await queue.getJobState(id);
    if (state !== 'completed' && state !== 'failed') return;
    const found = await Job.fromId(queue, id);
    if (!found || !pending.has(id)) return;
    if (state === 'failed') {
      pending.delete(id);
      record(job.task, job.attempt, failedStream(`the fleet gave up on this attempt: ${found.failedReason}`));
    } else if (state === 'completed') {
      pending.delete(id);
      const back = found.returnvalue as unknown;
      const checked = checkReturn(back);
      if (checked === 'stopped') {
        notRun += 1;
        if ((back as { stopped?: unknown }).stopped === 'spend') spendStopped += 1;
      }
      else if (typeof checked === 'string') record(job.task, job.attempt, failedStream(checked));
      else {
        record(job.task, job.attempt, checked.lines);
        if (checked.usage) usageErrors += 1;
      }
    }
    if (pending.size === 0) wake();
  };
  const onStop = (): void => wake();
  io.signal.addEventListener('abort', onStop, { once: true });
  try {
    // Listening before anything is added, so no completion is missed; a poll below catches what an event stream drops.
    events.on('active', ({ jobId: id }) => {
      const job = pending.get(id);
      if (job) o.progress.started(o.label(job.task.slug, job.attempt));
    });
    events.on('completed', ({ jobId: id }) => void take(id).catch((e: Error) => io.stderr.write(`qs run: queue: ${e.message}\n`)));
    events.on('failed', ({ jobId: id }) => void take(id).catch((e: Error) => io.stderr.write(`qs run: queue: ${e.message}\n`)));
    await events.waitUntilReady();
    await queue.waitUntilReady();
    // A new run of a stopped plan starts it again.
    await keys.del(stopKey(o.plan));
    if (ledger !== undefined && o.spendCapUsd !== undefined) await ledger.setCap(o.spendCapUsd);
    await queue.addBulk(
      order.map(({ task, attempt }) => ({
        name: 'attempt',
        data: { v: 1, plan: o.plan, slug: task.slug, name: task.name, attempt, label: o.label(task.slug, attempt), lines: task.lines, argvOf: o.argvOf, ...(ledger ? { spend: true as const } : {}) } satisfies AttemptJob,
        // attempts: a worker stopped on purpose hands its attempt back by failing it; a crashed one is found stalled.
        opts: { jobId: jobId(o.plan, task.slug, attempt), attempts: 5, backoff: { type: 'fixed', delay: 100 }, removeOnComplete: { age: 7 * 24 * 3600 }, removeOnFail: { age: 7 * 24 * 3600 } },
      })),
    );
    while (pending.size > 0 && !io.signal.aborted) {
      // Already finished (a plan enqueued before) or an event lost to a reconnect: asked again now and then.
      for (const id of [...pending.keys()]) {
        if (io.signal.aborted) break;
        await take(id);
      }
      if (pending.size === 0 || io.signal.aborted) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    if (io.signal.aborted) {
      // The fleet's new work stops: the stop key covers an attempt a worker is taking right now.
      await keys.set(stopKey(o.plan), '1', 'EX', 7 * 24 * 3600);
      for (const id of pending.keys()) {
        const job = await Job.fromId(queue, id);
        // A running attempt is locked by its worker and cannot be removed; it finishes there, unread.
        await job?.remove().catch(() => undefined);
      }
    }
    if (ledger) spend = await ledger.state();
  } finally {
    io.signal.removeEventListener('abort', onStop);
    await events.close();
    await queue.close();
    keys.disconnect();
    ledger?.close();
  }
  return { attempts, interrupted: io.signal.aborted, usageErrors, notRun: notRun + (io.signal.aborted ? pending.size : 0), spendStopped, ...(spend ? { spend } : {}) };
}

/** A worker's answer, checked: whole (count and hash agree, ends in a terminal event), stopped, or why not. */
export function checkReturn(back: unknown): { lines: string[]; usage: boolean } | 'stopped' | string {
  if (typeof back !== 'object' || back === null) return 'the worker sent back no stream';
  const r = back as Record<string, unknown>;
  if (r.stopped === 'producer' || r.stopped === 'spend') return 'stopped';
  const lines = r.lines;
  if (!Array.isArray(lines) || !lines.every((l) => typeof l === 'string')) return 'the worker sent back no stream';
  if (lines.length !== r.count || sha256(lines.join('\n')) !== r.sha256) return `the worker's stream arrived cut (${lines.length} of ${String(r.count)} lines, or different bytes)`;
  const last = lines.at(-1);
  let type = '';
  try {
    type = String((JSON.parse(last ?? '') as { type?: unknown }).type);
  } catch {
    return 'the worker sent back a stream whose last line is not an event';
  }
  if (!isTerminal(type)) return 'the worker sent back a stream with no terminal event';
  return { lines, usage: r.usage === true };
}

export interface WorkerOptions {
  target: QueueTarget;
  concurrency: number;
  /** How long an attempt stays a silent worker's before another may take it. */
  lockMs: number;
  allowUnenforced: boolean;
  progress: Pick<Progress, 'started' | 'line' | 'finished' | 'say'>;
}

/** Whether argv gives one of these flags in any spelling yargs takes for it: `--a-b`, `--aB`, either with `=VALUE`. */
function namesFlag(argv: readonly string[] | undefined, flags: readonly string[]): boolean {
  const kebab = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  return (argv ?? []).some((a) => a.startsWith('--') && flags.includes(kebab(a.slice(2).split('=')[0]!)));
}

/** Why a job cannot be run here, or null: malformed, or asking for more than this worker allows. */
export function refuseJob(data: unknown, allowUnenforced: boolean): string | null {
  if (typeof data !== 'object' || data === null) return 'the job carries no attempt';
  const d = data as Record<string, unknown>;
  if (d.v !== 1) return `the job's format v${String(d.v)} is not this worker's (v1): upgrade the fleet together`;
  if (typeof d.plan !== 'string' || !/^[0-9a-f]{64}$/.test(d.plan)) return 'the job has no plan';
  if (typeof d.slug !== 'string' || !/^[a-z0-9._-]+$/.test(d.slug) || typeof d.name !== 'string' || typeof d.label !== 'string') return 'the job names no task';
  if (!Number.isInteger(d.attempt) || (d.attempt as number) < 1) return 'the job has no attempt number';
  if (!Array.isArray(d.lines) || d.lines.length === 0 || (d.lines[0] as { type?: unknown } | null)?.type !== 'task.loaded') return 'the job carries no task.loaded';
  const argv = d.argvOf as Record<string, unknown> | null;
  for (const stage of ['qs-sandbox', 'qs-agent', 'qs-check']) {
    const list = argv?.[stage];
    if (!Array.isArray(list) || !list.every((a) => typeof a === 'string')) return `the job has no arguments for ${stage}`;
  }
  if (d.spend !== undefined && d.spend !== true) return 'the job\'s spend flag is not true or absent';
  // The ledger socket is the worker's own, made for each attempt: a path from the job would be another machine's, or anything.
  if (namesFlag((argv as Record<string, string[]>)['qs-agent'], ['spend-ledger'])) return 'the job names a spend ledger; a worker serves its own from the fleet\'s cap';
  // The registry is where the install cache's packuments come from: one named by the job could feed every later attempt on this worker forged ones.
  if (namesFlag((argv as Record<string, string[]>)['qs-check'], ['npm-registry', 'npm-cafile'])) return "the job names npm's registry; a worker asks its own npm";
  // Nor raise the limits that keep a fork bomb or a balloon from the worker's machine.
  if (namesFlag((argv as Record<string, string[]>)['qs-sandbox'], ['max-processes', 'max-memory', 'max-tmp', 'max-shm'])) return "the job sets the sandbox's limits; a worker keeps its own";
  // Whoever can write to the queue must not turn a worker's sandbox off: that is the worker's own choice.
  const sandbox = (argv as Record<string, string[]>)['qs-sandbox'] as string[];
  if (!allowUnenforced && (sandbox.includes('--allow-unenforced') || sandbox.join(' ').includes('--backend local'))) return 'the attempt asks for the unenforced local backend, which this worker does not allow (start it with --allow-unenforced)';
  return null;
}

/** The worker: takes attempts until stopped, runs each in its own sandbox, and sends back its stream. */
export async function work(o: WorkerOptions, io: Io): Promise<{ ran: number }> {
  await probe(o.target);
  const { Worker, UnrecoverableError } = await bull();
  const { Redis } = await import('ioredis');
  const connection = { ...o.target.connection, maxRetriesPerRequest: null };
  const keys = new Redis(connection);
  keys.on('error', () => undefined);
  const running = new Set<() => void>();
  const onAbort = (): void => {
    for (const interrupt of running) interrupt();
  };
  io.signal.addEventListener('abort', onAbort, { once: true });
  let ran = 0;
  // One client per sweep this worker serves, opened when its first capped attempt arrives.
  const ledgers = new Map<string, Promise<RedisLedger>>();
  const ledgerOf = (plan: string): Promise<RedisLedger> => {
    let l = ledgers.get(plan);
    if (!l) {
      l = openRedisLedger(o.target, plan);
      // A failed open is not kept: the next attempt tries again.
      l.catch(() => ledgers.delete(plan));
      ledgers.set(plan, l);
    }
    return l;
  };
  /** Sandbox folders of finished attempts, still being removed: waited for before the worker ends. */
  const leaving = new Set<Promise<void>>();
  const worker = new Worker(
    QUEUE,
    async (job): Promise<AttemptReturn> => {
      const why = refuseJob(job.data, o.allowUnenforced);
      if (why !== null) throw new UnrecoverableError(why);
      const data = job.data as AttemptJob;
      if ((await keys.exists(stopKey(data.plan))) === 1) return { v: 1, stopped: 'producer' };
      // The fleet's cap ran out: no attempt of this sweep starts on any machine.
      if ((await keys.hget(spendKeys(data.plan)[0], 'exhausted')) === '1') return { v: 1, stopped: 'spend' };
      const lines: string[] = [];
      let partial = '';
      let usage = false;
      // runAttempt writes each event as one line: collected whole, and shown on this worker's stdout as a local sweep shows it.
      const collect = new Writable({
        write(chunk: Buffer, _enc, done) {
          const text = partial + chunk.toString();
          const parts = text.split('\n');
          partial = parts.pop() ?? '';
          lines.push(...parts);
          io.stdout.write(chunk, () => done());
        },
      });
      const task: LoadedTask = { slug: data.slug, name: data.name, lines: data.lines };
      const progress = { ...o.progress, close: () => undefined } as Progress;
      // A capped sweep: this attempt's agent reserves from the fleet's cap through a socket of its own,
      // in a private folder no sandbox sees, gone with the attempt.
      let argvOf = data.argvOf;
      let spendDir: string | undefined;
      let served: { close(): Promise<void> } | undefined;
      try {
        if (data.spend === true) {
          spendDir = mkdtempSync(join(io.env.TMPDIR || tmpdir(), 'qs-spend-'));
          served = await serveSpendLedger(join(spendDir, 'ledger.sock'), await ledgerOf(data.plan));
          argvOf = { ...argvOf, 'qs-agent': [...argvOf['qs-agent'], '--spend-ledger', join(spendDir, 'ledger.sock')] };
        }
        const done = await runAttempt(task, data.attempt, { tasks: [task], repeat: 1, workers: 1, argvOf, out: null, progress, label: () => data.label }, { ...io, stdout: collect }, io.newId(), running);
        usage = done.usage;
        leaving.add(done.leaving);
        void done.leaving.finally(() => leaving.delete(done.leaving));
      } finally {
        await served?.close();
        if (spendDir !== undefined) rmSync(spendDir, { recursive: true, force: true });
      }
      if (partial !== '') lines.push(partial);
      // Stopped here, not by the producer: the attempt goes back to the queue for another worker.
      if (io.signal.aborted) throw new Error('the worker was stopped during the attempt');
      ran += 1;
      return { v: 1, lines, count: lines.length, sha256: sha256(lines.join('\n')), usage };
    },
    { connection, prefix: PREFIX, concurrency: o.concurrency, lockDuration: o.lockMs, stalledInterval: o.lockMs, maxStalledCount: 3 },
  );
  worker.on('error', (e) => o.progress.say(`qs worker: queue: ${e.message}`));
  worker.on('failed', (job, e) => {
    if (job && e instanceof UnrecoverableError) o.progress.say(`qs worker: refused job ${job.id ?? '?'}: ${e.message}`);
  });
  await worker.waitUntilReady();
  o.progress.say(`qs worker: taking attempts from ${o.target.shown} (concurrency ${o.concurrency})`);
  await new Promise<void>((resolve) => {
    if (io.signal.aborted) resolve();
    io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  // Running attempts were interrupted above; close waits for their handlers to hand them back.
  await worker.close();
  await Promise.all(leaving);
  io.signal.removeEventListener('abort', onAbort);
  keys.disconnect();
  for (const l of ledgers.values()) await l.then((x) => x.close()).catch(() => undefined);
  return { ran };
}
