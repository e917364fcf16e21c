// qs-check: after each run's agent, run its check in the same sandbox, classify with every event in, end the run.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { CliError, createLogger, shownName, terminalSafe, QsExit, type Io, type LogLevel } from '@quickloop/cli-kit';
import { createEmitter, EventWriter, readEvents, signalName, untilAborted, type Emitter } from '@quickloop/events';
import { pipIndexes } from '@quickloop/registries';
import { fetchInstallMetadata, fetchPipFiles, harvestInstallCacheAsync, hasNpmIndex, installedDists, notePipLayouts, npmRegistry, registryOf, removeLayout, removeStaleParts, unrecordedNote, wantedMetadata, type EgressEvent, type NpmRegistry, type PipIndexes } from '@quickloop/sandbox';
import type { ClassificationName } from '@quickloop/events';
import { classify, isEvidential, label, type RunEvidence } from './classify.js';
import { runCheck } from './check.js';
import { closeOpen, docsUnread, helperFailure, limitHitDetail, newFacts, observe, observeCheckEgress, observeCheckLimits, recordedDiverged, sessionCut, unreadRoute, type RunFacts } from './facts.js';


export const STAGE = 'qs-check';
/** One run's pip harvest, all of it, at most. */
const PIP_HARVEST_MS = 15 * 60_000;

export interface CheckOptions {
  /** Keep every workspace (otherwise removed unless its sandbox.ready says keep). */
  keep: boolean;
  /** A sweep's install cache: the npm blobs each run's home holds are verified and taken into it, and the files its pip installed fetched into it, before the home goes. */
  installCache?: string;
  /** npm's registry and cafile, as given (qs run asks npm once per sweep); otherwise npm is asked at the first harvest. */
  npm?: { registry: string; cafile?: string };
  level: LogLevel;
}

interface Tally {
  passed: number;
  docsGap: number;
  other: number;
  /** Runs the input did not describe fully (exit 3). */
  incomplete: number;
  interrupted: number;
}

