// qs-agent: for each run in the stream, open (or provision) its sandbox and let the agent work; forward the rest.
import { performance } from 'node:perf_hooks';
import { CliError, createLogger, terminalSafe, isPipeClosed, QsExit, UsageError, type Io, type LogLevel } from '@quickloop/cli-kit';
import { createEmitter, EventWriter, readEvents, unrunnable, untilAborted, type Emitter, type Payload, type WireEvent } from '@quickloop/events';
import { egressEmitter, emitUsage, provisionSandbox, removeLayout, type BackendChoice, type Sandbox } from '@quickloop/sandbox';
import type { Agent } from './agents/agent.js';
import { replayAgent } from './agents/replay.js';
import { reopen, type SandboxReady, type TaskLoaded } from './sandbox-link.js';

import { createToolbelt, type DocsSettings } from './toolbelt.js';

export const STAGE = 'qs-agent';

/** Agents by --agent name; model agents register here. */
export const AGENTS: Record<string, Agent> = { replay: replayAgent };

export interface AgentOptions {
  agent: string;
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
  const agent = AGENTS[opts.agent];
  if (!agent) throw new UsageError(`unknown agent '${opts.agent}' (known: ${Object.keys(AGENTS).join(', ')})`);
  const writer = new EventWriter(io.stdout);
  const emitter = createEmitter({ stage: STAGE, writer, now: io.now });
  const runs = new Map<string, RunState>();
  let pending: RunState | undefined;
  let stageFailures = 0;
  /** Runs whose input described a sandbox that is not there (exit 3, as qs-check says for the same line). */
  let badInput = 0;
  const choice = { backend: opts.backend, allowUnenforced: opts.allowUnenforced, env: io.env };

  const readyForAgent = (s: RunState): boolean =>
    !s.handled && !s.terminal && !s.setupFailed && s.ready !== undefined && s.setupDone >= s.loaded.task.setup.length;

  const failRun = async (s: RunState, error: string, input = false): Promise<void> => {
    s.handled = true;
    if (input) badInput += 1;
    else stageFailures += 1;
    log.error(`${STAGE}: ${terminalSafe(s.loaded.task.name)}: ${terminalSafe(error)}`);
    await emitter.emit('run.failed', { run_id: s.runId }, { failed_stage: STAGE, error });
  };

  const work = async (s: RunState, sandbox: Sandbox): Promise<void> => {
    s.handled = true;
    const started = performance.now();
    await emitter.emit('agent.started', { run_id: s.runId }, { agent: agent.name, task: s.loaded.task.name });
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
    try {
      outcome = await agent.run({ runId: s.runId, task: s.loaded.task, tools, signal: io.signal, log, elapsedMs: () => performance.now() - started });
    } catch (error) {
      if (error instanceof CliError && error.kind === 'usage') throw error;
      outcome = { stopReason: io.signal.aborted ? 'interrupted' : 'error', detail: `agent failed: ${(error as Error).message}` };
    } finally {
      // Closing waits for the proxy's last decisions, so every egress event precedes agent.completed.
      ({ leftRunning } = await sandbox.close());
    }
    if (io.signal.aborted) outcome = { stopReason: 'interrupted', detail: outcome.stopReason === 'interrupted' ? outcome.detail : `interrupted (${outcome.detail})` };
    log.info(`${STAGE}: ${terminalSafe(s.loaded.task.name)}: ${outcome.stopReason} — ${terminalSafe(outcome.detail)}`);
    await emitUsage(emitter, s.runId, sandbox.describe());
    if (leftRunning.length > 0) log.info(`${STAGE}: ${terminalSafe(s.loaded.task.name)}: killed ${leftRunning.length} process${leftRunning.length === 1 ? '' : 'es'} left running: ${leftRunning.map((p) => terminalSafe(p)).join(' · ')}`);
    await emitter.emit(
      'agent.completed',
      { run_id: s.runId },
      {
        agent: agent.name,
        stop_reason: outcome.stopReason,
        detail: outcome.detail,
        commands: tools.commands,
        duration_ms: Math.round(performance.now() - started),
        ...(leftRunning.length > 0 ? { left_running: leftRunning } : {}),
      },
    );
  };

  const openAndWork = async (s: RunState): Promise<void> => {
    let sandbox: Sandbox;
    try {
      sandbox = await reopen(s.ready as SandboxReady, choice, egressEmitter(emitter, s.runId));
    } catch (error) {
      if (error instanceof CliError && error.kind === 'usage') throw error;
      await failRun(s, `cannot re-open the sandbox at ${(s.ready as SandboxReady).workspace}: ${(error as Error).message}`, error instanceof CliError && error.kind === 'input');
      return;
    }
    await work(s, sandbox);
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
    let provisioned: Awaited<ReturnType<typeof provisionSandbox>>;
    try {
      provisioned = await provisionSandbox(s.loaded, s.runId, { ...choice, keep: opts.keep, allowRegistries: opts.allowRegistries }, emitter, io.newId, io.signal);
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
    await work(s, provisioned.sandbox);
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
