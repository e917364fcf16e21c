// How an event type is declared: its name, a doc comment, the payload schema and whether it ends a stream.
import type { Static, TObject } from '@sinclair/typebox';

export interface EventDef<T extends string = string, P extends TObject = TObject> {
  /** The dotted event name. */
  readonly type: T;
  /** What the event means and when it is emitted; copied into the JSON Schema and the README. */
  readonly doc: string;
  /** The stage(s) that emit it. */
  readonly emittedBy: readonly string[];
  /** The payload's fields, beside the envelope on the same object. */
  readonly payload: P;
  /** True when the event ends its run's stream (run.completed, run.failed, loop.completed …). */
  readonly terminal?: boolean;
}

export function defineEvent<const T extends string, P extends TObject>(def: EventDef<T, P>): EventDef<T, P> {
  return def;
}

export type PayloadOf<D> = D extends EventDef<string, infer P> ? Static<P> : never;
