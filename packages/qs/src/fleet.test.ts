// The worker fleet through the real binaries: a real redis-server on a free loopback port, a
// producer (`qs run --queue`) and workers (`qs worker`) as separate processes, real bwrap sandboxes.
// A worker SIGKILLed mid-attempt loses nothing; Ctrl-C on the producer stops the fleet's new work;
// the spend ledger never lets concurrent reservers past the cap.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { redisServerPath, startMockServer, startRedis, type MockServer, type RecordedRequest, type RedisServer } from '@quickloop/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkReturn, jobId, parseQueueUrl, refuseJob } from './fleet/queue.js';
import { openRedisLedger } from './fleet/ledger.js';
import { connectSpendLedger, serveSpendLedger } from '@quickloop/qs-agent/spend';
import { planSha256 } from './sweep/plan.js';
import { VERSION } from './version.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const QS = join(ROOT, 'packages', 'qs', 'bin', 'qs.js');
const MAP = ['--docs-map', `https://docs.greeter.test/=${join(ROOT, 'fixtures', 'docs-site')}`];
const PLAN = 'a'.repeat(64);

describe('the queue URL, the jobs and the streams a worker sends back', () => {
  it('reads redis://HOST:PORT/DB and shows it without credentials', () => {
    const t = parseQueueUrl('redis://user:s%40cret@10.0.0.5:6380/3');
    expect(t.connection).toEqual({ host: '10.0.0.5', port: 6380, db: 3, username: 'user', password: 's@cret' });
    expect(t.shown).toBe('redis://10.0.0.5:6380/3');
    expect(parseQueueUrl('redis://localhost').connection).toEqual({ host: 'localhost', port: 6379, db: 0 });
    expect(parseQueueUrl('rediss://[::1]:7000/1').connection).toMatchObject({ host: '::1', port: 7000, db: 1, tls: {} });
  });

  it.each([
    ['localhost:6379', /not a URL|is not redis/],
    ['http://localhost:6379/0', /http: is not redis: or rediss:/],
    ['redis:///0', /host is missing/],
    ['redis://h:6379/zero', /database must be a number/],
    ['redis://h:6379/0?password=x', /options after \? or #/],
    ['redis://h:99999/0', /not a URL/],
  ])('refuses %s with a one-line usage error', (url, message) => {
    expect(() => parseQueueUrl(url)).toThrow(message);
  });

  it('job ids are the plan, the task and the attempt, so enqueueing a plan twice adds nothing', () => {
    expect(jobId(PLAN, 'greeter', 2)).toBe(`${PLAN}-greeter-2`);
    expect(jobId(PLAN, 'greeter', 2)).not.toContain(':');
  });

  const job = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
    v: 1,
    plan: PLAN,
    slug: 't',
    name: 't',
    attempt: 1,
    label: 't',
    lines: [{ type: 'task.loaded' }],
    argvOf: { 'qs-sandbox': ['--backend', 'bwrap'], 'qs-agent': ['--agent', 'replay'], 'qs-check': [] },
    ...over,
  });
  it('a worker refuses a malformed job, and one that would turn its sandbox off', () => {
    expect(refuseJob(job(), false)).toBeNull();
    expect(refuseJob(null, false)).toMatch(/no attempt/);
    expect(refuseJob(job({ v: 2 }), false)).toMatch(/v2 is not this worker's/);
    expect(refuseJob(job({ slug: '../etc' }), false)).toMatch(/names no task/);
    expect(refuseJob(job({ attempt: 0 }), false)).toMatch(/no attempt number/);
    expect(refuseJob(job({ lines: [{ type: 'diagnostic' }] }), false)).toMatch(/no task.loaded/);
    expect(refuseJob(job({ argvOf: { 'qs-sandbox': [1], 'qs-agent': [], 'qs-check': [] } }), false)).toMatch(/no arguments for qs-sandbox/);
    const unenforced = job({ argvOf: { 'qs-sandbox': ['--backend', 'local', '--allow-unenforced'], 'qs-agent': [], 'qs-check': [] } });
    expect(refuseJob(unenforced, false)).toMatch(/unenforced local backend/);
    expect(refuseJob(unenforced, true)).toBeNull();
    // The ledger socket is made by the worker for each capped attempt: a job never names one.
    const named = job({ argvOf: { 'qs-sandbox': [], 'qs-agent': ['--agent', 'openai', '--spend-ledger', '/run/elsewhere.sock'], 'qs-check': [] } });
    expect(refuseJob(named, false)).toMatch(/names a spend ledger/);
    expect(refuseJob(job({ argvOf: { 'qs-sandbox': [], 'qs-agent': ['--spend-ledger=/x'], 'qs-check': [] } }), false)).toMatch(/names a spend ledger/);
    // Nor npm's registry: the packuments it serves go into the worker's install cache for every later attempt.
    expect(refuseJob(job({ argvOf: { 'qs-sandbox': [], 'qs-agent': [], 'qs-check': ['--npm-registry', 'https://mirror.example/'] } }), false)).toMatch(/names npm's registry/);
    expect(refuseJob(job({ argvOf: { 'qs-sandbox': [], 'qs-agent': [], 'qs-check': ['--npm-cafile=/tmp/ca.pem'] } }), false)).toMatch(/names npm's registry/);
    // yargs takes the camelCase spellings as the same flags
    for (const spelt of [['--npmRegistry', 'https://mirror.example/'], ['--npmRegistry=https://mirror.example/'], ['--npmCafile', '/tmp/ca.pem']]) {
      expect(refuseJob(job({ argvOf: { 'qs-sandbox': [], 'qs-agent': [], 'qs-check': ['--install-cache', '/srv/c', ...spelt] } }), false)).toMatch(/names npm's registry/);
    }
    expect(refuseJob(job({ argvOf: { 'qs-sandbox': [], 'qs-agent': ['--spendLedger', '/x'], 'qs-check': [] } }), false)).toMatch(/names a spend ledger/);
    expect(refuseJob(job({ argvOf: { 'qs-sandbox': [], 'qs-agent': [], 'qs-check': ['--install-cache', '/srv/c'] } }), false)).toBeNull();
    // The limits that keep a fork bomb off the worker's machine are the worker's own.
    for (const flags of [['--max-memory', '1T'], ['--maxProcesses=100000'], ['--max-shm', '8G']]) {
      expect(refuseJob(job({ argvOf: { 'qs-sandbox': flags, 'qs-agent': [], 'qs-check': [] } }), false), flags.join(' ')).toMatch(/sets the sandbox's limits/);
    }
    expect(refuseJob(job({ spend: 'yes' }), false)).toMatch(/spend flag/);
    expect(refuseJob(job({ spend: true }), false)).toBeNull();
  });

  it('a stream that arrives cut, altered or without its end is never taken as the attempt', () => {
    const lines = ['{"type":"task.loaded"}', '{"type":"run.completed"}'];
    const whole = { v: 1, lines, count: 2, sha256: '7b0a3d06f9d2b0bd27b2b8ea2a3b5a1c3c4bb0f06ffb0fbd4ac8f7e3f1e3d5b1', usage: false };
    // The hash is checked, not trusted: a made-up one is refused like a cut stream.
    expect(checkReturn(whole)).toMatch(/arrived cut/);
    expect(checkReturn({ ...whole, lines: lines.slice(0, 1), count: 2 })).toMatch(/1 of 2 lines/);
    expect(checkReturn({ v: 1, stopped: 'spend' })).toBe('stopped');
    expect(checkReturn('nonsense')).toMatch(/no stream/);
    expect(checkReturn({ v: 1, lines: [1, 2] })).toMatch(/no stream/);
  });
  it.each([
    [['run', 'x.yaml', '--queue', 'redis://127.0.0.1:1/0', '--shard', '1/2'], /--shard and --queue are two ways to split a sweep; give one/],
    [['run', 'x.yaml', '--queue', 'ftp://h/0'], /--queue: ftp: is not redis: or rediss:/],
    [['worker'], /--queue redis:\/\/HOST:PORT\/DB is required/],
    [['worker', '--queue', 'redis://127.0.0.1:6379/0', '--concurrency', '0'], /--concurrency must be a whole number from 1 to 64/],
    [['worker', '--queue', 'redis://127.0.0.1:6379/0', '--lock-seconds', 'soon'], /--lock-seconds must be from 1 to 3600/],
  ])('qs %j: a one-line usage error, exit 3, before anything connects', async (args, message) => {
    const p = start(args as string[], { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1' }, ROOT);
    expect(await p.exit).toBe(3);
    expect(p.err()).toMatch(message);
    expect(p.err().trim().split('\n')).toHaveLength(1);
  });
});

const haveRedis = redisServerPath() !== null;

type Ev = Record<string, unknown> & { type: string };
interface Proc {
  child: ChildProcess;
  err: () => string;
  out: () => string;
  /** Resolves when stderr has matched `re` (or rejects when the process ends first). */
  waitErr: (re: RegExp) => Promise<void>;
  exit: Promise<number | string>;
}

function start(args: string[], env: NodeJS.ProcessEnv, cwd: string): Proc {
  const child = spawn(process.execPath, [QS, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: { re: RegExp; resolve: () => void; reject: (e: Error) => void }[] = [];
  const check = (): void => {
    for (const w of [...waiters]) if (w.re.test(err)) waiters.splice(waiters.indexOf(w), 1) && w.resolve();
  };
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
    check();
  });
  const exit = new Promise<number | string>((resolve) => child.once('close', (code, signal) => resolve(code ?? String(signal))));
  void exit.then(() => {
    for (const w of waiters.splice(0)) w.reject(new Error(`qs ${args[0] ?? ''} ended before ${String(w.re)}:\n${err}`));
  });
  return {
    child,
    err: () => err,
    out: () => out,
    exit,
    waitErr: (re) =>
      new Promise<void>((resolve, reject) => {
        waiters.push({ re, resolve, reject });
        check();
        if (child.exitCode !== null || child.signalCode !== null) reject(new Error(`qs ${args[0] ?? ''} already ended:\n${err}`));
      }),
  };
}

/** Every process under `pid`, from /proc (the stages run in process groups of their own). */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(entry), Number(fields[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number): void => {
    for (const [child, pp] of parent) if (pp === p) out.push(child), walk(child);
  };
  walk(pid);
  return out;
}
const alive = (pid: number): boolean => existsSync(`/proc/${pid}`) && !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));

/** What a fleet must agree with a local sweep on: verdicts and counts, times and ids aside. */
function verdicts(dir: string): unknown {
  const r = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as { counts: unknown; repeat: unknown; tasks: Record<string, unknown>[] };
  return {
    counts: r.counts,
    repeat: r.repeat,
    tasks: r.tasks.map((t) => ({
      task: t.task,
      slug: t.slug,
      attempts: t.attempts,
      passes: t.passes,
      evidential_runs: t.evidential_runs,
      pass_rate: t.pass_rate,
      discarded: t.discarded,
      skipped: t.skipped,
      flaky: t.flaky,
      runs: (t.runs as Record<string, unknown>[]).map((run) => ({ attempt: run.attempt, classification: run.classification, label: run.label, passed: run.passed, evidential: run.evidential, stop_reason: run.stop_reason, stream: run.stream })),
    })),
  };
}

// Skipped only where redis-server is not installed (apt-get install redis-server; CI has it).
describe.skipIf(!haveRedis)('a fleet on a real redis-server (skipped: redis-server is not installed)'.replace(haveRedis ? / \(skipped.*\)/ : /$^/, ''), () => {
  let redis: RedisServer;
  let work: string;
  let env: NodeJS.ProcessEnv;
  const procs: Proc[] = [];
  const orphans: number[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    work = mkdtempSync(join(tmpdir(), 'qs-fleet-'));
    // The sandboxes' layouts go under the test's folder: whatever a killed worker leaves is removed with it.
    mkdirSync(join(work, 'tmp'));
    env = { PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: process.env.HOME ?? '/root', NO_COLOR: '1', TMPDIR: join(work, 'tmp') };
    const task = (name: string, steps: string[], check: string): string => `name: ${name}\ngoal: Write a file.\ndocs:\n  path:\n    - https://docs.greeter.test/install.html\nreplay:\n${steps.map((s) => `  - ${s}\n`).join('')}success:\n  script: ${check}\n`;
    mkdirSync(join(work, 'tasks'));
    writeFileSync(join(work, 'tasks', 'a-slow.yaml'), task('slow', ['sleep 5', 'echo ok > out.txt'], 'grep -q ok out.txt'));
    writeFileSync(join(work, 'tasks', 'b-pass.yaml'), task('pass', ['echo ok > out.txt'], 'grep -q ok out.txt'));
    writeFileSync(join(work, 'tasks', 'c-gap.yaml'), task('gap', ['echo no > out.txt'], 'grep -q ok out.txt'));
  });
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exit));
    for (const pid of orphans) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await redis?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });
  const qs = (args: string[]): Proc => {
    const p = start(args, env, work);
    procs.push(p);
    return p;
  };
  const worker = (...extra: string[]): Proc => qs(['worker', '--queue', redis.url, '--lock-seconds', '1', ...extra]);

  it('a producer and two workers: one worker SIGKILLed mid-attempt, and results.json is the local sweep\'s', async () => {
    const local = qs(['run', 'tasks', '--workers', '2', '--out', 'local', '-q', ...MAP]);
    const w1 = worker();
    await w1.waitErr(/taking attempts/);
    // Not quiet: the worker shows its stages' lines, so the kill below is known to land mid-attempt.
    const producer = qs(['run', 'tasks', '--queue', redis.url, '--out', 'fleet', ...MAP]);
    // Attempt-major: the slow task's attempt is the first job, and w1 is the only worker yet.
    await w1.waitErr(/slow#1 started/);
    await w1.waitErr(/slow#1 qs-sandbox: .*ready/);
    const w2 = worker();
    await w2.waitErr(/taking attempts/);
    const under = descendants(w1.child.pid as number);
    w1.child.kill('SIGKILL');
    expect(await w1.exit).toBe('SIGKILL');
    expect(w1.err()).not.toMatch(/slow#1 (PASS|FAIL)/);
    // The killed worker's stages are orphans now: each is told to end its run, as Ctrl-C would, and waited for.
    for (const pid of under) if (alive(pid)) process.kill(pid, 'SIGTERM');
    orphans.push(...under);
    expect(await producer.exit).toBe(1);
    expect(await local.exit).toBe(1);
    expect(w2.err()).toMatch(/slow#1 started/);
    expect(verdicts(join(work, 'fleet'))).toEqual(verdicts(join(work, 'local')));
    const plan = JSON.parse(readFileSync(join(work, 'fleet', 'plan.ndjson'), 'utf8')) as Ev;
    expect(plan).toMatchObject({ type: 'sweep.plan', share: { kind: 'queue', queue: redis.url }, attempts: 3, repeat: 1, agent: 'replay' });
    // One stream per attempt, each whole, each ending in its verdict.
    for (const slug of ['slow', 'pass', 'gap']) {
      const lines = readFileSync(join(work, 'fleet', slug, '1', 'events.ndjson'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Ev);
      expect(lines[0]?.type).toBe('task.loaded');
      expect(lines.filter((e) => e.type === 'run.completed')).toHaveLength(1);
      expect(lines.at(-1)?.type).toBe('run.completed');
    }
    // The producer's stdout is the attempts' streams, as a local sweep's is.
    expect(producer.out().trim().split('\n').filter((l) => l.includes('"run.completed"'))).toHaveLength(3);
    for (const pid of under) while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
    w2.child.kill('SIGINT');
    expect(await w2.exit).toBe(130);
    // A second producer of the same plan enqueues nothing new: it collects the finished streams.
    const again = qs(['run', 'tasks', '--queue', redis.url, '--out', 'again', '-q', ...MAP]);
    expect(await again.exit).toBe(1);
    expect(verdicts(join(work, 'again'))).toEqual(verdicts(join(work, 'local')));
  });

  it('a --docs-map folder given relative to the producer is the one a worker started in another folder reads', async () => {
    const elsewhere = join(work, 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    const w = start(['worker', '--queue', redis.url, '--lock-seconds', '1'], env, elsewhere);
    procs.push(w);
    await w.waitErr(/taking attempts/);
    const producer = qs(['run', join(ROOT, 'fixtures', 'examples', 'greeter.yaml'), '--queue', redis.url, '--out', 'relative', '-q', '--docs-map', `https://docs.greeter.test/=${relative(work, join(ROOT, 'fixtures', 'docs-site'))}`]);
    expect(await producer.exit, producer.err() + w.err()).toBe(0);
    expect(verdicts(join(work, 'relative'))).toMatchObject({ counts: { passed: 1 } });
    w.child.kill('SIGINT');
    expect(await w.exit).toBe(130);
  });

  it('Ctrl-C on the producer: exit 130, the finished stream kept, the waiting attempts taken off the queue', async () => {
    const w = worker();
    await w.waitErr(/taking attempts/);
    // A plan of its own (repeat 2), so nothing is left over from the test above.
    const producer = qs(['run', 'tasks', '--queue', redis.url, '--repeat', '2', '--out', 'stopped', ...MAP]);
    await producer.waitErr(/slow#1 PASS/);
    await producer.waitErr(/pass#1 started/);
    producer.child.kill('SIGINT');
    expect(await producer.exit).toBe(130);
    expect(producer.err()).toMatch(/interrupted: 1 of 6 attempts recorded \(the fleet takes no more of this sweep\)/);
    expect(existsSync(join(work, 'stopped', 'slow', '1', 'events.ndjson'))).toBe(true);
    expect(verdicts(join(work, 'stopped'))).toMatchObject({ counts: { passed: 1, docs_gap: 0 } });
    // The running attempt ends on its worker; nothing after it starts anywhere.
    await w.waitErr(/pass#1 PASS/);
    w.child.kill('SIGINT');
    expect(await w.exit).toBe(130);
    expect(w.err()).not.toMatch(/gap#1 started|#2 started/);
  });

  it('a worker refuses an attempt that asks for the unenforced backend: the producer records why, and runs nothing', async () => {
    const w = worker();
    await w.waitErr(/taking attempts/);
    const producer = qs(['run', 'tasks/b-pass.yaml', '--queue', redis.url, '--backend', 'local', '--allow-unenforced', '--out', 'unenforced', ...MAP]);
    // Only harness errors: no evidence, exit 2.
    expect(await producer.exit).toBe(2);
    const lines = readFileSync(join(work, 'unenforced', 'pass', '1', 'events.ndjson'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Ev);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ type: 'run.failed', stage: 'qs', failed_stage: 'qs worker' });
    expect(String(lines[0]?.error)).toMatch(/unenforced local backend, which this worker does not allow/);
    w.child.kill('SIGINT');
    expect(await w.exit).toBe(130);
    expect(w.err()).toMatch(/refused job .*unenforced/);
    expect(w.err()).not.toMatch(/pass started/);
  });

  it('the spend ledger: 40 reservers on four connections at once never take more than the cap, and a refusal stops everyone', async () => {
    const target = parseQueueUrl(redis.url);
    const plan = 'b'.repeat(64);
    const producer = await openRedisLedger(target, plan);
    await producer.setCap(1);
    const ledgers = [producer, ...(await Promise.all([1, 2, 3].map(() => openRedisLedger(target, plan))))];
    try {
      // Settled below the estimate: the difference is free again, and settling twice changes nothing.
      const first = await producer.reserve(0.1);
      if (!first.granted) throw new Error('the first reservation was refused');
      await producer.settle(first.id, 0.01);
      await producer.settle(first.id, 0.01);
      expect(await producer.state()).toEqual({ capUsd: 1, spentUsd: 0.01, reservedUsd: 0, exhausted: false });
      const tries = await Promise.all(Array.from({ length: 40 }, (_, i) => (ledgers[i % 4] as (typeof ledgers)[number]).reserve(0.03)));
      const granted = tries.filter((t) => t.granted);
      // 0.99 left: 33 calls of 0.03 fit, the 34th does not, and whoever came after it is refused too.
      expect(granted).toHaveLength(33);
      expect(new Set(granted.map((t) => (t as { id: number }).id)).size).toBe(33);
      const state = await producer.state();
      expect(state.spentUsd + state.reservedUsd).toBeLessThanOrEqual(1);
      expect(state).toMatchObject({ reservedUsd: 0.99, exhausted: true });
      // Tripped: even a call that would fit is refused, on every machine.
      await producer.settle((granted[0] as { id: number }).id, 0);
      expect(await (ledgers[2] as (typeof ledgers)[number]).reserve(0.001)).toEqual({ granted: false, spent: 0.01, reserved: 0.96, cap: 1 });
      // A run of the plan again sets its own cap: what was spent still counts, and a tripped cap
      // opens again only if the new one leaves room.
      const late = await openRedisLedger(target, plan);
      await late.setCap(0.5);
      expect(await late.state()).toMatchObject({ capUsd: 0.5, exhausted: true });
      await late.setCap(2);
      expect(await late.state()).toEqual({ capUsd: 2, spentUsd: 0.01, reservedUsd: 0.96, exhausted: false });
      expect(await late.reserve(1.03)).toMatchObject({ granted: true });
      expect(await late.reserve(0.000001)).toMatchObject({ granted: false });
      late.close();
      await expect(producer.reserve(-1)).rejects.toThrow(/non-negative number of dollars/);
      await expect(producer.reserve(Number.NaN)).rejects.toThrow(/non-negative/);
      const none = await openRedisLedger(target, 'c'.repeat(64));
      await expect(none.reserve(0.01)).rejects.toThrow(/no cap is set/);
      none.close();
    } finally {
      for (const l of ledgers) l.close();
    }
  });

  it('a Redis that stops answering fails a reservation in bounded time: the agent is told, and nothing is granted', async () => {
    const frozen = await startRedis();
    const dir = mkdtempSync(join(work, 'ledger-'));
    const ledger = await openRedisLedger(parseQueueUrl(frozen.url), 'd'.repeat(64), { commandTimeoutMs: 300 });
    const served = await serveSpendLedger(join(dir, 'ledger.sock'), ledger);
    const client = await connectSpendLedger(served.path);
    try {
      await ledger.setCap(1);
      expect(await client.reserve(0.1)).toMatchObject({ granted: true });
      // Stopped, not gone: the connection stays open and nothing answers, the case a retry loop would wait on for ever.
      process.kill(frozen.pid, 'SIGSTOP');
      await expect(client.reserve(0.1)).rejects.toThrow(/the spend ledger refused the request: .*timed out/i);
    } finally {
      process.kill(frozen.pid, 'SIGCONT');
      client.close();
      await served.close();
      ledger.close();
      await frozen.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a worker of an exhausted cap runs nothing, and the producer says the cap stopped the sweep (exit 130)', async () => {
    // The plan's identity is computed here as the producer will: its cap is used up before it starts.
    const file = readFileSync(join(work, 'tasks', 'b-pass.yaml'));
    const plan = planSha256({ tasks: [{ name: 'pass', slug: 'pass', source: '', sha256: createHash('sha256').update(file).digest('hex'), config_sha256: null }], repeat: 3, agent: 'replay', model: null, versions: { qs: VERSION } });
    const ledger = await openRedisLedger(parseQueueUrl(redis.url), plan);
    await ledger.setCap(0.01);
    expect(await ledger.reserve(1)).toMatchObject({ granted: false });
    ledger.close();
    const w = worker();
    await w.waitErr(/taking attempts/);
    const producer = qs(['run', 'tasks/b-pass.yaml', '--queue', redis.url, '--repeat', '3', '--out', 'capped', ...MAP]);
    expect(await producer.exit).toBe(130);
    expect(producer.err()).toMatch(/the fleet's spend cap ran out: 3 attempts were not run/);
    expect((JSON.parse(readFileSync(join(work, 'capped', 'plan.ndjson'), 'utf8')) as { plan_sha256: string }).plan_sha256).toBe(plan);
    // No attempt ran: results.json says so, every attempt of the plan not run, none passed.
    expect(readdirSync(join(work, 'capped')).sort()).toEqual(['plan.ndjson', 'results.json']);
    expect(JSON.parse(readFileSync(join(work, 'capped', 'results.json'), 'utf8'))).toMatchObject({ counts: { passed: 0, not_run: 3 } });
    w.child.kill('SIGINT');
    expect(await w.exit).toBe(130);
    expect(w.err()).not.toMatch(/pass#\d started/);
  });

  it('--max-spend holds across the fleet: two workers\' agents reserve from one cap in Redis, no call past it, exit 130', async () => {
    // Each model turn bills 20 000 input tokens at $1 per million ($0.02), far more than its small
    // request shows; two bash calls and an answer make an attempt of three turns ($0.06) that passes.
    const TURN_USD = 0.02;
    const mock: MockServer = await startMockServer({
      requireKey: false,
      whenEmpty: (req: RecordedRequest) => {
        const toolResults = ((req.body?.messages ?? []) as { role?: string }[]).filter((m) => m.role === 'tool').length;
        const usage = { input: 20_000, output: 0 };
        return toolResults < 2 ? { toolCalls: [{ name: 'bash', input: { command: 'echo hi >> hello.txt' } }], usage } : { text: 'Wrote hello.txt.', usage };
      },
    });
    try {
      mkdirSync(join(work, 'capped-tasks'));
      writeFileSync(join(work, 'capped-tasks', 'prices.json'), JSON.stringify({ as_of: '2026-12-01', models: { 'local-coder': { input: 1, cache_read: 0, cache_write: 0, output: 0 } } }));
      writeFileSync(join(work, 'capped-tasks', 'hello.yaml'), 'name: hello-file\ngoal: Write hello.txt in the workspace.\ndocs:\n  path:\n    - https://docs.greeter.test/install.html\nsuccess:\n  script: "[ -f hello.txt ] || qs_fail \'no hello.txt\'"\nbudgets:\n  max_turns: 10\n');
      const w1 = worker();
      const w2 = worker();
      await Promise.all([w1.waitErr(/taking attempts/), w2.waitErr(/taking attempts/)]);
      const cap = 0.15;
      const model = ['--agent', 'openai-chat', '--model', 'local-coder', '--base-url', mock.openaiUrl, '--prices', join(work, 'capped-tasks', 'prices.json')];
      const producer = qs(['run', 'capped-tasks/hello.yaml', ...model, '--repeat', '6', '--max-spend', String(cap), '--queue', redis.url, '--out', 'fleet-capped', ...MAP]);
      expect(await producer.exit, producer.err()).toBe(130);
      const last = producer.err().trim().split('\n').at(-1) as string;
      expect(last).toMatch(/^qs run: stopped by the spend cap \(\$0\.15\): \$[\d.]+ spent; \d of 6 attempts recorded, \d+ of them stopped by the cap$/);

      const results = JSON.parse(readFileSync(join(work, 'fleet-capped', 'results.json'), 'utf8')) as { counts: { not_run: number }; tasks: { runs: { stop_reason: string; classification: string; evidential: boolean; stream: string }[] }[] };
      const runs = results.tasks.flatMap((t) => t.runs);
      const stopped = runs.filter((x) => x.stop_reason === 'spend_cap');
      // Six attempts at $0.06 cannot fit in $0.15: the cap is met on some worker, and what had not started never does.
      expect(stopped.length).toBeGreaterThanOrEqual(1);
      expect(runs.length).toBeLessThan(6);
      expect(results.counts.not_run).toBe(6 - runs.length);
      expect(last).toContain(`${runs.length} of 6 attempts recorded, ${stopped.length} of them stopped by the cap`);
      for (const x of stopped) expect(x).toMatchObject({ classification: 'budget_exhausted', evidential: false });
      for (const x of runs.filter((y) => y.stop_reason !== 'spend_cap')) expect(x).toMatchObject({ classification: 'passed', evidential: true });

      let spent = 0;
      let worstOverrun = 0;
      for (const x of runs) {
        const stream = readFileSync(join(work, 'fleet-capped', x.stream), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Ev);
        expect(stream.at(-1)?.type).toBe('run.completed');
        if (x.stop_reason === 'spend_cap') expect(String(stream.find((e) => e.type === 'agent.completed')?.detail)).toMatch(/^stopped by the spend cap before turn \d+: \$[\d.]+ spent or reserved of the \$0\.15 cap/);
        for (const t of stream.filter((e) => e.type === 'agent.turn') as unknown as { usd: number; reserved_usd: number }[]) {
          expect(t.reserved_usd).toBeGreaterThan(0);
          spent += t.usd;
          worstOverrun = Math.max(worstOverrun, t.usd - t.reserved_usd);
        }
      }
      // Granted only while spent + reserved + the estimate fit, on whichever machine asked: the cap is
      // passed only by what the calls in flight at the last grant cost beyond their estimates, one per worker.
      expect(spent).toBeLessThanOrEqual(cap + 2 * worstOverrun + 1e-9);
      expect(mock.requestsFor('chat').length).toBe(Math.round(spent / TURN_USD));
      // Redis holds what was settled: every call that was made, at its cost.
      const ledger = await openRedisLedger(parseQueueUrl(redis.url), JSON.parse(readFileSync(join(work, 'fleet-capped', 'plan.ndjson'), 'utf8')).plan_sha256 as string);
      expect(await ledger.state()).toMatchObject({ capUsd: cap, reservedUsd: 0, exhausted: true });
      expect((await ledger.state()).spentUsd).toBeCloseTo(spent, 6);
      ledger.close();
      // Both workers served attempts, and neither left its ledger socket behind.
      for (const w of [w1, w2]) {
        w.child.kill('SIGINT');
        expect(await w.exit).toBe(130);
      }
      expect(w1.err()).toMatch(/hello-file#\d started/);
      expect(w2.err()).toMatch(/hello-file#\d started/);
      expect(readdirSync(join(work, 'tmp')).filter((f) => f.startsWith('qs-spend-'))).toEqual([]);
    } finally {
      await mock.close();
    }
  });
});
