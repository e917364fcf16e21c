// Merged command output kept head and tail within a cap, so a long install log never fills memory or events.
import { StringDecoder } from 'node:string_decoder';

export const DEFAULT_MAX_OUTPUT_CHARS = 20_000;

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
  #tail = '';
  #total = 0;

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
    let rest = text;
    if (this.#head.length < this.#headMax) {
      const room = this.#headMax - this.#head.length;
      this.#head += rest.slice(0, room);
      rest = rest.slice(room);
    }
    if (rest === '') return;
    this.#tail += rest;
    // Trim only once the tail is well over its size, so many small chunks stay cheap.
    if (this.#tail.length > this.#tailMax * 2 + 4096) this.#tail = this.#tail.slice(this.#tail.length - this.#tailMax);
  }

  /** The kept output, with the marker when something was dropped. */
  result(): { output: string; originalChars: number; truncated: boolean } {
    this.#add(this.#decoder.end());
    const kept = this.#head.length + Math.min(this.#tail.length, this.#tailMax);
    if (kept >= this.#total) return { output: this.#head + this.#tail, originalChars: this.#total, truncated: false };
    const tail = this.#tailMax === 0 ? '' : this.#tail.slice(-this.#tailMax);
    return { output: this.#head + omissionMarker(this.#total - this.#head.length - tail.length) + tail, originalChars: this.#total, truncated: true };
  }
}
