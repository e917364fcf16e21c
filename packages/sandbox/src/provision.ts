// What a stage does to give a task its sandbox: open it under the task's policy, announce it, run setup, all as events.
import { isPipeClosed } from '@quickloop/cli-kit';
import { seedInstallCache } from './install-cache.js';
import { seedPipCache } from './install-pip.js';
import { writeInstallSources, type InstallSources } from './install-sources.js';
import { removeLayout } from './layout.js';
import type { Emitter, Payload } from '@quickloop/events';
import { effectivePolicy } from './install-hosts.js';
import { openSandbox, planSandbox } from './open.js';
import { diskUsage } from './usage.js';
import type { BackendChoice, Denial, EgressEvent, LimitHit, Forward, Sandbox, SandboxLimits } from './types.js';

export type TaskLoadedPayload = Payload<'task.loaded'>;
export type SandboxReadyPayload = Payload<'sandbox.ready'>;

export interface ProvisionOptions {
  backend: BackendChoice;
  allowUnenforced: boolean;
  /** The host environment (PATH, LANG, LC_ALL are taken from it; nothing else). */
  env: Record<string, string | undefined>;
  /** Recorded in sandbox.ready: the last stage keeps the workspace. */
  keep: boolean;
  /** `--allow-registry` hosts. */
  allowRegistries?: readonly string[];
  /** Add the install hosts (default true; never under network.only). */
  installHosts?: boolean;
  /** Where the workspace root is made (default the OS temp folder). */
  baseDir?: string;
  /** Resource limits of the enforced backend (DEFAULT_LIMITS for what is not given). */
  limits?: Partial<SandboxLimits>;
  /** Harness services on the sandbox's loopback (listed in sandbox.ready). */
  forwards?: Forward[];
  /** The docs hosts reachable through the proxy (an agent that reads docs with its own tools). */
  docsReachable?: boolean;
  /** A sweep's install cache (`--install-cache`): its npm blobs and pip cache entries are copied into the new home before setup. */
  installCache?: string;
  /** The registries this machine's npm and pip use (registries' installSources): written into the new home's npmrc and pip.conf where the policy allows them. */
  installSources?: InstallSources;
  /**
   * The caller closes the sandbox after setup and runs nothing more in it (qs-sandbox: the stages
   * after it open their own sessions on its folders). With no setup command either, no session is made.
   */
  setupOnly?: boolean;
}

export interface Provisioned {
  sandbox: Sandbox;
  ready: SandboxReadyPayload;
  /** The one-line detail of setup.failed, when a setup command failed: the agent must not start. */
  setupFailure?: string;
  /** The signal fired during setup; the remaining setup commands did not run. */
  interrupted: boolean;
}

/** Emits each egress decision as it is made. A closed downstream is noticed at the stage's next awaited emit. */
export function egressEmitter(emitter: Emitter, runId: string): (event: EgressEvent) => void {
  return (event) => {
    const { type, ...payload } = event;
    try {
      void emitter.emit(type, { run_id: runId }, payload as never);
    } catch {
      // The writer is closed; the stage ends quietly at its next await.
    }
  };
}

/** Emits a command's refused filesystem accesses (sandbox.denied), each a child of the event that started the command. */
export async function emitDenials(emitter: Emitter, runId: string, parentId: string, denials: readonly Denial[]): Promise<void> {
  for (const denial of denials) await emitter.emit('sandbox.denied', { run_id: runId, parent_id: parentId }, denial);
}

/** Emits the sandbox limits a command ran into (sandbox.limit_hit), each a child of the event that started the command. */
export async function emitLimitHits(emitter: Emitter, runId: string, parentId: string, hits: readonly LimitHit[]): Promise<void> {
  for (const hit of hits) await emitter.emit('sandbox.limit_hit', { run_id: runId, parent_id: parentId }, hit);
}

/** One line: `setup step 2 exited 1: make deps`. */
export function setupFailureDetail(index: number, command: string, exitCode: number, timedOut: boolean): string {
  const what = timedOut ? 'timed out' : `exited ${exitCode}`;
  return `setup step ${index + 1} ${what}: ${command.replace(/\s+/g, ' ').trim().slice(0, 160)}`;
}

