// The loop under the runner contract, in its phases: start, context, plan (with its gate), deliveries (each through the delivery gate), stop — one terminal state.
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, readdirSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { InputError, InterruptedError } from '@quickloop/cli-kit/errors';
import { LoopExit } from '@quickloop/cli-kit/exit-codes';
import { makeDirs } from '@quickloop/cli-kit/dirs';
import type { EventType, Payload } from '@quickloop/events';
import { pyRstrip, type GateName } from '@quickloop/loop-spec';
import {
  InputRequired,
  LoopStop,
  ModelCallFailed,
  Session,
  outputMode,
  deliveryPrompt,
  isRedacted,
  maxRevisions,
  planPrompt,
  revisePrompt,
  runArgv,
  tailKeptWarning,
  universalNewlines,
  runGateRound,
  namedFailures,
  timeoutMs,
  totalTokens,
  type LoadedSpec,
  type SessionOptions,
  type TokenUsage,
} from '@quickloop/loop-engine';
import { isInside, realish } from './paths.js';
import { acquireLock, loadState, looperJson, peekPassed, sortedJson, writeStateAtomic, type LoopState } from './state.js';

export interface RunnerIo {
  emit<T extends EventType>(type: T, payload: Payload<T>, meta?: { id?: string; parent_id?: string }): void;
  ask(question: string): Promise<string | null>;
  info(line: string): void;
  warn(line: string): void;
  now(): Date;
  newId(): string;
  /** A progress view shows the run (stdout is a terminal): it gives the last line, the stop line need not. */
  viewing?: boolean;
}

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

export interface Outcome {
  code: number;
  state: LoopState | null;
}

