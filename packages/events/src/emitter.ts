// Stamps the envelope on a payload and writes it: the only way a stage creates an event.
import type { EventType, Payload } from './catalog.js';
import { PROTOCOL_VERSION } from './envelope.js';
import { isPipeClosed } from '@quickloop/cli-kit/errors';
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

export interface DetachableEvents {
  /** Writes an event without waiting on backpressure; a no-op once the reader has gone. */
  emit<T extends EventType>(type: T, payload: Payload<T>, meta?: { id?: string; parent_id?: string }): void;
  /** Passes an upstream line on unchanged (awaiting backpressure); a no-op once the reader has gone. */
  forward(raw: string): Promise<void>;
  /** Writes what is buffered; a reader that has gone is not an error. */
  flush(): Promise<void>;
}

/**
 * For stages whose outcome outlives their event stream (a loop, a gate): when the reader downstream
 * goes away (`| head`) the events stop quietly but the work goes on, so the exit code and the state
 * files stay the record (exit 0 must keep meaning "passed").
 */
export function detachableEvents(options: { emitter: Emitter; writer: EventWriter; runId: () => string }): DetachableEvents {
  let readerGone = false;
  const gone = (error: unknown): void => {
    if (!isPipeClosed(error)) throw error;
    readerGone = true;
  };
  return {
    emit(type, payload, meta) {
      if (readerGone) return;
      try {
        options.emitter.emit(type, { run_id: options.runId(), ...(meta ?? {}) }, payload)?.catch(() => undefined);
      } catch (error) {
        gone(error);
      }
    },
    async forward(raw) {
      if (readerGone) return;
      try {
        await options.writer.forward(raw);
      } catch (error) {
        gone(error);
      }
    },
    async flush() {
      try {
        await options.writer.flush();
      } catch (error) {
        gone(error);
      }
    },
  };
}