/**
 * Opens a fresh sandbox for the task, emits sandbox.ready, then runs each setup command with the
 * task's per-command timeout and output cap (setup.started/setup.completed, egress.* in between).
 * The first failure emits setup.failed and stops. The sandbox is returned open: the caller closes it.
 */
export async function provisionSandbox(
  loaded: TaskLoadedPayload,
  runId: string,
  options: ProvisionOptions,
  emitter: Emitter,
  newId: () => string,
  signal: AbortSignal,
): Promise<Provisioned> {
  const policy = effectivePolicy(loaded.policy, {
    ...(options.allowRegistries ? { allowRegistries: options.allowRegistries } : {}),
    ...(options.installHosts !== undefined ? { installHosts: options.installHosts } : {}),
  });
  // Nothing to run, now or later: no session is made (a third of an attempt's sandbox work), and the
  // stages after this one open their own on the folders it describes.
  const open = options.setupOnly === true && loaded.task.setup.length === 0 && !options.forwards && !options.docsReachable ? planSandbox : openSandbox;
  const sandbox = await open({
    policy,
    backend: options.backend,
    allowUnenforced: options.allowUnenforced,
    env: options.env,
    onEgress: egressEmitter(emitter, runId),
    ...(options.installHosts !== undefined ? { installHosts: options.installHosts } : {}),
    ...(options.baseDir ? { baseDir: options.baseDir } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.forwards ? { forwards: options.forwards } : {}),
    ...(options.docsReachable ? { docsReachable: true } : {}),
  });
  // Anything that goes wrong from here (most often a closed downstream pipe) must not leave the
  // namespace and the proxy alive: they would keep the stage from ever exiting.
  /** Whether sandbox.ready went out: from then on the stages downstream know the folders, and remove them. */
  let announced = false;
  try {
    const d = sandbox.describe();
    if (options.installCache !== undefined) {
      await seedInstallCache(options.installCache, d.home);
      await seedPipCache(options.installCache, d.home);
    }
    if (options.installSources !== undefined) await writeInstallSources(d.home, options.installSources, policy);
    const ready: SandboxReadyPayload = { root: d.root, workspace: d.workspace, home: d.home, tmp: d.tmp, backend: d.backend, enforced: d.enforced, reason: d.reason, policy: d.policy, keep: options.keep, limits: d.limits, ...(d.forwards ? { forwards: d.forwards } : {}) };
    await emitter.emit('sandbox.ready', { run_id: runId }, ready);
    announced = true;
    const { budgets, setup } = loaded.task;
    for (const [index, command] of setup.entries()) {
      if (signal.aborted) return { sandbox, ready, interrupted: true };
      const id = newId();
      await emitter.emit('setup.started', { run_id: runId, id }, { index, command });
      const r = await sandbox.exec(command, { timeoutMs: budgets.max_command_seconds * 1000, maxOutputChars: budgets.max_output_chars, signal });
      await emitDenials(emitter, runId, id, r.denials);
      await emitLimitHits(emitter, runId, id, r.limitHits);
      await emitter.emit(
        'setup.completed',
        { run_id: runId, parent_id: id },
        { index, command, exit_code: r.exitCode, timed_out: r.timedOut, duration_ms: r.durationMs, output: r.output, original_chars: r.originalChars, truncated: r.truncated },
      );
      if (signal.aborted) return { sandbox, ready, interrupted: true };
      if (r.exitCode !== 0) {
        const detail = setupFailureDetail(index, command, r.exitCode, r.timedOut);
        await emitter.emit('setup.failed', { run_id: runId }, { index, command, exit_code: r.exitCode, detail });
        return { sandbox, ready, setupFailure: detail, interrupted: false };
      }
    }
    return { sandbox, ready, interrupted: false };
  } catch (error) {
    await sandbox.close();
    // Nobody downstream was told of the folders (a seed that failed), or nobody is left to read (the
    // pipe closed): no later stage will remove the workspace made here.
    if ((!announced || isPipeClosed(error)) && !options.keep) removeLayout(sandbox.describe());
    throw error;
  }
}

/** Emits what the sandbox's folders hold, once a stage is done with it (never fails the stage). */
export async function emitUsage(emitter: Emitter, runId: string, layout: Pick<SandboxReadyPayload, 'workspace' | 'home' | 'tmp'>): Promise<void> {
  await emitter.emit('sandbox.usage', { run_id: runId }, diskUsage(layout));
}