/** Runs (or resumes) the loop. Throws only before the workspace exists (bad spec, escape): nothing written then. */
export async function runLoop(loaded: LoadedSpec, io: RunnerIo, opts: SessionOptions & { runId: string }): Promise<Outcome> {
  const { spec, loopDir } = loaded;
  const rel = (p: string): string => relative(loopDir, p).split('\\').join('/');

  // Confinement comes before the first mkdir: an escape must leave the disk untouched.
  const workspace = resolve(loopDir, spec.workspace.dir);
  if (!isInside(loopDir, workspace)) {
    throw new InputError(`Path '${spec.workspace.dir}' escapes the loop directory ${loopDir}; workspace.dir must stay inside it`);
  }
  const obs = spec.observability ?? ({} as LoadedSpec['spec']['observability']);
  const stateName = typeof obs.state_file === 'string' && obs.state_file ? obs.state_file : 'state.json';
  const logName = typeof obs.run_log === 'string' && obs.run_log ? obs.run_log : 'run-log.md';
  const statePath = resolve(workspace, stateName);
  const logPath = resolve(workspace, logName);
  // Named as the spec writes it: `../state.json` shown relative to the loop directory reads `state.json`.
  for (const [field, name, p] of [['observability.state_file', stateName, statePath], ['observability.run_log', logName, logPath]] as const) {
    if (!isInside(workspace, p) || p === workspace) throw new InputError(`${field} '${name}' escapes the workspace ${workspace}`);
  }
  // The state is replaced whole and the log appended to: sharing a file with each other, or with an
  // artifact, corrupts both (a state file named plan.md would be judged as the plan).
  if (statePath === logPath) throw new InputError(`observability.state_file and observability.run_log both name '${rel(statePath)}'; give them different names`);
  for (const [field, p] of [['observability.state_file', statePath], ['observability.run_log', logPath]] as const) {
    const name = relative(workspace, p).split('\\').join('/');
    if (/^(?:context\.md|plan\.md|delivery-\d+\.md|review-(?:plan_gate|delivery_gate)-\d+\.md|\.loop-run\.lock)$/.test(name)) {
      throw new InputError(`${field} '${rel(p)}' is a file the runner writes itself (${name}); choose another name`);
    }
  }
  // An already-passed loop is reported without writing anything (no lock, no state save), so it
  // also works on a read-only filesystem or a checkout that is only being inspected.
  const passed = peekPassed(statePath);
  if (passed) {
    io.info('loop already passed; delete the workspace state to run it again');
    io.emit('loop.completed', {
      final_delivery: passed.final_delivery ? rel(passed.final_delivery) : '',
      iteration: Math.max(1, passed.iteration),
      wall_clock_used_sec: passed.wall_clock_used_sec,
      usage: passed.usage,
      already_passed: true,
    });
    return { code: LoopExit.passed, state: passed };
  }
  // A folder the runner may not write (a read-only mount, no permission, a full disk) is the operator's
  // to fix, said in words, not a crash of ours: nothing has run yet, and nothing is paid for.
  const writable = <T>(step: () => T): T => {
    try {
      return step();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM' || code === 'ENOSPC' || code === 'EDQUOT') {
        throw new InputError(`cannot write the workspace ${workspace}: ${(error as Error).message}`);
      }
      throw error;
    }
  };
  writable(() => makeDirs(workspace));
  const release = writable(() => acquireLock(join(workspace, '.loop-run.lock')));
  // `state_file: meta/state.json` is inside the workspace (checked above) but in a folder of its own.
  try {
    makeDirs(dirname(statePath));
    makeDirs(dirname(logPath));
  } catch (error) {
    release();
    throw error;
  }

  const startMs = io.now().getTime();
  let loadedState: ReturnType<typeof loadState>;
  try {
    loadedState = loadState(statePath, io.now().toISOString());
  } catch (error) {
    // A state file we cannot read is refused as it is: the lock must not outlive the refusal.
    release();
    throw error;
  }
  const { state, existed, staleProgress } = loadedState;
  const priorSec = state.wall_clock_used_sec;
  const elapsed = (): number => Math.round((priorSec + (io.now().getTime() - startMs) / 1000) * 1000) / 1000;
  const save = (patch: Partial<LoopState> = {}): void => {
    Object.assign(state, patch);
    state.updated_at = io.now().toISOString();
    state.wall_clock_used_sec = elapsed();
    if (state.gate_progress) state.gate_progress.saved_at = state.updated_at;
    if (state.gate_progress_parked) state.gate_progress_parked.saved_at = state.updated_at;
    writeStateAtomic(statePath, state);
  };
  const log = (name: string, fields: Record<string, unknown>): void => {
    appendFileSync(logPath, `- ${io.now().toISOString()} \`${name}\` ${looperJson(fields)}\n`);
  };
  const usage = state.usage;
  const advisoryNoted = new Set<string>();
  // Tokens promised to calls now running (parallel reviewers), and each member's largest call: a
  // call cannot be stopped once started, so one the budget cannot cover is not started.
  let reservedTokens = 0;
  // Kept in the state: a resume that forgot them would start a call the stopped run had refused.
  const largestCall = new Map<string, number>(Object.entries(state.largest_call_tokens ?? {}));

  const session = new Session(
    loaded,
    {
      emit: io.emit,
      log,
      addWarning: (text) => {
        if (!state.warnings.includes(text)) state.warnings.push(text);
      },
      warnings: () => state.warnings,
      // Own keys only, and defined rather than assigned: a member named `__proto__` or `constructor` is
      // as ordinary a key as in Looper's dict; read through the prototype, it would find a phantom record,
      // and assigned, `__proto__` would swap the object's prototype and never reach state.json.
      consentGet: (id) => (Object.hasOwn(state.consent, id) ? state.consent[id] : undefined),
      consentSet: (id, record) => {
        Object.defineProperty(state.consent, id, { value: record, enumerable: true, writable: true, configurable: true });
        save();
      },
      ask: io.ask,
      beforeCall: (id, promptChars) => {
        const cap = spec.loop_control.budget?.tokens;
        if (typeof cap !== 'number') return;
        const inv = id === 'host' ? spec.host : spec.council_by_id?.[id];
        // A CLI in plain text mode reports no usage: its calls count nothing (the cap is advisory for it).
        if (!inv || outputMode(inv.invoke) === 'text') return;
        // At least the prompt (about 4 characters a token), and at least as much as its largest call so far.
        const need = Math.max(Math.ceil(promptChars / 4), largestCall.get(id) ?? 0);
        const spent = totalTokens(usage);
        if (spent + reservedTokens + need > cap) {
          stop('failed', 'token_budget_exceeded', `token budget of ${cap} cannot cover the next call to ${id} (${spent} counted, ${reservedTokens} reserved for calls running, about ${need} needed)`, LoopExit.failed);
        }
        reservedTokens += need;
        return () => {
          reservedTokens -= need;
        };
      },
      onUsage: (id, u: TokenUsage | null, usd) => {
        if (u) {
          largestCall.set(id, Math.max(largestCall.get(id) ?? 0, totalTokens(u)));
          state.largest_call_tokens = Object.fromEntries(largestCall);
        }
        usage.calls += 1;
        if (u) {
          usage.input_tokens += u.input_tokens;
          usage.cache_read_tokens += u.cache_read_tokens;
          usage.cache_write_tokens += u.cache_write_tokens;
          usage.output_tokens += u.output_tokens;
          usage.reasoning_tokens += u.reasoning_tokens;
        } else usage.calls_without_usage += 1;
        if (usd !== null) usage.usd = Math.round(((usage.usd ?? 0) + usd) * 1e6) / 1e6;
        const budget = spec.loop_control.budget ?? ({} as Record<string, unknown>);
        // A cap we cannot measure is advisory, and the state says so instead of claiming enforcement.
        for (const [key, known] of [['tokens', u !== null], ['usd', usd !== null]] as const) {
          if (typeof budget[key] === 'number' && !known && !advisoryNoted.has(`${key}:${id}`)) {
            advisoryNoted.add(`${key}:${id}`);
            const w = `budget.${key} is advisory for ${id}: its CLI reports no ${key === 'tokens' ? 'token usage (use its JSON output mode)' : 'cost'}`;
            if (!state.warnings.includes(w)) state.warnings.push(w);
            io.warn(`warning: ${w}`);
          }
        }
      },
      info: io.info,
      warn: io.warn,
      now: io.now,
      newId: io.newId,
    },
    opts,
  );

  const stop = (status: 'failed' | 'blocked', failure: string, message: string, code: number): never => {
    throw new LoopStop(status, failure, message, code);
  };
  const enforceCaps = (): void => {
    const budget = spec.loop_control.budget ?? ({} as Record<string, unknown>);
    const wall = budget.wall_clock_min;
    if (typeof wall === 'number' && elapsed() > wall * 60) stop('failed', 'wall_clock_budget_exceeded', `wall clock budget of ${wall} min exceeded (${elapsed()} s used across runs)`, LoopExit.failed);
    const tokens = totalTokens(usage);
    if (typeof budget.tokens === 'number' && tokens > budget.tokens) stop('failed', 'token_budget_exceeded', `token budget of ${budget.tokens} exceeded (${tokens} counted)`, LoopExit.failed);
    if (typeof budget.usd === 'number' && usage.usd !== null && usage.usd > budget.usd) stop('failed', 'usd_budget_exceeded', `USD budget of ${budget.usd} exceeded (${usage.usd} reported)`, LoopExit.failed);
  };

  const writeArtifact = (path: string, text: string, phase: 'plan' | 'delivery' | 'revise', iteration: number): void => {
    const tmp = `${path}.${process.pid}.tmp`;
    // Looper's write_text: text.rstrip() + "\n", Python's blanks.
    writeFileSync(tmp, `${pyRstrip(text)}\n`);
    renameSync(tmp, path);
    io.emit('artifact.written', { path: rel(path), phase, iteration });
  };
  const host = async (prompt: string, purpose: string): Promise<string> => session.send('host', 'host', spec.host, prompt, purpose);
  // What a plan pass depends on besides the plan: the gate and the criteria it evaluates.
  const planGateHash = (): string => {
    const g = spec.gates.plan_gate;
    return sha256(sortedJson({ gate: g, criteria: (g.criteria ?? []).map((id) => spec.criteria_by_id[id] ?? null), members: (g.members ?? []).map((id) => spec.council_by_id?.[id] ?? null) }));
  };

  const r: Run = { loaded, spec, loopDir, workspace, io, opts, state, existed, priorSec, session, save, log, rel, stop, enforceCaps, writeArtifact, host, planGateHash, planPath: join(workspace, 'plan.md') };
  try {
    await startPhase(r);
    if (staleProgress) log('gate_progress_dropped', { gate: staleProgress.gate, iteration: staleProgress.iteration, revision: staleProgress.revision, reason: 'state saved by another runner since' });
    const context = await contextPhase(r);
    await planPhase(r, context);
    return await deliveryPhase(r, context);
  } catch (error) {
    return stopPhase(r, error);
  } finally {
    release();
  }
}

