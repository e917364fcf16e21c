// The agent interface: replay now, model agents later; each gets the task and a toolbelt and says why it stopped.
import type { Logger } from '@quickloop/cli-kit';
import type { Emitter, NormalizedTask, Payload, StopReasonName } from '@quickloop/events';
import type { Forward, Sandbox } from '@quickloop/sandbox';
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
  /** For an agent's own events (agent.turn, agent.retry, tool.error); tool calls go through `tools`. */
  emitter: Emitter;
  newId: () => string;
  /** What the sandbox's setup ran, in order (the model is told). */
  setup: readonly string[];
  /** The sandbox itself, for agents that run a program in it (a model CLI) rather than tool calls. */
  sandbox: Sandbox;
  /** What `prepare` returned, when the agent has one. */
  prepared?: Prepared;
}

/** What an agent needs in place before its sandbox opens (a model CLI's forwarder), and how to undo it. */
export interface Prepared {
  forwards: Forward[];
  /** The docs hosts are reachable through the egress proxy (an agent that reads docs with its own tools). */
  docsReachable: boolean;
  /** Added to agent.started (the vendor endpoint the forwarder sends to). */
  started?: { base_url?: string };
  /** Stops what prepare started; called once the sandbox is closed, whatever happened. */
  release(): Promise<void>;
}

export interface AgentOutcome {
  stopReason: StopReasonName;
  /** One line, e.g. `replay step 2 exited 1: npm install`. */
  detail: string;
  /** Model agents: what agent.completed reports beyond the stop (model served, turns, usage, cost, final text, error kind). */
  report?: Pick<Payload<'agent.completed'>, 'model' | 'turns' | 'usage' | 'usd' | 'final_text' | 'error_kind'>;
  /**
   * A failure of the agent's configuration (a rejected key, an unknown model): agent.completed is
   * emitted, then the stage ends with this one-line usage error (exit 3).
   */
  usageError?: string;
  /** Agents that count their own bash calls (a model CLI's). */
  commands?: number;
}

export interface Agent {
  /** The value of --agent that selects it, also `agent` in agent.started/agent.completed. */
  readonly name: string;
  run(context: AgentContext): Promise<AgentOutcome>;
  /** What agent.started says about it (model agents: the model asked for and the endpoint). */
  readonly started?: Pick<Payload<'agent.started'>, 'model' | 'base_url' | 'from'>;
  /**
   * Checks what the agent needs from the host (a CLI on PATH, a key) before any sandbox is made:
   * throws a UsageError naming what is missing.
   */
  preflight?(env: Record<string, string | undefined>, backend: string): void;
  /** Starts what must exist before the run's sandbox opens (a forwarder); the sandbox is opened with its forwards. */
  prepare?(task: AgentContext['task'], env: Record<string, string | undefined>): Promise<Prepared>;
}
