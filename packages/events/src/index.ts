export { PROTOCOL_VERSION, EVENT_TYPE_PATTERN, Envelope, type WireEvent } from './envelope.js';
export { defineEvent, type EventDef, type PayloadOf } from './define.js';
export { EVENT_DEFS, eventDef, isTerminal, type EventType, type Payload, type KnownEvent } from './catalog.js';
export { eventsJsonSchema, validatorFor, describeErrors } from './schema.js';
export { readEvents, parseLine, DEFAULT_MAX_LINE_BYTES, type ReadOptions, type StreamLine } from './reader.js';
export { EventWriter } from './writer.js';
export { createEmitter, type Emitter, type EmitMeta } from './emitter.js';
export { renderEventsSchema } from './write-schema.js';
export * from './types/task.js';
