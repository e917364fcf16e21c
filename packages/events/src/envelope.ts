// The envelope every line of the wire carries, and the protocol major version it is stamped with.
import { Type, type Static } from '@sinclair/typebox';

/**
 * The wire's major version, stamped on every line as `v`. Additive changes (new event types, new
 * optional fields) keep it; anything a v1 reader would misread bumps it. Readers accept `v` up to
 * their own and refuse newer streams.
 */
export const PROTOCOL_VERSION = 1;

/** Dotted lifecycle names (`sandbox.ready`, `tool.call`, `run.completed`), or one word (`diagnostic`). */
export const EVENT_TYPE_PATTERN = '^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*$';

export const Envelope = Type.Object(
  {
    v: Type.Integer({ minimum: 1, description: 'Protocol major version of the line (PROTOCOL_VERSION).' }),
    type: Type.String({ pattern: EVENT_TYPE_PATTERN, description: 'Dotted lifecycle name of the event.' }),
    ts: Type.String({ format: 'date-time', description: 'When it was emitted, ISO-8601 UTC.' }),
    run_id: Type.String({ minLength: 1, description: 'One per task attempt or loop run.' }),
    stage: Type.String({ minLength: 1, description: 'The binary that emitted it, e.g. qs-validate.' }),
    id: Type.Optional(Type.String({ minLength: 1, description: 'Identifies the event where others pair with or nest under it.' })),
    parent_id: Type.Optional(Type.String({ minLength: 1, description: 'The id of the event this one completes or nests under.' })),
  },
  // Payload keys sit beside the envelope on the same object; unknown ones are tolerated so that
  // additive changes in a minor release never break an older reader.
  { additionalProperties: true, description: 'Fields every event carries.' },
);

export type Envelope = Static<typeof Envelope>;

/** Any event on the wire, known to this build or not. */
export type WireEvent = Envelope & Record<string, unknown>;
