// Every event type this build knows: the one source of truth for types, schema, validators and docs.
// Loads typebox: imported by generators, tests and types only, never on a stage's start-up path.
import type { Static } from '@sinclair/typebox';
import type { EventDef } from './define.js';
import type { Envelope } from './envelope.js';
import { Diagnostic, TaskLoaded } from './types/task.js';
import { SweepPlan, SweepStopped } from './types/sweep.js';
import { AgentCompleted, AgentRetry, AgentStarted, AgentTurn, ReplayDiverged, ToolCall, ToolError, ToolResult } from './types/agent.js';
import { DocsAffordances, DocsChanged, DocsError, DocsRead } from './types/docs.js';
import { CheckCompleted, CheckStarted, RunCompleted, RunFailed, RunInterrupted } from './types/run.js';
import { EgressAllowed, EgressBlocked, EgressError, SandboxDenied, SandboxLimitHit, SandboxReady, SandboxUsage, SetupCompleted, SetupFailed, SetupStarted } from './types/sandbox.js';
import { ArtifactWritten, ConsentAnswered, ConsentAsked, GateCheck, GateRevision, GateStarted, GateVerdict, IterationStarted, LoopCompleted, LoopContext, LoopFailed, LoopStarted, ModelCall, ModelResult, NoProgressDetected, RedactionApplied, RedactionBlindSpot, ReviewCompleted } from './types/loop.js';

/** Add a new event type here (and an example in fixtures/events/) — nowhere else. */
export const EVENT_DEFS = [TaskLoaded, Diagnostic, SandboxReady, SetupStarted, SetupCompleted, SetupFailed, EgressAllowed, EgressBlocked, EgressError, SandboxDenied, SandboxLimitHit, SandboxUsage, AgentStarted, AgentTurn, AgentRetry, AgentCompleted, ToolCall, ToolResult, ToolError, ReplayDiverged, DocsRead, DocsError, DocsChanged, DocsAffordances, CheckStarted, CheckCompleted, RunCompleted, RunFailed, RunInterrupted, SweepPlan, SweepStopped, LoopStarted, LoopContext, IterationStarted, ConsentAsked, ConsentAnswered, RedactionApplied, RedactionBlindSpot, ModelCall, ModelResult, ArtifactWritten, GateStarted, GateCheck, ReviewCompleted, GateVerdict, GateRevision, NoProgressDetected, LoopCompleted, LoopFailed] as const;

type Defs = (typeof EVENT_DEFS)[number];

export type EventType = Defs['type'];

/** The payload of a known event type. */
export type Payload<T extends EventType> = Static<Extract<Defs, { type: T }>['payload']>;

/** A known event on the wire: envelope plus payload. */
export type KnownEvent<T extends EventType = EventType> = T extends EventType ? Envelope & { type: T } & Payload<T> : never;

const byType = new Map<string, EventDef>(EVENT_DEFS.map((d) => [d.type, d]));

export function eventDef(type: string): EventDef | undefined {
  return byType.get(type);
}
