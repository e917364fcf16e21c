// A sweep: every valid task × `repeat` attempts, `workers` of them at once, each attempt its own
// `qs-sandbox | qs-agent | qs-check` pipeline (its own process, sandbox and proxy) fed one task.loaded.
import { spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { type Io, makeDirs } from '@quickloop/cli-kit';
import { isTerminal, parseLine, readEvents, signalName, type WireEvent } from '@quickloop/events';
import { removeLayout, removeLayoutAsync, removeStaleSessions } from '@quickloop/sandbox';
import { cli as validate } from '@quickloop/qs-validate';
import { attemptArgv, type AttemptReport } from '../attempt.js';
import { attemptCommand } from '../bins.js';
import { callStage, HOSTED_STAGES as STAGES, type HostedStage } from './host.js';
import type { AttemptStream } from '../results/fold.js';
import { agentOfArgv, writeQuickstartedTrace } from '../results/trace-export.js';
import type { Progress } from './progress.js';

export interface LoadedTask {
  /** Folder name under --out: the task's name made safe, unique in the sweep. */
  slug: string;
  name: string;
  /** task.loaded and the diagnostics about it, as qs-validate wrote them. */
  lines: WireEvent[];
}

export interface SweepOptions {
  tasks: LoadedTask[];
  repeat: number;
  workers: number;
  /** argv of each stage after qs-validate. */
  argvOf: Record<HostedStage, string[]>;
  out: string | null;
  progress: Progress;
  /** Prefix stage lines with `task#attempt` (more than one attempt in the sweep). */
  label: (slug: string, attempt: number) => string;
  /** No new attempt starts once this says so (the spend cap was reached). */
  halted?: () => boolean;
  /** The attempts to run, in order (a shard's share of the plan); every task × repeat when absent. */
  jobs?: readonly { slug: string; attempt: number }[];
}

export interface SweepOutcome {
  attempts: AttemptStream[];
  interrupted: boolean;
  /** Attempts in which a stage exited 3 (a flag it does not take, input it could not read). */
  usageErrors: number;
}

/** A folder name for a task: lower-case letters, digits, `.`, `_`, `-`; never `.`/`..`, never empty. */
export function slugify(name: string, taken: Set<string>): string {
  let base = name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 80);
  if (base === '') base = 'task';
  let slug = base;
  for (let n = 2; taken.has(slug); n += 1) slug = `${base}-${n}`;
  taken.add(slug);
  return slug;
}

/**
 * Reads qs-validate's stream: the valid tasks (with their diagnostics) and everything else. The stage
 * runs here, in this process (its own cli(), as its binary runs it): a sweep's first attempt waits for
 * it, and a Node start of its own was a third of that wait.
 */
export async function loadTasks(argv: string[], io: Io, onStderr: (text: string) => void): Promise<{ tasks: LoadedTask[]; other: WireEvent[]; code: number }> {
  const stdout = new PassThrough();
  const stderr = new Writable({
    write(chunk: Buffer, _encoding, done) {
      onStderr(chunk.toString());
      done();
    },
  });
  const stageIo: Io = { stdin: Readable.from([]), stdout, stderr, env: io.env, cwd: io.cwd, signal: io.signal, now: io.now, newId: io.newId };
  const exited = callStage('qs-validate', validate, argv, stageIo, () => false).finally(() => stdout.end());
  const byRun = new Map<string, WireEvent[]>();
  const order: string[] = [];
  const other: WireEvent[] = [];
  for await (const { event } of readEvents(stdout, { source: 'qs-validate' })) {
    if (event.type === 'task.loaded') {
      order.push(event.run_id);
      byRun.set(event.run_id, [event, ...(byRun.get(event.run_id) ?? [])]);
    } else if (event.type === 'diagnostic' && event.severity !== 'error') {
      byRun.set(event.run_id, [...(byRun.get(event.run_id) ?? []), event]);
    } else other.push(event);
  }
  const code = await exited;
  const taken = new Set<string>();
  const tasks = order.map((id) => {
    const lines = byRun.get(id) as WireEvent[];
    const name = String(((lines[0] as Record<string, unknown>).task as { name?: unknown }).name ?? 'task');
    return { slug: slugify(name, taken), name, lines };
  });
  // A warning about a file whose task did not load has no run to travel with: it stays on stdout.
  for (const [id, lines] of byRun) if (!order.includes(id)) other.push(...lines);
  return { tasks, other, code };
}

/** Runs the sweep. Attempts go out attempt-major (every task's first, then every second…), so an
 * interrupted sweep has something of each task. */
