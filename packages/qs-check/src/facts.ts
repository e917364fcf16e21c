// Folds one run's events into what the check and the classification need.
import type { Payload, StopReasonName, WireEvent } from '@quickloop/events';

export type TaskLoaded = Payload<'task.loaded'>;
export type SandboxReady = Payload<'sandbox.ready'>;

export interface RunFacts {
  runId: string;
  loaded?: TaskLoaded;
  ready?: SandboxReady;
  setupFailure?: string;
  agent?: { stopReason: StopReasonName; detail: string };
  /** Output of successful bash calls, in order: the session output for expect_output. */
  okOutputs: string[];
  pagesRead: string[];
  egressErrors: number;
  egressBlocked: number;
  egressNotAllowlisted: number;
  docsBypass: number;
  /** An upstream stage already ended this run (run.failed / run.interrupted / run.completed). */
  upstreamTerminal?: string;
  check?: { exitCode: number; passed: boolean; reason: string };
  /** The first error diagnostic of the run: its task did not validate, so nothing was meant to run. */
  invalid?: string;
  finished: boolean;
}

export function newFacts(runId: string): RunFacts {
  return { runId, okOutputs: [], pagesRead: [], egressErrors: 0, egressBlocked: 0, egressNotAllowlisted: 0, docsBypass: 0, finished: false };
}

/** Adds one event to its run's facts; events of types it does not know are ignored. */
export function observe(f: RunFacts, event: WireEvent): void {
  const e = event as Record<string, unknown>;
  switch (event.type) {
    case 'task.loaded':
      f.loaded = event as unknown as TaskLoaded;
      break;
    case 'sandbox.ready':
      f.ready = event as unknown as SandboxReady;
      break;
    case 'setup.failed':
      f.setupFailure = String(e.detail);
      break;
    case 'agent.completed':
      f.agent = { stopReason: e.stop_reason as StopReasonName, detail: String(e.detail) };
      break;
    case 'tool.result':
      if (e.tool === 'bash' && e.exit_code === 0) f.okOutputs.push(String(e.output));
      break;
    case 'diagnostic':
      if (e.severity === 'error' && f.invalid === undefined) f.invalid = `${String(e.path ?? '')}${e.line !== undefined ? `:${String(e.line)}` : ''}: ${String(e.message)}`;
      break;
    case 'docs.read':
      f.pagesRead.push(String(e.url));
      break;
    case 'egress.error':
      f.egressErrors += 1;
      break;
    case 'egress.blocked':
      f.egressBlocked += 1;
      if (e.reason === 'docs_host') f.docsBypass += 1;
      // A raw IP is a host on no list too, and a tool that went around the proxy (bypassed_proxy)
      // was stopped by the policy, not by the docs: for rule 8 each is a policy block.
      if (e.reason === 'not_allowlisted' || e.reason === 'ip_literal' || e.reason === 'bypassed_proxy') f.egressNotAllowlisted += 1;
      break;
    case 'run.completed':
    case 'run.failed':
    case 'run.interrupted':
      f.upstreamTerminal = event.type;
      break;
  }
}
