// qs-sandbox: for each task.loaded, make its sandbox and run its setup; forward every line, unchanged and in order.
import { createLogger, CliError, isPipeClosed, shownName, terminalSafe, QsExit, UsageError, type Io, type LogLevel } from '@quickloop/cli-kit';
import { createEmitter, EventWriter, readEvents, unrunnable, untilAborted, type Payload } from '@quickloop/events';
import { homedir } from 'node:os';
import { installSources } from '@quickloop/registries';
import { emitUsage, provisionSandbox, selectBackend, unrecordedNote, type BackendChoice, type InstallSources, type SandboxLimits } from '@quickloop/sandbox';

export const STAGE = 'qs-sandbox';

export interface SandboxStageOptions {
  backend: BackendChoice;
  allowUnenforced: boolean;
  /** Extra registry endpoints (`--allow-registry`, read by allowRegistry), added to every task's policy. */
  allowRegistries: string[];
  /** Mark the workspaces to be kept by the last stage. */
  keep: boolean;
  /** Where workspaces are made (default the OS temp folder). */
  baseDir?: string;
  /** A sweep's install cache, seeded into each new home (`--install-cache`). */
  installCache?: string;
  /** Limits other than the defaults (`--max-processes`, `--max-memory`, `--max-tmp`, `--max-shm`). */
  limits?: Partial<SandboxLimits>;
  level: LogLevel;
}

export async function run(opts: SandboxStageOptions, io: Io): Promise<number> {
  const log = createLogger({ stream: io.stderr, env: io.env, level: opts.level });
  // Asked-for backends are checked before any input is read: a refused `local` is a usage error (3)
  // even on an empty stream, never a run that quietly went unenforced.
  const selection = selectBackend(opts.backend, opts.allowUnenforced);
  log.verbose(`${STAGE}: backend ${selection.backend}: ${selection.reason}`);
  const writer = new EventWriter(io.stdout);
  const emitter = createEmitter({ stage: STAGE, writer, now: io.now });
  let inconclusive = 0;
  /** Runs whose task.loaded carried a command bash cannot be given (exit 3, like any bad input line). */
  let badInput = 0;
  /** Where this machine's npm and pip install from, read at the first sandbox (no process is started). */
  let sources: InstallSources | undefined;

  for await (const { raw, event } of untilAborted(readEvents(io.stdin), io.signal)) {
    await writer.forward(raw);
    if (event.type !== 'task.loaded') continue;
    const loaded = event as unknown as Payload<'task.loaded'>;
    const name = loaded.task.name;
    // qs-validate refuses these (QS037); a hand-edited stream can still carry one: no sandbox is made for it.
    const bad = loaded.task.setup.map((c, i) => [i, unrunnable(c)] as const).find(([, why]) => why !== undefined);
    if (bad !== undefined) {
      badInput += 1;
      const message = `task.loaded setup[${bad[0]}] cannot be run by bash: ${String(bad[1])}`;
      log.error(`${STAGE}: ${name}: ${message}`);
      await emitter.emit('run.failed', { run_id: event.run_id }, { failed_stage: STAGE, error: message });
      continue;
    }
    let provisioned: Awaited<ReturnType<typeof provisionSandbox>>;
    try {
      sources ??= installSources({ env: io.env, home: io.env.HOME ?? homedir(), cwd: io.cwd });
      provisioned = await provisionSandbox(
        loaded,
        event.run_id,
        {
          backend: opts.backend,
          allowUnenforced: opts.allowUnenforced,
          env: io.env,
          keep: opts.keep,
          setupOnly: true,
          allowRegistries: opts.allowRegistries,
          ...(opts.baseDir ? { baseDir: opts.baseDir } : {}),
          ...(opts.installCache !== undefined ? { installCache: opts.installCache } : {}),
          ...(opts.limits !== undefined ? { limits: opts.limits } : {}),
          installSources: sources,
        },
        emitter,
        io.newId,
        io.signal,
      );
    } catch (error) {
      // A closed pipe is the reader's going, not a sandbox that could not be made: runBin's ending.
      if (error instanceof CliError || isPipeClosed(error)) throw error;
      inconclusive += 1;
      const message = `cannot make a sandbox: ${(error as Error).message.split('\n')[0]}`;
      log.error(`${STAGE}: ${shownName(name)}: ${terminalSafe(message)}`);
      await emitter.emit('run.failed', { run_id: event.run_id }, { failed_stage: STAGE, error: message });
      continue;
    }
    // Closing kills whatever setup left running and waits for the proxy's last egress events, so
    // they are all in the stream before the next stage sees anything after them.
    const { leftRunning, egressUnrecorded } = await provisioned.sandbox.close();
    const { ready } = provisioned;
    await emitUsage(emitter, event.run_id, ready);
    if (leftRunning.length > 0) {
      // A service started in setup does not live on into the agent's stage: say so where people look.
      log.warn(`${STAGE}: ${shownName(name)}: setup left ${leftRunning.length} process${leftRunning.length === 1 ? '' : 'es'} running, killed with this stage (nothing outlives its stage): ${leftRunning.map((p) => terminalSafe(p)).join(' · ')}`);
    }
    if (egressUnrecorded > 0) log.warn(`${STAGE}: ${shownName(name)}: ${unrecordedNote(egressUnrecorded)}`);
    if (provisioned.setupFailure !== undefined) {
      inconclusive += 1;
      log.warn(`${STAGE}: ${shownName(name)}: ${terminalSafe(provisioned.setupFailure)}`);
    } else if (!provisioned.interrupted) {
      log.info(`${STAGE}: ${shownName(name)}: ready (${ready.backend}${ready.enforced ? '' : ', NOT enforced'}) ${terminalSafe(ready.workspace)}`);
    }
    if (io.signal.aborted) break;
  }
  await writer.flush();
  if (io.signal.aborted) return QsExit.interrupted;
  if (badInput > 0) return QsExit.usage;
  // A run whose setup failed has no evidence; saying so here matters under `set -o pipefail`.
  return inconclusive > 0 ? QsExit.noEvidence : QsExit.passed;
}