export async function sweep(o: SweepOptions, io: Io, newId: () => string): Promise<SweepOutcome> {
  const bySlug = new Map(o.tasks.map((t) => [t.slug, t]));
  const jobs =
    o.jobs === undefined
      ? Array.from({ length: o.repeat }, (_, a) => o.tasks.map((task) => ({ task, attempt: a + 1 }))).flat()
      : o.jobs.map((j) => ({ task: bySlug.get(j.slug) as LoadedTask, attempt: j.attempt }));
  const attempts: AttemptStream[] = [];
  let usageErrors = 0;
  const running = new Set<() => void>();
  const onAbort = (): void => {
    for (const interrupt of running) interrupt();
  };
  io.signal.addEventListener('abort', onAbort, { once: true });
  let next = 0;
  const leaving: Promise<void>[] = [];
  const worker = async (): Promise<void> => {
    while (!io.signal.aborted && !(o.halted?.() ?? false) && next < jobs.length) {
      const job = jobs[next++] as (typeof jobs)[number];
      const done = await runAttempt(job.task, job.attempt, o, io, newId(), running);
      attempts.push(done.stream);
      leaving.push(done.leaving);
      if (done.usage) usageErrors += 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.workers, jobs.length) }, worker));
  await Promise.all(leaving);
  io.signal.removeEventListener('abort', onAbort);
  return { attempts, interrupted: io.signal.aborted, usageErrors };
}

/** What the attempt's process reported (its stages' exit codes, the folders it left), or null when it ended without (a crash, a signal). */
function attemptReport(reported: string): AttemptReport | null {
  try {
    const r = JSON.parse(reported) as Partial<AttemptReport> | null;
    const { codes, remove } = r ?? {};
    if (Array.isArray(codes) && codes.length === STAGES.length && codes.every((c) => Number.isInteger(c)) && Array.isArray(remove) && remove.every((p) => typeof p === 'string')) return { codes, remove };
  } catch {
    // nothing, or not all of it: the process did not finish
  }
  return null;
}

/** Removes the sandbox folders an attempt left to qs, off the event loop: the next attempt starts meanwhile. */
async function removeLeft(roots: readonly string[], say: (line: string) => void): Promise<void> {
  await Promise.all(
    roots.map((root) =>
      removeLayoutAsync({ root }).catch((error: Error) => {
        say(`qs: ${error.message}`);
      }),
    ),
  );
}

/** What each open attempt must still write if qs exits under it: one 'exit' listener for all of them, however many workers. */
const atExit = new Set<() => void>();
process.on('exit', () => {
  for (const write of atExit) write();
});

/**
 * One attempt: its own pipeline (sweep/host.ts, one process), sandbox and stream. The fleet's worker
 * runs exactly this. Resolves once the attempt's process has ended, with `leaving`: the removal of
 * the sandbox folders it left, still under way (await it before qs ends).
 */
