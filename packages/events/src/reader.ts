// The one NDJSON reader: numbered lines, strict JSON, envelope and known-type validation, version check.
import type { Readable } from 'node:stream';
import split2 from 'split2';
import { InputError } from '@quickloop/cli-kit/errors';
import { PROTOCOL_VERSION, type WireEvent } from './envelope.js';
import { describeErrors, isKnownType, validatorFor } from './validate.js';

/** Lines longer than this stop the stage: a task.loaded event carries at most a 10 MB task file. */
export const DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024;

export interface ReadOptions {
  /** Named in errors: `stdin:17: …`. */
  source?: string;
  maxLineBytes?: number;
  /** Validate known event types against their schema (the envelope is always checked). */
  validateKnown?: boolean;
  /** The highest protocol major this reader understands. */
  version?: number;
}

export interface StreamLine {
  /** 1-based line number in the input. */
  line: number;
  /** The line as received, without its line ending: forward this to pass the event on unchanged. */
  raw: string;
  event: WireEvent;
  /** True when the type is in this build's catalog. */
  known: boolean;
}

const clip = (s: string, n = 120): string => (s.length > n ? `${s.slice(0, n)}…` : s);

/**
 * Reads an NDJSON event stream. CRLF is accepted, blank lines are skipped (but counted), and any
 * line that is not a valid event throws an InputError `SOURCE:LINE: message` — nothing is dropped.
 *
 * split2 is the splitter ndjson.parse is built on; it is used directly because ndjson.parse skips
 * blank lines without counting them, keeps no raw text and reports errors without a line number.
 */
export async function* readEvents(input: Readable, options: ReadOptions = {}): AsyncGenerator<StreamLine> {
  const source = options.source ?? 'stdin';
  const max = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const version = options.version ?? PROTOCOL_VERSION;
  const validateKnown = options.validateKnown ?? true;
  const lines = input.pipe(split2(/\r?\n/, { maxLength: max }));
  input.on('error', (error) => lines.destroy(error));
  let n = 0;
  try {
    for await (const raw of lines as AsyncIterable<string>) {
      n += 1;
      // split2's own limit only bounds an unfinished line; a complete long line is caught here. A
      // UTF-8 character is at most 4 bytes, so only a line past a quarter of the limit is measured.
      if (raw.length > max || (raw.length * 4 > max && Buffer.byteLength(raw) > max)) throw new InputError(`${source}:${n}: line longer than ${max} bytes`);
      if (raw.trim() === '') continue;
      yield parseLine(raw, n, source, version, validateKnown);
    }
  } catch (error) {
    if (error instanceof InputError) throw error;
    if (error instanceof Error && /maximum buffer reached/.test(error.message)) {
      throw new InputError(`${source}:${n + 1}: line longer than ${max} bytes`);
    }
    throw error;
  }
}

/** Parses and checks one line; exported for stages that read other framings and for tests. */
export function parseLine(raw: string, n: number, source: string, version = PROTOCOL_VERSION, validateKnown = true): StreamLine {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new InputError(`${source}:${n}: not JSON (${(error as Error).message}): ${clip(raw)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InputError(`${source}:${n}: an event must be a JSON object: ${clip(raw)}`);
  }
  const event = value as WireEvent;
  // The version comes first: a newer stream may legitimately break today's envelope.
  if (typeof event.v === 'number' && Number.isInteger(event.v) && event.v > version) {
    throw new InputError(
      `${source}:${n}: event protocol v${event.v} is newer than this reader understands (v${version}); upgrade quickloop`,
    );
  }
  const envelope = validatorFor(null);
  if (!envelope(value)) throw new InputError(`${source}:${n}: not a quickloop event: ${describeErrors(envelope.errors)}`);
  const known = isKnownType(event.type);
  if (known && validateKnown) {
    const check = validatorFor(event.type);
    if (!check(value)) throw new InputError(`${source}:${n}: bad ${event.type} event: ${describeErrors(check.errors)}`);
  }
  return { line: n, raw, event, known };
}