export async function run(opts: CheckOptions, io: Io): Promise<number> {
  const log = createLogger({ stream: io.stderr, env: io.env, level: opts.level });
  const writer = new EventWriter(io.stdout);
  const emitter = createEmitter({ stage: STAGE, writer, now: io.now });
  const runs = new Map<string, RunFacts>();
  const tally: Tally = { passed: 0, docsGap: 0, other: 0, incomplete: 0, interrupted: 0 };
  let interruptedIn: string | undefined;
  /** A check that could not run at all is the harness's failure, never a verdict on the docs. */
  const checkErrors = new Map<string, { error: string; badInput: boolean }>();

  const egressTo = (f: RunFacts) => (event: EgressEvent): void => {
    const { type, ...payload } = event;
    const made = emitter.make(type, { run_id: f.runId }, payload as never);
    observe(f, made as never);
    observeCheckEgress(f, event as never);
    try {
      void writer.write(made);
    } catch {
      /* downstream closed: noticed at the next awaited write */
    }
  };

  /** Asked once, at the first harvest: null when npm cannot say (then only blobs are shared). */
  let registry: NpmRegistry | null | undefined;
  /** The packuments being fetched for the store: awaited before this stage ends, so the next attempt of a sweep sees them. */
  const fetching: Promise<void>[] = [];
  const harvestMetadata = (store: string, home: string): void => {
    if (io.signal.aborted || !hasNpmIndex(home)) return;
    if (registry === undefined) registry = (opts.npm ? registryOf(opts.npm.registry, opts.npm.cafile) : npmRegistry(io.cwd, io.env as NodeJS.ProcessEnv)) ?? null;
    if (registry === null) return;
    // Only which packuments npm asked for is read from the run's cache, before its home goes; the harness fetches them itself.
    const wants = wantedMetadata(home, registry);
    if (wants.length === 0) return;
    fetching.push(
      fetchInstallMetadata(store, wants, registry).then((m) => {
        const line = `${STAGE}: install cache: packuments from the registry: ${m.fetched} fetched, ${m.revalidated} unchanged, ${m.fresh} still fresh`;
        if (m.failed > 0 || m.overBudget > 0) log.warn(`${line}, ${m.failed + m.overBudget} could not be had${m.overBudget > 0 ? ` (${m.overBudget} over the harvest's budget)` : ''} (npm fetches those itself)`);
        else log.verbose(line);
      }),
    );
  };
  /** pip's indexes here, read at the first harvest that found a pip install. */
  let indexes: PipIndexes | undefined;
  const harvestPip = (store: string, ready: { home: string; workspace: string }): void => {
    if (io.signal.aborted) return;
    // Only which distributions pip installed is read from the run's folders; the harness downloads the files itself.
    const dists = installedDists([ready.workspace, ready.home]);
    if (dists.length === 0) return;
    notePipLayouts(store, ready.home);
    if (indexes === undefined) {
      const found = pipIndexes({ env: io.env, home: io.env.HOME ?? homedir() });
      let ca: string | undefined;
      try {
        if (found.cert !== undefined) ca = readFileSync(found.cert, 'utf8');
      } catch {
        /* pip itself would fail on it too; the system's roots are still used */
      }
      indexes = { urls: found.urls, ...(ca !== undefined ? { ca } : {}) };
    }
    fetching.push(
      // A signal ends it at once; an index that answers slowly ends it after a while: pip downloads the rest itself.
      fetchPipFiles(store, dists, indexes, ready.home, { signal: AbortSignal.any([io.signal, AbortSignal.timeout(PIP_HARVEST_MS)]) }).then((r) => {
        const line = `${STAGE}: install cache: pip files from the index: ${r.fetched} fetched, ${r.known} already there, ${r.notOnIndex} not on the index`;
        if (r.failed > 0 || r.overBudget > 0) log.warn(`${line}, ${r.failed + r.overBudget} could not be had${r.overBudget > 0 ? ` (${r.overBudget} over the harvest's budget)` : ''} (pip downloads those itself)`);
        else log.verbose(line);
      }),
    );
  };
  const settleFetching = async (): Promise<void> => {
    while (fetching.length > 0) await Promise.all(fetching.splice(0));
  };

  let swept = false;
  const cleanup = async (f: RunFacts): Promise<string | null> => {
    if (!f.ready || f.cleaned) return null;
    f.cleaned = true;
    if (opts.installCache !== undefined) {
      // What a killed harvest left half-copied in the store goes, once per stage.
      if (!swept) {
        swept = true;
        removeStaleParts(opts.installCache);
      }
      // The stages before this one have ended, with every process they started: the home is still.
      // The packuments' fetches start first: they are network-bound, and go on while the blobs are copied.
      harvestMetadata(opts.installCache, f.ready.home);
      harvestPip(opts.installCache, f.ready);
      const h = await harvestInstallCacheAsync(opts.installCache, f.ready.home);
      const refused = Object.entries(h.refused).map(([why, n]) => `${n} ${why}`).join(', ');
      if (refused !== '') log.warn(`${STAGE}: install cache: refused what the run left in its npm cache (${refused}); ${h.added} blob${h.added === 1 ? '' : 's'} taken`);
      else log.verbose(`${STAGE}: install cache: ${h.added} blob${h.added === 1 ? '' : 's'} taken, ${h.known} already there`);
    }
    if (opts.keep || f.ready.keep) return f.ready.root;
    leaving.push(f.ready.root);
    return null;
  };
  /** Sandboxes of finished runs, removed once their run's last event is out: the verdict does not wait for them. */
  const leaving: string[] = [];
  const removeFinished = (): void => {
    for (const root of leaving.splice(0)) {
      if (io.handOffRemoval !== undefined) {
        io.handOffRemoval(root);
        continue;
      }
      try {
        removeLayout({ root });
      } catch (error) {
        log.warn(`${STAGE}: could not remove ${terminalSafe(root)}: ${terminalSafe((error as Error).message)}`);
      }
    }
  };

  /**
   * Ends a run with run.failed: bad input (exit 3), or this stage's own failure (no evidence, exit 2).
   * `stage`: the one that could not do its part, when the stream shows it is another (an agent that
   * started and never finished).
   */
  const fail = async (f: RunFacts, error: string, badInput = true, stage: string = STAGE): Promise<void> => {
    if (badInput) tally.incomplete += 1;
    else tally.other += 1;
    log.error(`${STAGE}: ${terminalSafe(f.loaded?.task.name ?? f.runId)}: ${terminalSafe(error)}`);
    await emitter.emit('run.failed', { run_id: f.runId }, { failed_stage: stage, error });
  };

  const check = async (f: RunFacts): Promise<void> => {
    // The agent's last command never said how it ended; what it met is its own, not the check's.
    closeOpen(f);
    try {
      const r = await runCheck(f, { emitter, newId: io.newId, signal: io.signal, env: io.env, onEgress: egressTo(f) });
      if (r.egressUnrecorded > 0) log.warn(`${STAGE}: ${terminalSafe(f.loaded?.task.name ?? f.runId)}: the check's ${unrecordedNote(r.egressUnrecorded)}`);
      if (r.interrupted) interruptedIn = 'check';
      else {
        f.check = r;
        if (!r.passed) {
          f.denied += r.denied;
          observeCheckLimits(f, r.limitHits);
        }
      }
    } catch (error) {
      if (error instanceof CliError && error.kind === 'usage') throw error;
      if (io.signal.aborted) interruptedIn = 'check';
      else checkErrors.set(f.runId, { error: `the check could not run: ${(error as Error).message}`, badInput: error instanceof CliError && error.kind === 'input' });
    }
  };

  /** Ends a run with exactly one terminal event (conclude), then lets its sandbox go; called once its input is over. */
  const finish = async (f: RunFacts): Promise<void> => {
    try {
      await conclude(f);
    } finally {
      removeFinished();
    }
  };
  const conclude = async (f: RunFacts): Promise<void> => {
    if (f.finished) return;
    f.finished = true;
    if (f.upstreamTerminal) {
      // Another stage already ended it (a stage failure upstream): no verdict, but still the last stage.
      tally.other += 1;
      await cleanup(f);
      return;
    }
    if (io.signal.aborted || f.agent?.stopReason === 'interrupted') {
      tally.interrupted += 1;
      // A setup step that never reported its end was running: the agent never started.
      const inSetup = f.open !== undefined && f.commands.get(f.open.id)?.kind === 'setup';
      const phase = interruptedIn ?? (inSetup ? 'setup' : f.agent ? (f.agent.stopReason === 'interrupted' ? 'agent' : 'check') : 'waiting for the agent');
      await emitter.emit('run.interrupted', { run_id: f.runId }, { signal: io.signal.aborted ? signalName(io.signal) : 'upstream', phase });
      await cleanup(f);
      return;
    }
    if (!f.loaded && f.invalid !== undefined) return fail(f, `qs-validate refused it, so nothing ran (${f.invalid})`);
    if (!f.loaded) return fail(f, `incomplete stream: events for run ${f.runId} but no task.loaded`);
    if (!f.ready) return fail(f, `incomplete stream: no sandbox.ready for ${f.loaded.task.name} (is an agent stage missing from the pipeline?)`);
    const checkError = checkErrors.get(f.runId);
    if (checkError !== undefined) {
      await fail(f, checkError.error, checkError.badInput);
      await cleanup(f);
      return;
    }
    if (!f.setupFailure && !f.agent) {
      // An agent stage that started the run and never ended it is the stage that failed; with none started, the pipeline lacks one.
      if (f.agentStarted) await fail(f, `incomplete stream: qs-agent started ${f.loaded.task.name} and never finished it (agent.started, no agent.completed: did it stop early?)`, true, 'qs-agent');
      else await fail(f, `incomplete stream: no agent.completed for ${f.loaded.task.name} (is an agent stage missing from the pipeline?)`);
      await cleanup(f);
      return;
    }
    let classification: ClassificationName;
    let stopReason = f.agent?.stopReason ?? 'error';
    let detail = f.agent?.detail ?? '';
    if (f.setupFailure !== undefined) {
      // The agent never started: nothing here is about the docs.
      classification = 'harness_error';
      stopReason = 'error';
      detail = f.setupFailure;
      const hit = f.limitHits.find((h) => h.kind === 'setup');
      if (hit) detail = `${detail}; ${limitHitDetail(hit)}`;
      else if (f.egressBlockedNote !== undefined) detail = `${detail}; the sandbox refused a connection it needed (${f.egressBlockedNote})`;
      else if (f.egressErrorNote !== undefined) detail = `${detail}; a connection it needed failed (${f.egressErrorNote})`;
    } else {
      closeOpen(f);
      const syntaxError = f.check?.syntaxError;
      const routeUnread = unreadRoute(f);
      const cut = sessionCut(f);
      const helper = helperFailure(f);
      const limitHit = f.limitHits[0] !== undefined ? limitHitDetail(f.limitHits[0]) : undefined;
      // Only the kernel's count: a passing check's output is not read for limit lines (limit-hits.ts).
      const counted = f.check?.passed === true ? f.check.limitHits?.find((h) => h.detected_from === 'counter') : undefined;
      const checkLimitHit = counted !== undefined ? limitHitDetail({ ...counted, command: 'the success check', kind: 'check' }) : undefined;
      const evidence: RunEvidence = {
        stopReason,
        detail,
        checkPassed: f.check ? f.check.passed : null,
        ...(syntaxError !== undefined ? { checkSyntaxError: syntaxError } : {}),
        ...(helper !== undefined ? { checkHelperFailed: helper } : {}),
        ...(f.check?.timedOut === true ? { checkTimedOut: true } : {}),
        ...(cut !== undefined ? { sessionCut: true } : {}),
        ...(routeUnread !== undefined ? { routeUnread } : {}),
        egressErrors: f.egressErrors,
        egressBlocked: f.egressBlocked,
        denied: f.denied,
        ...(limitHit !== undefined ? { limitHit } : {}),
        ...(checkLimitHit !== undefined ? { checkLimitHit } : {}),
        ...(f.agent?.errorKind !== undefined ? { errorKind: f.agent.errorKind } : {}),
      };
      const diverged = recordedDiverged(f);
      const unread = docsUnread(f);
      classification = classify({ ...evidence, ...(diverged !== undefined ? { recordedDiverged: diverged } : {}), ...(unread !== undefined ? { docsUnread: unread } : {}) });
      // classify() asks about these last, so they decided exactly when the run would otherwise be a docs gap.
      const notFollowed = classification !== 'docs_gap' && classify(evidence) === 'docs_gap' ? (diverged ?? unread?.detail) : undefined;
      // A failed replay step names where the docs broke; otherwise the check's reason says what is missing.
      if (notFollowed !== undefined) detail = notFollowed;
      else if (checkLimitHit !== undefined && classification === 'harness_error') detail = checkLimitHit;
      else if (syntaxError !== undefined && classification === 'harness_error') detail = `the success check is not valid bash (${syntaxError})`;
      else if (helper !== undefined && classification === 'harness_error') detail = `the success check checked nothing: its helper failed (${helper}), so the run says nothing about the docs`;
      else if (f.check?.timedOut === true && classification === 'budget_exhausted' && (stopReason === 'completed' || stopReason === 'command_failed')) detail = f.check.reason;
      else if (cut !== undefined && classification === 'budget_exhausted' && (stopReason === 'completed' || stopReason === 'command_failed')) detail = cut;
      // classify() asks about the route only after the agent's own errors, so past those it is what decided.
      else if (routeUnread !== undefined && (classification === 'infra_error' || classification === 'harness_error') && stopReason !== 'error') detail = routeUnread.detail;
      // Past the route, a limit hit is what made a command's failure the harness's (classify's order).
      else if (limitHit !== undefined && classification === 'harness_error' && stopReason !== 'error') detail = limitHit;
      // Then a connection: the failed command's detail alone (`curl exited 56`) does not say the network was the cause.
      else if (classification === 'infra_error' && stopReason !== 'error' && f.egressErrorNote !== undefined) detail = `${detail}; a connection it needed failed (${f.egressErrorNote}), so the run says nothing about the docs`;
      else if (classification === 'harness_error' && stopReason !== 'error' && f.denied === 0 && f.egressBlockedNote !== undefined) detail = `${detail}; the sandbox refused a connection it needed (${f.egressBlockedNote}): the task's network policy, not the docs, stopped it`;
      else if ((classification === 'docs_gap' || stopReason === 'completed') && classification !== 'passed' && stopReason !== 'command_failed' && f.check?.reason) detail = f.check.reason;
      // A pass stands without the page (the check is the verdict), but a route that names a page nobody can read is news to the docs team.
      if (classification === 'passed' && routeUnread !== undefined) detail = `${detail}; docs route page ${routeUnread.page} could not be read (${routeUnread.error}): the run passed without it`;
    }
    if (classification === 'passed') tally.passed += 1;
    else if (classification === 'docs_gap') tally.docsGap += 1;
    else tally.other += 1;
    const kept = await cleanup(f);
    // The summary people read must not let an unenforced pass look like an enforced one.
    const unenforced = f.ready.enforced ? '' : ` (UNENFORCED: ${f.ready.backend} backend)`;
    log.info(`${label(classification)}  ${shownName(f.loaded.task.name)}: ${classification}${unenforced}${classification === 'passed' ? '' : ` — ${terminalSafe(detail)}`}`);
    await emitter.emit(
      'run.completed',
      { run_id: f.runId },
      {
        task: f.loaded.task.name,
        classification,
        label: label(classification),
        evidential: isEvidential(classification),
        stop_reason: stopReason,
        detail,
        backend: f.ready.backend,
        enforced: f.ready.enforced,
        check_exit_code: f.check ? f.check.exitCode : null,
        docs_pages_read: f.pagesRead,
        suspect_page: classification === 'passed' ? null : (f.pagesRead.at(-1) ?? null),
        docs_bypass_attempts: f.docsBypass,
        workspace_kept: kept,
      },
    );
  };

  const ready = (f: RunFacts): boolean => f.agent !== undefined || f.setupFailure !== undefined || f.upstreamTerminal !== undefined;

  try {
    for await (const { raw, event } of untilAborted(readEvents(io.stdin), io.signal)) {
      // This stage's own events from an earlier pass (`qs-check < saved.ndjson`) are superseded by
      // the ones this pass makes; forwarding both would give a run two verdicts.
      if (event.stage === STAGE) continue;
      if (event.type === 'task.loaded' && !runs.has(event.run_id)) {
        // A new run starts only after the previous one's stage work is done, so every event of those
        // runs (their egress included) is in: now they can be classified.
        for (const f of runs.values()) if (!f.finished && ready(f)) await finish(f);
      }
      let f = runs.get(event.run_id);
      if (!f) {
        f = newFacts(event.run_id);
        runs.set(event.run_id, f);
      }
      // Observed before it is forwarded: if downstream is gone, the workspace is still known and removed.
      observe(f, event);
      await writer.forward(raw);
      if (event.type === 'agent.completed' && !f.upstreamTerminal && f.loaded && f.ready) {
        const stop = f.agent?.stopReason;
        if (stop !== 'skipped' && stop !== 'interrupted' && stop !== 'spend_cap' && !io.signal.aborted) await check(f);
      }
    }
    for (const f of runs.values()) await finish(f);
    // Exit 2 alone would not say why: most often the stage upstream failed before emitting anything.
    if (runs.size === 0 && !io.signal.aborted) log.warn(`${STAGE}: no runs in the input: nothing to check (no evidence)`);
    await writer.flush();
    await settleFetching();
  } catch (error) {
    // A closed downstream or a bad line ends the stage, but this is still the last stage: the
    // workspaces of runs it will never finish are removed like any other.
    // A run whose terminal event could not be written (its finish threw) counts as unfinished here.
    for (const f of runs.values()) await cleanup(f);
    removeFinished();
    await settleFetching();
    throw error;
  }
  return exitCode(tally);
}

function exitCode(t: Tally): number {
  if (t.interrupted > 0) return QsExit.interrupted;
  if (t.incomplete > 0) return QsExit.usage;
  if (t.docsGap > 0) return QsExit.docsGap;
  if (t.passed > 0) return QsExit.passed;
  return QsExit.noEvidence;
}

export type { Emitter };