/** A path absolute and with its links resolved, as far as it exists. */
function resolvedPath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/** What every phase works with: the spec, the state and its writers, the session, the caps. */
interface Run {
  loaded: LoadedSpec;
  spec: LoadedSpec['spec'];
  loopDir: string;
  workspace: string;
  io: RunnerIo;
  opts: SessionOptions & { runId: string };
  state: LoopState;
  existed: boolean;
  priorSec: number;
  session: Session;
  save(patch?: Partial<LoopState>): void;
  log(name: string, fields: Record<string, unknown>): void;
  rel(p: string): string;
  stop(status: 'failed' | 'blocked', failure: string, message: string, code: number): never;
  enforceCaps(): void;
  writeArtifact(path: string, text: string, phase: 'plan' | 'delivery' | 'revise', iteration: number): void;
  host(prompt: string, purpose: string): Promise<string>;
  planGateHash(): string;
  planPath: string;
  /** The last round that did not pass: what blocked it (checks named by what they said) and its review. */
  lastBlocked?: { gate: GateName; failures: string[]; review: string | null };
}

/** Start: the loop.started event, a clean slate for this run's stop record, unreachable criteria surfaced. */
async function startPhase(r: Run): Promise<void> {
  const { spec, state, io, opts, loaded, loopDir, workspace, save, log, existed, priorSec } = r;
  const previous = state.status;
  io.emit('loop.started', { spec: loaded.path, loop_dir: loopDir, workspace, resumed: existed, status: previous, wall_clock_used_sec: priorSec });
  // Stale stall counts never carry into a new run (Looper resets them too).
  delete state.failure;
  delete state.completed_at;
  delete state.blocking_issues;
  save({ status: 'running', run_id: opts.runId, no_progress: { count: 0, signature: '', gate: '' } });
  // Looper's runner logs the spec as `Path.resolve()` has it: absolute, links resolved.
  log('run_start', { spec: resolvedPath(loaded.path), resumed: existed, previous_status: previous });

  // Judge criteria only a revise_until_clean judge can evaluate: anywhere else they would be skipped unseen.
  for (const gate of ['plan_gate', 'delivery_gate'] as const) {
    const g = spec.gates[gate];
    const judged = (g.criteria ?? []).filter((id) => spec.criteria_by_id[id]?.type === 'judge');
    const why = g.verdict_policy === 'fixed_passes' ? 'the gate is fixed_passes' : g.verdict_source === 'human' ? 'verdict_source is human' : null;
    if (judged.length > 0 && why) {
      const w = `${gate}: judge criteria ${judged.join(', ')} are never evaluated because ${why}`;
      if (!state.warnings.includes(w)) state.warnings.push(w);
      log('judge_criteria_unreachable', { gate, criteria: judged, reason: why });
      io.warn(`warning: ${w}`);
    }
  }
}