export async function runAttempt(task: LoadedTask, attempt: number, o: SweepOptions, io: Io, runId: string, running: Set<() => void>): Promise<{ stream: AttemptStream; usage: boolean; leaving: Promise<void> }> {
  const label = o.label(task.slug, attempt);
  o.progress.started(label);
  let fd: number | null = null;
  if (o.out !== null) {
    const dir = join(o.out, task.slug, String(attempt));
    makeDirs(dir);
    fd = openSync(join(dir, 'events.ndjson'), 'w');
  }
  const events: WireEvent[] = [];
  let terminal: WireEvent | null = null;
  // A second Ctrl-C ends qs at once, in the middle of this attempt: its saved stream still ends, as
  // interrupted, or `qs results` would take the cut stream for a harness error.
  const onExit = (): void => {
    if (fd === null || terminal !== null || !io.signal.aborted) return;
    try {
      writeSync(fd, `${JSON.stringify({ v: 1, ts: io.now().toISOString(), run_id: runId, stage: 'qs', type: 'run.interrupted', signal: signalName(io.signal), phase: 'pipeline' })}\n`);
    } catch {
      // a full disk at exit: the stream stays cut, which qs results reports as such
    }
  };
  if (fd !== null) atExit.add(onExit);
  // Synchronous writes, a line at a time: what a stage said is on disk before the next line is
  // read, so a crash of qs itself (or a second Ctrl-C) loses no finished line.
  let made: { root: string; keep: boolean } | null = null;
  const record = (raw: string, event: WireEvent): void => {
    events.push(event);
    if (isTerminal(event.type)) terminal ??= event;
    if (event.type === 'sandbox.ready') {
      const ready = event as unknown as { root?: unknown; keep?: unknown };
      if (typeof ready.root === 'string') made = { root: ready.root, keep: ready.keep === true };
    }
    if (fd !== null) writeSync(fd, `${raw}\n`);
    io.stdout.write(`${raw}\n`);
  };
  const host = attemptCommand();
  const child = spawn(host.file, [...host.args, ...attemptArgv(o.argvOf, true)], {
    cwd: io.cwd,
    env: io.env as NodeJS.ProcessEnv,
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    // Its own process group, as in a single run: a terminal's Ctrl-C reaches only qs, which passes
    // on exactly one SIGINT (a second would make the stages quit before ending their runs).
    detached: true,
  });
  child.stdin?.on('error', () => undefined);
  let partial = '';
  // qs-check's own verdict line says what the sweep's finished line says again.
  // The last line each stage said of itself: the message of one that refused its input or flags.
  const said = new Map<string, string>();
  const say = (l: string): void => {
    const stage = STAGES.find((name) => l.startsWith(`${name}: `));
    if (stage !== undefined) said.set(stage, l.slice(stage.length + 2).trim());
    if (l.trim() !== '' && !/^(PASS|FAIL|SKIP|INCONCLUSIVE) {2}/.test(l)) o.progress.line(label, l);
  };
  child.stderr?.on('data', (c: Buffer) => {
    const lines = (partial + c.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) say(l);
  });
  child.stderr?.on('end', () => {
    say(partial);
  });
  let reported = '';
  const codesPipe = child.stdio[3] as Readable | null;
  codesPipe?.on('data', (c: Buffer) => (reported += c.toString()));
  const codesRead = new Promise<void>((resolve) => {
    if (codesPipe === null) resolve();
    codesPipe?.once('close', resolve);
    codesPipe?.once('error', () => resolve());
  });
  // The host stops qs-sandbox and qs-agent at once, and qs-check once its check has started.
  const interrupt = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
  };
  running.add(interrupt);
  // Stamped now, not when validated: an attempt's duration is its own, not its time in the queue.
  const fed = io.now().toISOString();
  for (const e of task.lines) child.stdin?.write(`${JSON.stringify({ ...e, ts: fed, run_id: runId })}\n`);
  child.stdin?.end();
  const exited = new Promise<number | string>((resolve) => {
    child.once('error', (e) => resolve(`could not start (${e.message})`));
    child.once('exit', (code, signal) => resolve(code ?? String(signal)));
  });
  let readError: string | null = null;
  try {
    for await (const { raw, event } of readEvents(child.stdout as Readable, { source: `${label} qs-check` })) record(raw, event);
  } catch (error) {
    readError = (error as Error).message;
    // Keep draining, or qs-check would block on a full pipe and the attempt would never end.
    child.stdout?.resume();
  }
  const [status] = await Promise.all([exited, codesRead]);
  running.delete(interrupt);
  const report = attemptReport(reported);
  const codes = report?.codes ?? null;
  const leaving = report === null ? Promise.resolve() : removeLeft(report.remove, (l) => o.progress.line(label, l));
  // A process that died (killed, out of memory) removed nothing: its sandbox folder is removed here
  // (only a folder with the layout's marker in it), unless it was to be kept.
  const left = made as { root: string; keep: boolean } | null;
  if (codes === null && left !== null && !left.keep) {
    try {
      removeLayout({ root: left.root });
    } catch (error) {
      o.progress.line(label, `qs: ${(error as Error).message}`);
    }
  }
  // Nor the support folder of its sandbox session, named as the dead process's.
  if (codes === null) removeStaleSessions();
  if (terminal === null) {
    // A run must end in its stream, or `qs results` could not tell an interrupted attempt from a
    // crashed one: qs says which, in the stream itself.
    const now = io.now().toISOString();
    const base = { v: 1, ts: now, run_id: runId, stage: 'qs' };
    const failed = codes === null ? 'qs' : (STAGES.find((_, i) => codes[i] !== 0) ?? 'qs-check');
    const refusal = codes !== null && codes[STAGES.indexOf(failed as (typeof STAGES)[number])] === 3 ? said.get(failed) : undefined;
    const why =
      codes === null
        ? `the attempt's process ended (${String(status)}) before its stages reported`
        : `${refusal !== undefined ? `${failed} refused its input or flags (${refusal}): ` : ''}the pipeline ended without a verdict (exit codes ${STAGES.map((s, i) => `${s} ${String(codes[i])}`).join(', ')})`;
    const payload = io.signal.aborted ? { ...base, type: 'run.interrupted', signal: signalName(io.signal), phase: 'pipeline' } : { ...base, type: 'run.failed', failed_stage: failed, error: readError ?? why };
    const raw = JSON.stringify(payload);
    record(raw, parseLine(raw, 1, 'qs').event);
  }
  atExit.delete(onExit);
  if (fd !== null) {
    closeSync(fd);
    writeQuickstartedTrace(join(o.out as string, task.slug, String(attempt)), { slug: task.slug, attempt, events }, agentOfArgv(o.argvOf['qs-agent']));
  }
  const t = terminal as unknown as Record<string, unknown>;
  const verdict = t.type === 'run.completed' ? String(t.label) : t.type === 'run.interrupted' ? 'INTERRUPTED' : 'INCONCLUSIVE';
  const detail = t.type === 'run.completed' ? `${String(t.classification)} — ${String(t.detail)}` : t.type === 'run.failed' ? `${String(t.failed_stage)}: ${String(t.error)}` : 'interrupted';
  o.progress.finished(label, verdict, detail);
  return { stream: { slug: task.slug, attempt, events }, usage: codes === null ? status === 3 : codes.includes(3), leaving };
}
