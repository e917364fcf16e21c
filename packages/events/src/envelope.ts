// The envelope every line of the wire carries, and the protocol major version it is stamped with.
import type { Static } from '@sinclair/typebox';
import type { Envelope as EnvelopeSchema } from './envelope-schema.js';

/**
 * The wire's major version, stamped on every line as `v`. Additive changes (new event types, new
 * optional fields) keep it; anything a v1 reader would misread bumps it. Readers accept `v` up to
 * their own and refuse newer streams.
 */
export const PROTOCOL_VERSION = 1;

/** Dotted lifecycle names (`sandbox.ready`, `tool.call`, `run.completed`), or one word (`diagnostic`). */
export const EVENT_TYPE_PATTERN = '^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*$';

/** ISO-8601 UTC with an optional fraction; a pattern rather than ajv's date-time format keeps the
 * precompiled validators free of ajv-formats. */
export const TS_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z$';

export type Envelope = Static<typeof EnvelopeSchema>;

/** Any event on the wire, known to this build or not. */
export type WireEvent = Envelope & Record<string, unknown>;
