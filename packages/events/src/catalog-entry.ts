// `@quickloop/events/catalog`: the event definitions as schemas (typebox) and the generators built on
// them. Heavy on purpose; stages import the light `@quickloop/events` instead.
export { Envelope } from './envelope-schema.js';
export { defineEvent } from './define.js';
export { EVENT_DEFS, eventDef } from './catalog.js';
export { eventsJsonSchema, validatorSchemas } from './json-schema.js';
export { renderValidators } from './gen-validators.js';
export { renderEventsSchema, EVENTS_SCHEMA_PATH, VALIDATORS_PATH, README_PATH } from './write-schema.js';
export { renderEventsReference, spliceReference } from './reference.js';
export * from './types/task.js';
export * from './types/sandbox.js';
export * from './types/agent.js';
export * from './types/run.js';
export * from './types/loop.js';