/** Context: regathered on every run into context.md; withheld files marked, command output scrubbed. */
async function contextPhase(r: Run): Promise<string> {
  const { spec, state, io, opts, loopDir, workspace, session, save, log, rel, enforceCaps } = r;
  // Context: regathered on every run, withheld files marked, command output scrubbed.
  const chunks: string[] = [];
  const sources = Array.isArray(spec.goal.context_sources) ? spec.goal.context_sources : [];
  for (const [i, src] of sources.entries()) {
    enforceCaps();
    const n = i + 1;
    if (typeof (src as { file?: unknown }).file === 'string') {
      const file = (src as { file: string }).file;
      const abs = resolve(loopDir, file);
      let status: 'read' | 'redacted' | 'missing' | 'blocked_outside_base';
      let body: string;
      if (!isInside(loopDir, abs)) [status, body] = ['blocked_outside_base', '[blocked: outside loop directory]'];
      // Judged both as written and where it resolves (Looper resolves first): a link to a flagged
      // file is as secret as the file, and a flagged name stays withheld whatever it points at.
      else if (isRedacted(rel(abs), session.hostGlobs()) || isRedacted(relative(realish(loopDir), realish(abs)).split('\\').join('/'), session.hostGlobs())) [status, body] = ['redacted', '[redacted]'];
      // read_text(): universal newlines, a BOM kept, as Looper reads it.
      else if (existsSync(abs)) [status, body] = ['read', universalNewlines(new TextDecoder('utf-8', { ignoreBOM: true }).decode(readContextFile(abs, n, file)))];
      else [status, body] = ['missing', '[missing]'];
      chunks.push(`## Context source ${n}: ${file}\n${body}\n`);
      log('context', { source: file, status });
      io.emit('loop.context', { index: n, source: file, status });
    } else {
      const cmd = (src as { cmd: string[] }).cmd;
      const joined = cmd.join(' ');
      const r = await runArgv(cmd, { cwd: loopDir, input: '', timeoutMs: timeoutMs((src as { timeout_sec?: unknown }).timeout_sec, 60), env: opts.env, ...(opts.signal ? { signal: opts.signal } : {}) });
      // A command cut short by our Ctrl-C would leave its partial output in context.md as if it had run.
      if (opts.signal?.aborted) throw new InterruptedError(`interrupted while context command ${joined} ran`);
      if (r.truncated) {
        const w = tailKeptWarning(`context command output (${joined})`);
        if (!state.warnings.includes(w)) state.warnings.push(w);
        io.warn(`warning: ${w}`);
      }
      const block = session.scrub(`exit=${r.exitCode}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}\n`, `context command output (${joined})`, session.hostGlobs());
      chunks.push(`## Context source ${n}: ${joined}\n${block}`);
      log('context_cmd', { argv: cmd, returncode: r.exitCode });
      io.emit('loop.context', { index: n, source: joined, status: 'ran', exit_code: r.exitCode });
    }
  }
  const context = chunks.length ? chunks.join('\n') : 'No context sources configured.';
  writeFileSync(join(workspace, 'context.md'), `${pyRstrip(context)}\n`);
  save();
  return context;
}

