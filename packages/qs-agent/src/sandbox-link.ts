// Opens the run's sandbox: re-opened from the stream's sandbox.ready, or provisioned here (with setup) when there is none.
import type { Emitter, Payload } from '@quickloop/events';
import { openSandbox, type BackendChoice, type EgressEvent, type Sandbox } from '@quickloop/sandbox';

export type SandboxReady = Payload<'sandbox.ready'>;
export type TaskLoaded = Payload<'task.loaded'>;

export interface SandboxChoice {
  backend: BackendChoice;
  allowUnenforced: boolean;
  env: Record<string, string | undefined>;
}

/** Emits each egress decision as it is made; a closed downstream is noticed at the next awaited emit. */
export function egressEmitter(emitter: Emitter, runId: string): (event: EgressEvent) => void {
  return (event) => {
    const { type, ...payload } = event;
    try {
      void emitter.emit(type, { run_id: runId }, payload as never);
    } catch {
      /* the writer is closed; the stage ends at its next await */
    }
  };
}

/** Re-opens the workspace another stage described, under the same backend and policy, with its own proxy. */
export async function reopen(ready: SandboxReady, choice: SandboxChoice, onEgress: (e: EgressEvent) => void): Promise<Sandbox> {
  return openSandbox({
    workspace: { root: ready.root, workspace: ready.workspace, home: ready.home, tmp: ready.tmp },
    policy: ready.policy,
    backend: ready.backend === 'docker' ? 'auto' : ready.backend,
    // The stage that made the workspace already accepted an unenforced backend, and every
    // result downstream says so; asking for the flag again on each stage would add nothing.
    allowUnenforced: choice.allowUnenforced || !ready.enforced,
    env: choice.env,
    onEgress,
  });
}

export interface Provisioned {
  sandbox: Sandbox;
  ready: SandboxReady;
  /** The detail of setup.failed, when a setup command failed (the agent must not start). */
  setupFailure?: string;
}

/** Makes a fresh sandbox for a task that arrived without one, runs its setup and emits what qs-sandbox would. */
export async function provision(
  loaded: TaskLoaded,
  runId: string,
  choice: SandboxChoice & { keep: boolean },
  emitter: Emitter,
  newId: () => string,
  signal: AbortSignal,
): Promise<Provisioned> {
  const sandbox = await openSandbox({
    policy: loaded.policy,
    backend: choice.backend,
    allowUnenforced: choice.allowUnenforced,
    env: choice.env,
    onEgress: egressEmitter(emitter, runId),
  });
  const d = sandbox.describe();
  const ready: SandboxReady = {
    root: d.root,
    workspace: d.workspace,
    home: d.home,
    tmp: d.tmp,
    backend: d.backend,
    enforced: d.enforced,
    reason: d.reason,
    policy: d.policy,
    keep: choice.keep,
  };
  await emitter.emit('sandbox.ready', { run_id: runId }, ready);
  const { budgets } = loaded.task;
  for (const [index, command] of loaded.task.setup.entries()) {
    if (signal.aborted) break;
    const id = newId();
    await emitter.emit('setup.started', { run_id: runId, id }, { index, command });
    const r = await sandbox.exec(command, { timeoutMs: budgets.max_command_seconds * 1000, maxOutputChars: budgets.max_output_chars, signal });
    await emitter.emit(
      'setup.completed',
      { run_id: runId, id: newId(), parent_id: id },
      {
        index,
        command,
        exit_code: r.exitCode,
        timed_out: r.timedOut,
        duration_ms: Math.round(r.durationMs),
        output: r.output,
        original_chars: r.originalChars,
        truncated: r.truncated,
      },
    );
    if (r.exitCode !== 0 && !signal.aborted) {
      const detail = `setup step ${index + 1} ${r.timedOut ? 'timed out' : `exited ${r.exitCode}`}: ${command.replace(/\s+/g, ' ').slice(0, 160)}`;
      await emitter.emit('setup.failed', { run_id: runId }, { index, command, exit_code: r.exitCode, detail });
      return { sandbox, ready, setupFailure: detail };
    }
  }
  return { sandbox, ready };
}
