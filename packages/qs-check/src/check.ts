// Runs a task's compiled check in the run's re-opened sandbox, after the agent, and reports it as events.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { InputError } from '@quickloop/cli-kit';
import { unrunnable, type Emitter } from '@quickloop/events';
import { checkLayout, emitLimitHits, emitUsage, limitsFrom, openSandbox, type EgressEvent, type LimitHit } from '@quickloop/sandbox';
import type { RunFacts, SandboxReady } from './facts.js';
import { pickPort } from './port.js';
import { sessionOutput, writeSessionLog } from './session.js';

export interface CheckResult {
  exitCode: number;
  passed: boolean;
  reason: string;
  /** The check's merged output, head+tail cut (as check.completed carries it). */
  output: string;
  interrupted: boolean;
  /** Filesystem accesses the sandbox refused the check (its sandbox.denied events). */
  denied: number;
  /** The sandbox limits the check ran into (its sandbox.limit_hit events). */
  limitHits: LimitHit[];
  /** Killed at max_command_seconds. */
  timedOut: boolean;
  /** Egress decisions of the check's session the record left out (sandbox close report). */
  egressUnrecorded: number;
  /** The check exited 2 because bash could not parse it: where and why, in one line. */
  syntaxError?: string;
}

/**
 * Exit 2 is also what grep or test give for their own errors, so it is a syntax error only when bash
 * itself, asked to parse the same script without running it, says so. The line is the one of the
 * compiled success block (task.loaded check.body), not of the helpers before it.
 */
export function checkSyntaxError(script: string, body: string): string | undefined {
  const r = spawnSync('bash', ['-c', 'script=$(cat); bash -n -c "$script" 2>&1 >/dev/null | head -n 1'], { input: script, encoding: 'utf8', timeout: 10_000 });
  const text = (r.stdout ?? '').trim();
  if (r.error || text === '') return undefined;
  const m = /^bash: -c: line (\d+): (.*)$/.exec(text);
  if (!m) return text.replace(/^bash: (-c: )?/, '');
  const before = script.endsWith(body) ? (script.slice(0, script.length - body.length).match(/\n/g) ?? []).length : 0;
  const line = Number(m[1]) - before;
  return line >= 1 ? `line ${line} of the success block: ${m[2]}` : (m[2] as string);
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
  // qs-validate refuses such a check (QS037); a hand-edited stream can still carry one.
  const why = unrunnable(loaded.check.script);
  if (why !== undefined) throw new InputError(`task.loaded check.script cannot be run by bash: ${why}`);
  // A kept workspace may be gone by the time a saved stream is re-checked: say so before writing into it.
  checkLayout({ root: ready.root, workspace: ready.workspace, home: ready.home, tmp: ready.tmp });
  // The enforced sandbox has a loopback of its own, where the task's port is always free; probing the
  // host's instead made two attempts of one task at once, each binding it for a moment, disagree.
  const port = ready.enforced ? loaded.check.port_base : await pickPort(loaded.check.port_base);
  const session = writeSessionLog(ready.root, sessionOutput(f.okOutputs));
  const id = ctx.newId();
  await ctx.emitter.emit('check.started', { run_id: f.runId, id }, { port, backend: ready.backend, workspace: ready.workspace });
  const sandbox = await openSandbox({
    workspace: { root: ready.root, workspace: ready.workspace, home: ready.home, tmp: ready.tmp },
    policy: ready.policy,
    backend: ready.backend === 'docker' ? 'auto' : ready.backend,
    allowUnenforced: !ready.enforced,
    env: ctx.env,
    onEgress: ctx.onEgress,
    limits: limitsFrom(ready.limits),
  });
  const started = performance.now();
  let result;
  let egressUnrecorded = 0;
  try {
    result = await sandbox.exec(loaded.check.script, {
      timeoutMs: budgets.max_command_seconds * 1000,
      maxOutputChars: budgets.max_output_chars,
      signal: ctx.signal,
      env: { QS_PORT: String(port), QS_SESSION_LOG: session },
    });
    for (const denial of result.denials) await ctx.emitter.emit('sandbox.denied', { run_id: f.runId, parent_id: id }, denial);
    await emitLimitHits(ctx.emitter, f.runId, id, result.limitHits);
  } finally {
    // close() kills whatever the check served, process group and all, and flushes its egress events.
    ({ egressUnrecorded } = await sandbox.close());
    rmSync(session, { force: true });
  }
  const passed = result.exitCode === 0 && !ctx.signal.aborted;
  const reason = passed ? '' : result.timedOut ? `check timed out after ${budgets.max_command_seconds}s (max_command_seconds), so it gave no verdict` : (result.lastLine ?? lastLine(result.output)) || `check exited ${result.exitCode} without a reason`;
  await ctx.emitter.emit(
    'check.completed',
    { run_id: f.runId, id: ctx.newId(), parent_id: id },
    { exit_code: result.exitCode, passed, timed_out: result.timedOut, duration_ms: Math.round(performance.now() - started), output: result.output, reason },
  );
  await emitUsage(ctx.emitter, f.runId, ready);
  const syntaxError = !passed && !result.timedOut && result.exitCode === 2 ? checkSyntaxError(loaded.check.script, loaded.check.body) : undefined;
  return { exitCode: result.exitCode, passed, reason, output: result.output, interrupted: ctx.signal.aborted, denied: result.denials.length, limitHits: result.limitHits, timedOut: result.timedOut, egressUnrecorded, ...(syntaxError !== undefined ? { syntaxError } : {}) };
}