/** What a path is when it is none of a file, a directory or missing: the reads that never end. */
function specialKind(abs: string): string | null {
  let st;
  try {
    st = statSync(abs);
  } catch {
    return null; // the read says why, in its own words
  }
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return null;
}

/** A context file's bytes; a file that cannot be read (a directory, no permission) is named in the error. */
function readContextFile(abs: string, n: number, file: string): Buffer {
  // A FIFO (or a device) would block the one synchronous read for good, where no signal can end it.
  const kind = specialKind(abs);
  if (kind) throw new InputError(`context source ${n} (${file}) is not a regular file (${kind}); name a file`);
  try {
    return readFileSync(abs);
  } catch (error) {
    // Node's own words (`EISDIR: illegal operation on a directory, read`) do not say which source.
    throw new InputError(`context source ${n} (${file}) could not be read: ${(error as Error).message}`);
  }
}

/**
 * Whether the spec asks for the after_plan checkpoint. The compiler passes `human_checkpoints`
 * through unchecked, and Looper's runner tests it with Python's `in`: a bare string
 * (`human_checkpoints: after_plan`) asks too. Reading only lists would skip a human the spec asked for.
 */
function asksAfterPlan(checkpoints: unknown): boolean {
  if (typeof checkpoints === 'string') return checkpoints.includes('after_plan');
  if (Array.isArray(checkpoints)) return checkpoints.includes('after_plan');
  return checkpoints !== null && typeof checkpoints === 'object' && Object.hasOwn(checkpoints, 'after_plan');
}

