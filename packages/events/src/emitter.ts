// Stamps the envelope on a payload and writes it: the only way a stage creates an event.
import type { EventType, Payload } from './catalog.js';
import { PROTOCOL_VERSION } from './envelope.js';
import type { EventWriter } from './writer.js';

export interface EmitMeta {
  run_id: string;
  id?: string;
  parent_id?: string;
}

export interface Emitter {
  /** Writes a known event; await it to respect backpressure. */
  emit<T extends EventType>(type: T, meta: EmitMeta, payload: Payload<T>): Promise<void> | undefined;
  /** Builds the event without writing it (for tests and for stages that fold before writing). */
  make<T extends EventType>(type: T, meta: EmitMeta, payload: Payload<T>): Record<string, unknown>;
}

export function createEmitter(options: { stage: string; writer: EventWriter; now: () => Date }): Emitter {
  const make = <T extends EventType>(type: T, meta: EmitMeta, payload: Payload<T>): Record<string, unknown> => {
    const event: Record<string, unknown> = {
      v: PROTOCOL_VERSION,
      type,
      ts: options.now().toISOString(),
      run_id: meta.run_id,
      stage: options.stage,
    };
    if (meta.id !== undefined) event.id = meta.id;
    if (meta.parent_id !== undefined) event.parent_id = meta.parent_id;
    return Object.assign(event, payload);
  };
  return {
    make,
    emit: (type, meta, payload) => options.writer.write(make(type, meta, payload)),
  };
}
