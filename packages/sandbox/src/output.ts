// Merged command output kept head and tail within a cap, so a long install log never fills memory or events.
import { StringDecoder } from 'node:string_decoder';

export const DEFAULT_MAX_OUTPUT_CHARS = 20_000;

/** How much of one line lastLine() keeps: a reason is one line, not a log. */
const LINE_MAX = 4096;

/** The marker between the head and the tail of truncated output. */
export function omissionMarker(omitted: number): string {
  return `\n[... ${omitted} characters omitted ...]\n`;
}

/**
 * Collects output as it arrives. The head is the first half of the cap and the tail the last half:
 * errors usually show at the end of a log, and what was run at its start.
 */
export class OutputCap {
  readonly #headMax: number;
  readonly #tailMax: number;
  readonly #decoder = new StringDecoder('utf8');
  #head = '';
  /** Set once the head is as full as it gets: a character that did not fit whole goes to the tail, and so does all after it. */
  #headDone = false;
  #tail = '';
  #total = 0;
  /** The line being printed (its first LINE_MAX units), and the last non-empty one that ended. */
  #line = '';
  #lastLine = '';

  constructor(maxChars = DEFAULT_MAX_OUTPUT_CHARS) {
    const max = Math.max(0, Math.floor(maxChars));
    this.#headMax = Math.ceil(max / 2);
    this.#tailMax = max - this.#headMax;
  }

  push(chunk: Buffer | string): void {
    this.#add(typeof chunk === 'string' ? chunk : this.#decoder.write(chunk));
  }

  #add(text: string): void {
    if (text === '') return;
    this.#total += text.length;
    this.#lines(text);
    let rest = text;
    if (!this.#headDone) {
      let room = this.#headMax - this.#head.length;
      // The cut falls between characters: half of a pair is not text, and a model API refuses a request with one.
      if (room > 0 && room < rest.length && isHigh(rest.charCodeAt(room - 1))) room -= 1;
      this.#head += rest.slice(0, room);
      rest = rest.slice(room);
      if (rest !== '') this.#headDone = true;
    }
    if (rest === '') return;
    this.#tail += rest;
    // Trim only once the tail is well over its size, so many small chunks stay cheap.
    if (this.#tail.length > this.#tailMax * 2 + 4096) this.#tail = lastChars(this.#tail, this.#tailMax);
  }

  #lines(text: string): void {
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      const end = nl === -1 ? text.length : nl;
      const room = LINE_MAX - this.#line.length;
      if (room > 0) this.#line += text.slice(start, start + Math.min(room, end - start));
      if (nl === -1) return;
      const line = this.#line.trim();
      if (line !== '') this.#lastLine = line;
      this.#line = '';
      start = nl + 1;
    }
  }

  /**
   * The last non-empty line of everything pushed, trimmed, whatever the cut kept of it: a failed
   * check prints its reason last, and a small max_output_chars would keep only the end of it.
   */
  lastLine(): string {
    this.#add(this.#decoder.end());
    let line = this.#line.trim() || this.#lastLine;
    if (line.length > 0 && isHigh(line.charCodeAt(line.length - 1))) line = line.slice(0, -1);
    return line;
  }

  /** The kept output, with the marker when something was dropped. */
  result(): { output: string; originalChars: number; truncated: boolean } {
    this.#add(this.#decoder.end());
    const kept = this.#head.length + Math.min(this.#tail.length, this.#tailMax);
    if (kept >= this.#total) return { output: this.#head + this.#tail, originalChars: this.#total, truncated: false };
    const tail = lastChars(this.#tail, this.#tailMax);
    return { output: this.#head + omissionMarker(this.#total - this.#head.length - tail.length) + tail, originalChars: this.#total, truncated: true };
  }
}

const isHigh = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/** At most the last `max` UTF-16 units of `text`, starting on a whole character. */
function lastChars(text: string, max: number): string {
  if (max <= 0) return '';
  if (text.length <= max) return text;
  const start = text.length - max;
  return text.slice(isLow(text.charCodeAt(start)) && isHigh(text.charCodeAt(start - 1)) ? start + 1 : start);
}