/** Plan: drafted unless kept, gated unless this very plan passed this very gate, then the after_plan checkpoint. */
async function planPhase(r: Run, context: string): Promise<void> {
  const { spec, state, io, save, log, rel, stop, enforceCaps, writeArtifact, host, planGateHash, planPath } = r;
  if (!existsSync(planPath)) {
    enforceCaps();
    log('host_start', { phase: 'plan', target: basename(planPath) });
    writeArtifact(planPath, await host(planPrompt(spec, context), 'plan'), 'plan', 0);
    log('host_done', { phase: 'plan', target: basename(planPath) });
    if (state.gate_progress?.gate === 'plan_gate') delete state.gate_progress;
    save();
  }

  // A passed plan gate is kept across resumes (re-judging it would spend calls and could undo it),
  // but only for the plan it judged under the gate it passed: a redrafted or edited plan, or a
  // changed plan gate, is gated again, and so is a pass recorded without those hashes (Looper's).
  const pg = state.plan_gate;
  const planGated = !!pg?.passed_at && pg.sha256 === sha256(readFileSync(planPath)) && pg.gate_sha256 === planGateHash();
  if (!planGated) {
    if (pg?.passed_at) {
      log('plan_regated', { reason: pg.sha256 === undefined ? 'no hash recorded' : pg.gate_sha256 !== planGateHash() ? 'plan_gate changed' : 'plan.md changed' });
      delete state.plan_gate;
      if (state.checkpoints?.after_plan) delete state.checkpoints.after_plan;
    }
    // The plan gate's rounds take the one gate_progress slot: a delivery's count (and its exhaustion)
    // waits aside, so gating a plan again never hands a delivery that used its revisions a fresh budget.
    if (state.gate_progress?.gate === 'delivery_gate') {
      state.gate_progress_parked = state.gate_progress;
      delete state.gate_progress;
      save();
    }
    await runGate(r, 'plan_gate', planPath, 0);
  }
  if (state.gate_progress_parked && state.gate_progress?.gate !== 'plan_gate') {
    state.gate_progress = state.gate_progress_parked;
    delete state.gate_progress_parked;
    save();
  }

  if (asksAfterPlan(spec.loop_control.human_checkpoints) && !state.checkpoints?.after_plan) {
    const answer = await io.ask("Human checkpoint 'after_plan': type 'continue' to proceed: ");
    if (answer === null) throw new InputRequired('human checkpoint after_plan');
    if (answer!.trim().toLowerCase() !== 'continue') stop('blocked', 'human_checkpoint:after_plan', 'human checkpoint after_plan was not continued', LoopExit.error);
    state.checkpoints = { ...(state.checkpoints ?? {}), after_plan: io.now().toISOString() };
    log('human_checkpoint_passed', { checkpoint: 'after_plan' });
    save();
  }
}

