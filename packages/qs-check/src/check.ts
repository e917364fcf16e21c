// Runs a task's compiled check in the run's re-opened sandbox, after the agent, and reports it as events.
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Emitter } from '@quickloop/events';
import { checkLayout, openSandbox, type EgressEvent } from '@quickloop/sandbox';
import type { RunFacts, SandboxReady } from './facts.js';
import { pickPort } from './port.js';
import { sessionOutput, writeSessionLog } from './session.js';

export interface CheckResult {
  exitCode: number;
  passed: boolean;
  reason: string;
  interrupted: boolean;
}

/** The last non-empty line: a failing check's one-line reason (the helpers print it last). */
export function lastLine(output: string): string {
  const lines = output.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  return lines.at(-1) ?? '';
}

export async function runCheck(
  f: RunFacts,
  ctx: { emitter: Emitter; newId: () => string; signal: AbortSignal; env: Record<string, string | undefined>; onEgress: (e: EgressEvent) => void },
): Promise<CheckResult> {
  const ready = f.ready as SandboxReady;
  const loaded = f.loaded as NonNullable<RunFacts['loaded']>;
  const { budgets } = loaded.task;
  // A kept workspace may be gone by the time a saved stream is re-checked: say so before writing into it.
  checkLayout({ root: ready.root, workspace: ready.workspace, home: ready.home, tmp: ready.tmp });
  const port = await pickPort(loaded.check.port_base);
  const session = writeSessionLog(ready.tmp, sessionOutput(f.okOutputs));
  const id = ctx.newId();
  await ctx.emitter.emit('check.started', { run_id: f.runId, id }, { port, backend: ready.backend, workspace: ready.workspace });
  const sandbox = await openSandbox({
    workspace: { root: ready.root, workspace: ready.workspace, home: ready.home, tmp: ready.tmp },
    policy: ready.policy,
    backend: ready.backend === 'docker' ? 'auto' : ready.backend,
    allowUnenforced: !ready.enforced,
    env: ctx.env,
    onEgress: ctx.onEgress,
  });
  const started = performance.now();
  let result;
  try {
    result = await sandbox.exec(loaded.check.script, {
      timeoutMs: budgets.max_command_seconds * 1000,
      maxOutputChars: budgets.max_output_chars,
      signal: ctx.signal,
      env: { QS_PORT: String(port), QS_SESSION_LOG: session },
    });
    for (const denial of result.denials) await ctx.emitter.emit('sandbox.denied', { run_id: f.runId, parent_id: id }, denial);
  } finally {
    // close() kills whatever the check served, process group and all, and flushes its egress events.
    await sandbox.close();
    rmSync(session, { force: true });
  }
  const passed = result.exitCode === 0 && !ctx.signal.aborted;
  const reason = passed ? '' : result.timedOut ? `check timed out after ${budgets.max_command_seconds}s` : lastLine(result.output) || `check exited ${result.exitCode} without a reason`;
  await ctx.emitter.emit(
    'check.completed',
    { run_id: f.runId, id: ctx.newId(), parent_id: id },
    { exit_code: result.exitCode, passed, timed_out: result.timedOut, duration_ms: Math.round(performance.now() - started), output: result.output, reason },
  );
  return { exitCode: result.exitCode, passed, reason, interrupted: ctx.signal.aborted };
}
