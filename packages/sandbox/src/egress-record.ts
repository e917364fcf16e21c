// The record of a session's egress decisions, bounded: a command decides how many connections it
// makes, and each decision used to be an event of whatever size its request was, in every stage's
// stream and in the harness's memory (a refused request a millisecond, 16 KiB each, for as long as
// the agent and the check ran: gigabytes of trace).
import type { EgressEvent } from './types.js';

/** Decisions a session records in full; past them, only the first of each kind (below). */
export const MAX_RECORDED = 5000;
/** Kinds (type, method, host, port, reason) first seen past MAX_RECORDED that still get one event each. */
export const MAX_LATE_KINDS = 1000;
/** The longest text an egress event carries in each field, in characters; a longer one is cut, `…` at its end. */
export const MAX_FIELD: Readonly<Record<string, number>> = { host: 255, path: 1024, message: 512, error: 512, rule: 255 };

/** The line a stage logs when its session left decisions out of the record. */
export function unrecordedNote(count: number): string {
  return `${count} egress decision${count === 1 ? '' : 's'} not recorded: past the first ${MAX_RECORDED}, the record keeps one event per kind (type, method, host, port, reason)`;
}

const cut = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

export interface EgressRecord {
  /** Records one decision (or counts it as left out). */
  report(event: EgressEvent): void;
  /** Decisions left out so far. */
  unrecorded(): number;
}

/** Wraps a session's listener: every decision reaches it, cut to size, until the budget is spent. */
export function egressRecord(listener: ((event: EgressEvent) => void) | undefined): EgressRecord {
  let recorded = 0;
  let left = 0;
  const late = new Set<string>();
  return {
    report(event) {
      const fitted = { ...event } as Record<string, unknown>;
      for (const [field, max] of Object.entries(MAX_FIELD)) if (typeof fitted[field] === 'string') fitted[field] = cut(fitted[field] as string, max);
      const e = fitted as unknown as EgressEvent;
      if (recorded >= MAX_RECORDED) {
        const kind = JSON.stringify([e.type, e.method, e.host, e.port, 'reason' in e ? e.reason : '']);
        if (late.has(kind) || late.size >= MAX_LATE_KINDS) {
          left += 1;
          return;
        }
        late.add(kind);
      }
      recorded += 1;
      listener?.(e);
    },
    unrecorded: () => left,
  };
}