/** The gates phase: rounds on one artifact until it passes, runs out of revisions, or the run stops. */
async function runGate(r: Run, gate: GateName, artifact: string, iteration: number): Promise<boolean> {
  const { spec, state, io, loopDir, workspace, session, save, log, rel, stop, enforceCaps, writeArtifact, host, planGateHash } = r;
  const g = spec.gates[gate];
  const max = maxRevisions(g);
  const p = state.gate_progress;
  const mine = p && p.gate === gate && p.iteration === iteration ? p : undefined;
  let revision = mine ? mine.revision : 0;
  // A re-run must not hand an artifact that used up its revisions a fresh budget; a raised
  // max_revisions does give it the difference.
  if (mine?.exhausted && revision >= max) {
    log('gate_exhausted', { gate, iteration, revisions: revision, resumed: true });
    if (gate === 'plan_gate') stop('failed', 'plan_gate_max_revisions_reached', `plan_gate: still revise after ${max} revision(s) (in an earlier run; change plan.md or raise max_revisions)`, LoopExit.failed);
    io.info(`${gate}: ${rel(artifact)} already used its ${max} revision(s) in an earlier run`);
    return false;
  }
  if (revision > 0) io.info(`${gate}: resuming at revision ${revision} of ${max}`);
  for (;;) {
    enforceCaps();
    // After the state's count and after any review file already there: Looper's runner numbers
    // its reviews from 1 in every process and keeps no count, so its workspace has files we must not overwrite.
    const round = Math.max(state.review_rounds[gate] ?? 0, highestReview(workspace, gate)) + 1;
    state.review_rounds[gate] = round;
    save({ gate_progress: { gate, iteration, revision } });
    const res = await runGateRound(session, { gate, artifact, iteration, round, revision, reviewPath: join(workspace, `review-${gate}-${round}.md`) });
    if (res.passed) {
      delete state.gate_progress;
      const record: { passed_at: string; sha256?: string; gate_sha256?: string } = { passed_at: io.now().toISOString() };
      if (gate === 'plan_gate') [record.sha256, record.gate_sha256] = [sha256(readFileSync(artifact)), planGateHash()];
      save({ status: `${gate}_passed`, [gate]: record });
      log('gate_passed', { gate, artifact: basename(artifact), round });
      io.info(`${gate}: passed`);
      return true;
    }
    if (res.reviewRel) state.last_review = resolve(loopDir, res.reviewRel);
    if (!res.anotherPass) {
      // Where a progress view shows each verdict, stderr says it for a person whose stdout is a pipe.
      const named = namedFailures(res);
      r.lastBlocked = { gate, failures: named, review: res.reviewRel };
      io.info(`${gate}: revise — ${named[0] ?? 'revise'}${named.length > 1 ? ` (+${named.length - 1} more)` : ''}${res.reviewRel ? ` — see ${res.reviewRel}` : ''}`);
      // No-progress: the same gate failing the same way, round after round.
      const signature = [...res.failures].sort().join('\n');
      const np = spec.loop_control.no_progress ?? { max_stalled_iterations: 2, action: 'stop' };
      const threshold = typeof np.max_stalled_iterations === 'number' ? np.max_stalled_iterations : 2;
      const count = state.no_progress.gate === gate && state.no_progress.signature === signature ? state.no_progress.count + 1 : 1;
      // Written with the next save (the revision's, the cap's or the stop's): a run killed before it
      // judges this same artifact again and counts it once, not twice.
      state.no_progress = { gate, signature, count, threshold, updated_at: io.now().toISOString() };
      if (count >= threshold) {
        save();
        log('no_progress_detected', { gate, count, failures: res.failures });
        io.emit('no_progress.detected', { gate, count, threshold, failures: res.failures, action: String(np.action) });
        let override = false;
        if (np.action === 'human_checkpoint') {
          const answer = await io.ask("No-progress detected. Type 'continue' to allow one more revision: ");
          if (answer === null) throw new InputRequired(`no-progress checkpoint on ${gate}`);
          override = answer?.trim().toLowerCase() === 'continue';
          if (override) {
            save({ no_progress: { gate, signature, count: 0, threshold } });
            log('no_progress_override', { gate });
          }
        }
        if (!override) {
          state.blocking_issues = res.failures;
          stop('failed', 'no_progress_detected', `no progress: ${gate} failed the same way ${count} times in a row`, LoopExit.failed);
        }
      }
    }
    if (revision >= max) {
      save({ gate_progress: { gate, iteration, revision, exhausted: true } });
      if (gate === 'plan_gate') stop('failed', 'plan_gate_max_revisions_reached', `plan_gate: still revise after ${max} revision(s)`, LoopExit.failed);
      log('gate_exhausted', { gate, iteration, revisions: revision });
      io.info(`${gate}: revise after ${max} revision(s); next iteration`);
      return false;
    }
    enforceCaps();
    const current = readFileSync(artifact, 'utf8');
    writeArtifact(artifact, await host(revisePrompt(spec, current, res.review), 'revise'), 'revise', iteration);
    revision += 1;
    save({ status: `${gate}_revision_${revision}`, gate_progress: { gate, iteration, revision } });
    log('revision', { gate, revision, artifact: basename(artifact) });
    io.emit('gate.revision', { gate, revision, artifact: rel(artifact) });
  }
}

/** The highest round number among the workspace's `review-<gate>-<n>.md` files (0 for none). */
function highestReview(workspace: string, gate: GateName): number {
  const pattern = new RegExp(`^review-${gate}-(\\d+)\\.md$`);
  let highest = 0;
  for (const name of readdirSync(workspace)) {
    const m = pattern.exec(name);
    if (m) highest = Math.max(highest, Number(m[1]));
  }
  return highest;
}

