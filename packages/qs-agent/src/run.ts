// qs-agent: for each run in the stream, open (or provision) its sandbox and let the agent work; forward the rest.
import { homedir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { CliError, createLogger, shownName, terminalSafe, isPipeClosed, QsExit, UsageError, type Io, type LogLevel } from '@quickloop/cli-kit';
import { createEmitter, EventWriter, readEvents, unrunnable, untilAborted, type Emitter, type Payload, type WireEvent } from '@quickloop/events';
import { installSources } from '@quickloop/registries';
import { egressEmitter, emitUsage, provisionSandbox, removeLayout, unrecordedNote, type BackendChoice, type InstallSources, type Sandbox } from '@quickloop/sandbox';
import { parsePriceBook, DEFAULT_PRICE_BOOK, type PriceBook } from '@quickloop/models/core';
import type { Agent, Prepared } from './agents/agent.js';
import { claudeCodeAgent, codexAgent } from './cli-agents/cli-agent.js';
import { createModelAgent } from './agents/model.js';
import { createRecordedAgent } from './agents/recorded.js';
import { checkRecordedFlags } from './config.js';
import { replayAgent } from './agents/replay.js';
import { redactor, resolveVendor, VENDORS } from './agents/credentials.js';
import { makeAdapter } from './agents/vendors.js';
import { reopen, type SandboxReady, type TaskLoaded } from './sandbox-link.js';

import { createToolbelt, type DocsSettings } from './toolbelt.js';

export const STAGE = 'qs-agent';

/** Agents by --agent name that need no configuration beyond the host's (the CLI agents check theirs in preflight). */
export const AGENTS: Record<string, Agent> = { replay: replayAgent, 'claude-code': claudeCodeAgent, codex: codexAgent };

/** Every --agent name: the fixed agents, recorded runs, then the model vendors. */
export const AGENT_NAMES: readonly string[] = [...Object.keys(AGENTS), 'recorded', ...Object.keys(VENDORS)];

/** Model agents' flags. */
export interface ModelFlags {
  model?: string;
  baseUrl?: string;
  /** The text of a --prices file and its name (for messages). */
  prices?: { text: string; file: string };
  /** Ask for whole responses rather than streams (default: stream). */
  stream?: boolean;
  /** --agent recorded: the saved stream (--from) and which of its runs (--from-run). */
  from?: { text: string; file: string };
  fromRun?: string;
  /** The sweep's spend ledger socket (`qs run --max-spend`): model agents reserve each call there. */
  spendLedger?: string;
}

/**
 * The agent for --agent: a fixed one, or a model agent whose key, endpoint and model are resolved
 * here, so that a missing key is a usage error before stdin is read or any sandbox is made.
 */
export function selectAgent(name: string, flags: ModelFlags, env: Record<string, string | undefined>): Agent {
  checkRecordedFlags(name, flags.from, flags.fromRun);
  const fixed = AGENTS[name];
  if (fixed) return fixed;
  if (name === 'recorded') {
    return createRecordedAgent({ ...flags.from!, ...(flags.fromRun !== undefined ? { runId: flags.fromRun } : {}) });
  }
  if (!VENDORS[name]) throw new UsageError(`unknown agent '${name}' (known: ${AGENT_NAMES.join(', ')})`);
  const prices: PriceBook = flags.prices ? parsePriceBook(flags.prices.text, flags.prices.file) : DEFAULT_PRICE_BOOK;
  const r = resolveVendor(name, flags, env);
  const redact = redactor(r.secrets, r.params, r.words);
  return createModelAgent(name, () => makeAdapter(name, { apiKey: r.apiKey, ...(r.baseURL !== undefined ? { baseURL: r.baseURL } : {}), log: (line) => process.stderr.write(`${redact(line)}\n`) }), {
    model: r.model,
    baseUrl: r.shownBaseUrl,
    prices,
    stream: flags.stream ?? true,
    redact,
    ...(flags.spendLedger !== undefined ? { spendLedger: flags.spendLedger } : {}),
  });
}

export interface AgentOptions {
  agent: string;
  /** For model agents (--model, --base-url, --prices, --no-stream). */
  modelFlags?: ModelFlags;
  /** An agent to use instead of --agent's (tests, and agents built elsewhere such as recorded runs). */
  agentImpl?: Agent;
  /** The docs reader's settings (--docs-map, --cache-dir, --rate-limit…). */
  docs: DocsSettings;
  /** For a sandbox this stage provisions itself (no sandbox.ready in the input). */
  backend: BackendChoice;
  allowUnenforced: boolean;
  /** Recorded in a sandbox.ready this stage emits, so the last stage keeps the workspace. */
  keep: boolean;
  /** --allow-registry hosts, for a sandbox provisioned here. */
  allowRegistries: string[];
  level: LogLevel;
}

interface RunState {
  runId: string;
  loaded: TaskLoaded;
  ready?: SandboxReady;
  /** The sandbox was provisioned by this stage (not read from the stream). */
  madeHere?: boolean;
  setupDone: number;
  setupFailed: boolean;
  /** The agent ran (or was refused a sandbox): nothing more to do for this run. */
  handled: boolean;
  terminal: boolean;
}

export async function run(opts: AgentOptions, io: Io): Promise<number> {
  const log = createLogger({ stream: io.stderr, env: io.env, level: opts.level });
  const agent = opts.agentImpl ?? selectAgent(opts.agent, opts.modelFlags ?? {}, io.env);
  // What the agent needs from the host (a CLI, a key) is a usage error before any sandbox is made.
  agent.preflight?.(io.env, opts.backend);
  const writer = new EventWriter(io.stdout);
  const emitter = createEmitter({ stage: STAGE, writer, now: io.now });
  const runs = new Map<string, RunState>();
  let pending: RunState | undefined;
  let stageFailures = 0;
  /** Runs whose input described a sandbox that is not there (exit 3, as qs-check says for the same line). */
  let badInput = 0;
  const choice = { backend: opts.backend, allowUnenforced: opts.allowUnenforced, env: io.env };
  /** Where this machine's npm and pip install from, read at the first sandbox made here (no process is started). */
  let sources: InstallSources | undefined;

  const readyForAgent = (s: RunState): boolean =>
    !s.handled && !s.terminal && !s.setupFailed && s.ready !== undefined && s.setupDone >= s.loaded.task.setup.length;

  const failRun = async (s: RunState, error: string, input = false): Promise<void> => {
    s.handled = true;
    if (input) badInput += 1;
    else stageFailures += 1;
    log.error(`${STAGE}: ${shownName(s.loaded.task.name)}: ${terminalSafe(error)}`);
    await emitter.emit('run.failed', { run_id: s.runId }, { failed_stage: STAGE, error });
  };

  const work = async (s: RunState, sandbox: Sandbox, prepared?: Prepared): Promise<void> => {
    s.handled = true;
    const started = performance.now();
    await emitter.emit('agent.started', { run_id: s.runId }, { agent: agent.name, task: s.loaded.task.name, ...agent.started, ...(prepared?.started ?? {}), affordances: opts.docs.affordances ?? 'all' });
    const { budgets, docs } = s.loaded.task;
    const tools = createToolbelt({
      runId: s.runId,
      emitter,
      newId: io.newId,
      executor: sandbox,
      maxCommandSeconds: budgets.max_command_seconds,
      maxOutputChars: budgets.max_output_chars,
      docsAllow: docs.allow,
      docsRoute: docs.path,
      docs: opts.docs,
      signal: io.signal,
    });
    if (opts.docs.probeAffordances && docs.path[0] !== undefined) await tools.probeAffordances(docs.path[0]);
    let outcome: Awaited<ReturnType<Agent['run']>>;
    let leftRunning: string[] = [];
    let egressUnrecorded = 0;
    try {
      outcome = await agent.run({
        runId: s.runId,
        task: s.loaded.task,
        tools,
        signal: io.signal,
        log,
        elapsedMs: () => performance.now() - started,
        emitter,
        newId: io.newId,
        setup: s.loaded.task.setup,
        sandbox,
        ...(prepared ? { prepared } : {}),
      });
    } catch (error) {
      if (error instanceof CliError && error.kind === 'usage') throw error;
      outcome = { stopReason: io.signal.aborted ? 'interrupted' : 'error', detail: `agent failed: ${(error as Error).message}` };
    } finally {
      // Closing waits for the proxy's last decisions, so every egress event precedes agent.completed.
      ({ leftRunning, egressUnrecorded } = await sandbox.close());
    }
    if (io.signal.aborted) outcome = { stopReason: 'interrupted', detail: outcome.stopReason === 'interrupted' ? outcome.detail : `interrupted (${outcome.detail})` };
    log.info(`${STAGE}: ${shownName(s.loaded.task.name)}: ${outcome.stopReason} — ${terminalSafe(outcome.detail)}`);
    await emitUsage(emitter, s.runId, sandbox.describe());
    if (egressUnrecorded > 0) log.warn(`${STAGE}: ${shownName(s.loaded.task.name)}: ${unrecordedNote(egressUnrecorded)}`);
    if (leftRunning.length > 0) log.info(`${STAGE}: ${shownName(s.loaded.task.name)}: killed ${leftRunning.length} process${leftRunning.length === 1 ? '' : 'es'} left running: ${leftRunning.map((p) => terminalSafe(p)).join(' · ')}`);
    await emitter.emit(
      'agent.completed',
      { run_id: s.runId },
      {
        agent: agent.name,
        stop_reason: outcome.stopReason,
        detail: outcome.detail,
        commands: outcome.commands ?? tools.commands,
        duration_ms: Math.round(performance.now() - started),
        ...outcome.report,
        ...(leftRunning.length > 0 ? { left_running: leftRunning } : {}),
      },
    );
    if (outcome.usageError !== undefined) {
      // The run is recorded (qs-check sees the config error); no later run could fare better.
      await writer.flush();
      throw new UsageError(outcome.usageError);
    }
  };

  const openAndWork = async (s: RunState): Promise<void> => {
    const prepared = await agent.prepare?.(s.loaded.task, io.env);
    try {
      let sandbox: Sandbox;
      try {
        sandbox = await reopen(s.ready as SandboxReady, choice, egressEmitter(emitter, s.runId), prepared ?? {});
      } catch (error) {
        if (error instanceof CliError && error.kind === 'usage') throw error;
        await failRun(s, `cannot re-open the sandbox at ${(s.ready as SandboxReady).workspace}: ${(error as Error).message}`, error instanceof CliError && error.kind === 'input');
        return;
      }
      await work(s, sandbox, prepared);
    } finally {
      await prepared?.release();
    }
  };

  /** A run whose input is over: provision a sandbox when none came, or say what is missing. */
  const settle = async (s: RunState): Promise<void> => {
    if (s.handled || s.terminal || s.setupFailed || io.signal.aborted) return;
    if (s.ready) {
      await failRun(s, `incomplete stream: sandbox.ready came but only ${s.setupDone} of ${s.loaded.task.setup.length} setup commands completed`);
      return;
    }
    // qs-validate refuses these (QS037); a hand-edited stream can still carry one, and no sandbox is made for it.
    const bad = unrunnableSetup(s.loaded);
    if (bad !== undefined) {
      await failRun(s, bad, true);
      return;
    }
    const prepared = await agent.prepare?.(s.loaded.task, io.env);
    try {
      await provisionAndWork(s, prepared);
    } finally {
      await prepared?.release();
    }
  };

  const provisionAndWork = async (s: RunState, prepared: Prepared | undefined): Promise<void> => {
    let provisioned: Awaited<ReturnType<typeof provisionSandbox>>;
    try {
      const extra = prepared ? { forwards: prepared.forwards, docsReachable: prepared.docsReachable } : {};
      sources ??= installSources({ env: io.env, home: io.env.HOME ?? homedir(), cwd: io.cwd });
      provisioned = await provisionSandbox(s.loaded, s.runId, { ...choice, keep: opts.keep, allowRegistries: opts.allowRegistries, installSources: sources, ...extra }, emitter, io.newId, io.signal);
    } catch (error) {
      if (error instanceof CliError && error.kind === 'usage') throw error;
      await failRun(s, `cannot make a sandbox: ${(error as Error).message}`);
      return;
    }
    s.ready = provisioned.ready;
    s.madeHere = true;
    if (provisioned.setupFailure !== undefined || provisioned.interrupted || io.signal.aborted) {
      s.handled = true;
      await provisioned.sandbox.close();
      await emitUsage(emitter, s.runId, provisioned.ready);
      if (io.signal.aborted) await emitter.emit('agent.completed', { run_id: s.runId }, { agent: agent.name, stop_reason: 'interrupted', detail: 'interrupted during setup', commands: 0, duration_ms: 0 });
      return;
    }
    await work(s, provisioned.sandbox, prepared);
  };

  const observe = (event: WireEvent): RunState | undefined => {
    const s = runs.get(event.run_id);
    switch (event.type) {
      case 'task.loaded': {
        const fresh: RunState = { runId: event.run_id, loaded: event as unknown as TaskLoaded, setupDone: 0, setupFailed: false, handled: false, terminal: false };
        runs.set(event.run_id, fresh);
        return fresh;
      }
      case 'sandbox.ready':
        if (s) s.ready = event as unknown as SandboxReady;
        break;
      case 'setup.completed':
        if (s && event.exit_code === 0) s.setupDone = Math.max(s.setupDone, (event as unknown as Payload<'setup.completed'>).index + 1);
        break;
      case 'setup.failed':
        if (s) s.setupFailed = true;
        break;
      case 'run.completed':
      case 'run.failed':
      case 'run.interrupted':
        if (s) s.terminal = true;
        break;
    }
    return s;
  };

  try {
    for await (const { raw, event } of untilAborted(readEvents(io.stdin), io.signal)) {
      // A new task means the previous one will get no sandbox.ready: it runs now, before the new
      // task is forwarded, so each run's events stay together in the output.
      if (event.type === 'task.loaded' && pending && pending.runId !== event.run_id) {
        await settle(pending);
        pending = undefined;
      }
      await writer.forward(raw);
      const s = observe(event);
      if (event.type === 'task.loaded') pending = s;
      if (s && readyForAgent(s)) {
        await openAndWork(s);
        if (pending === s) pending = undefined;
      }
    }
    if (pending) await settle(pending);
    if (io.signal.aborted) {
      // A run still in its setup when the interrupt came never reached the agent: its end is said
      // here, or the last stage could not tell an interrupted run from one whose agent vanished.
      for (const s of runs.values()) {
        if (s.handled || s.terminal || s.setupFailed) continue;
        s.handled = true;
        await emitter.emit('agent.completed', { run_id: s.runId }, { agent: agent.name, stop_reason: 'interrupted', detail: 'interrupted before the agent started (during setup)', commands: 0, duration_ms: 0 });
      }
    }
    await writer.flush();
  } catch (error) {
    // With nobody downstream, a workspace made here has no later stage to remove it.
    if (isPipeClosed(error) && !opts.keep) {
      for (const s of runs.values()) if (s.ready && s.madeHere) removeLayout(s.ready);
    }
    throw error;
  }
  if (io.signal.aborted) return QsExit.interrupted;
  if (badInput > 0) return QsExit.usage;
  return stageFailures > 0 ? QsExit.noEvidence : QsExit.passed;
}

/** `task.loaded setup[1] cannot be run by bash: …` for the first setup command bash cannot be given. */
export function unrunnableSetup(loaded: TaskLoaded): string | undefined {
  for (const [i, command] of loaded.task.setup.entries()) {
    const why = unrunnable(command);
    if (why !== undefined) return `task.loaded setup[${i}] cannot be run by bash: ${why}`;
  }
  return undefined;
}

export type { Emitter };
