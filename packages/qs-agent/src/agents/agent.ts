// The agent interface: replay now, model agents later; each gets the task and a toolbelt and says why it stopped.
import type { Logger } from '@quickloop/cli-kit';
import type { NormalizedTask, StopReasonName } from '@quickloop/events';
import type { Static } from '@sinclair/typebox';
import type { Toolbelt } from '../toolbelt.js';

export interface AgentContext {
  runId: string;
  task: Static<typeof NormalizedTask>;
  /** The only way an agent touches the world; every call is recorded as events. */
  tools: Toolbelt;
  /** Aborted on SIGINT/SIGTERM: stop and return `interrupted`. */
  signal: AbortSignal;
  log: Logger;
  /** Milliseconds since the agent phase began (max_seconds is measured against it). */
  elapsedMs: () => number;
}

export interface AgentOutcome {
  stopReason: StopReasonName;
  /** One line, e.g. `replay step 2 exited 1: npm install`. */
  detail: string;
  /** The model served, for model agents. */
  model?: string;
}

export interface Agent {
  /** The value of --agent that selects it, also `agent` in agent.started/agent.completed. */
  readonly name: string;
  run(context: AgentContext): Promise<AgentOutcome>;
}
