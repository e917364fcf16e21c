// The light entry every stage imports: reader, writer, emitter, validators and the event types.
// Nothing here loads typebox or ajv; the catalog, schema and docs generators live in ./catalog-entry.
export { PROTOCOL_VERSION, EVENT_TYPE_PATTERN, TS_PATTERN, type Envelope, type WireEvent } from './envelope.js';
export type { EventDef, PayloadOf } from './define.js';
export type { EventType, Payload, KnownEvent } from './catalog.js';
export { validatorFor, describeErrors, isKnownType, isTerminal, type Validator } from './validate.js';
export { readEvents, parseLine, DEFAULT_MAX_LINE_BYTES, type ReadOptions, type StreamLine } from './reader.js';
export { EventWriter } from './writer.js';
export { untilAborted, signalName } from './abortable.js';
export { unrunnable, MAX_COMMAND_BYTES } from './command-text.js';
export { createEmitter, detachableEvents, type Emitter, type EmitMeta, type DetachableEvents } from './emitter.js';
export type * from './types/task.js';
export type * from './types/sandbox.js';
export type * from './types/agent.js';
export type * from './types/docs.js';
export type * from './types/run.js';
export type * from './types/sweep.js';
export type * from './types/loop.js';