/** Deliveries: one draft per iteration (kept ones are gated as they are), each through the delivery gate. */
async function deliveryPhase(r: Run, context: string): Promise<Outcome> {
  const { spec, state, io, workspace, save, log, rel, stop, enforceCaps, writeArtifact, host, planPath } = r;
  const usage = state.usage;
  const maxIt = spec.loop_control.max_iterations;
  for (let iteration = Math.max(1, state.iteration); iteration <= maxIt; iteration += 1) {
    enforceCaps();
    const resumedHere = iteration === state.iteration;
    save({ status: 'delivery', iteration });
    io.emit('iteration.started', { iteration, max_iterations: maxIt });
    const path = join(workspace, `delivery-${iteration}.md`);
    if (!existsSync(path)) {
      const priorPath = join(workspace, `delivery-${iteration - 1}.md`);
      const prior =
        iteration > 1 && existsSync(priorPath)
          ? { name: `delivery-${iteration - 1}.md`, text: readFileSync(priorPath, 'utf8'), review: state.last_review && existsSync(state.last_review) ? readFileSync(state.last_review, 'utf8') : null }
          : null;
      log('host_start', { phase: 'delivery', target: basename(path) });
      writeArtifact(path, await host(deliveryPrompt(spec, { context, plan: readFileSync(planPath, 'utf8'), iteration, prior }), 'delivery'), 'delivery', iteration);
      log('host_done', { phase: 'delivery', target: basename(path) });
    } else if (!resumedHere) io.info(`delivery-${iteration}.md exists; gating it as is`);
    if (await runGate(r, 'delivery_gate', path, iteration)) {
      save({ status: 'passed', final_delivery: path, completed_at: io.now().toISOString() });
      log('run_passed', { final_delivery: path });
      io.info(`loop passed: ${rel(path)}`);
      io.emit('loop.completed', { final_delivery: rel(path), iteration, wall_clock_used_sec: state.wall_clock_used_sec, usage, already_passed: false });
      return { code: LoopExit.passed, state };
    }
  }
  stop('failed', 'max_iterations_reached', `no delivery passed in ${maxIt} iteration(s)`, LoopExit.failed);
  return { code: LoopExit.failed, state };
}

/** Stop: exactly one terminal state, whatever went wrong. */
function stopPhase(r: Run, error: unknown): Outcome {
  const { state, io, opts, save, log } = r;
  const usage = state.usage;
  let status: 'failed' | 'blocked' = 'failed';
  let failure: string;
  let code: number;
  if (error instanceof LoopStop) [status, failure, code] = [error.status, error.failure, error.exitCode ?? LoopExit.error];
  else if (opts.signal?.aborted) [failure, code] = ['interrupted', 130];
  else [failure, code] = [error instanceof Error ? error.message : String(error), LoopExit.error];
  // A Ctrl-C at a question can also end stdin, which reads as a refusal: the signal is what happened.
  if (opts.signal?.aborted) [status, failure, code] = ['failed', 'interrupted', 130];
  try {
    save({ status, failure, completed_at: io.now().toISOString() });
    // A decision (cap, refusal, signal) is a `stop`; a model CLI failure or a crash is a `run_error`.
    const decided = (error instanceof LoopStop && !(error instanceof ModelCallFailed)) || failure === 'interrupted';
    log(decided ? 'stop' : 'run_error', decided ? { reason: failure } : { error: failure });
  } catch {
    /* the disk itself failed: the event below still ends the stream */
  }
  // The last line names the cause: for a gate that never passed, what still blocked it (a view says it itself).
  const b = r.lastBlocked;
  const blocked = !io.viewing && b && b.failures.length > 0 && /max_iterations|max_revisions|no_progress/.test(failure) ? ` — ${b.gate} still blocked by: ${b.failures.join('; ')}${b.review ? ` (see ${b.review})` : ''}` : '';
  io.warn(`loop ${status}: ${error instanceof Error ? error.message : String(error)}${blocked}`);
  io.emit('loop.failed', { status, failure, exit_code: code, iteration: state.iteration, wall_clock_used_sec: state.wall_clock_used_sec, usage });
  return { code, state };
}
