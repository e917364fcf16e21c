// A command's stdout and stderr as whole lines, while they arrive and before any truncation: what the
// scanners that read a command's own words (denials.ts, limit-hits.ts) are fed.
import { StringDecoder } from 'node:string_decoder';

/** A line longer than this is read as its first MAX_LINE characters: an error line is short, a flood is not. */
export const MAX_LINE = 4096;

export type Stream = 'stdout' | 'stderr';

export class OutputLines {
  readonly #onLine: (stream: Stream, line: string) => void;
  readonly #streams = {
    stdout: { decoder: new StringDecoder('utf8'), partial: '' },
    stderr: { decoder: new StringDecoder('utf8'), partial: '' },
  };

  /** `onLine` gets each line trimmed, without its `\r`, never empty. */
  constructor(onLine: (stream: Stream, line: string) => void) {
    this.#onLine = onLine;
  }

  push(stream: Stream, chunk: Buffer): void {
    const s = this.#streams[stream];
    const lines = (s.partial + s.decoder.write(chunk)).split('\n');
    s.partial = (lines.pop() ?? '').slice(0, MAX_LINE);
    for (const line of lines) this.#line(stream, line);
  }

  /** Gives the last line of each stream, one without a newline. */
  end(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      const s = this.#streams[stream];
      const rest = s.partial + s.decoder.end();
      s.partial = '';
      if (rest !== '') this.#line(stream, rest);
    }
  }

  #line(stream: Stream, raw: string): void {
    const line = raw.slice(0, MAX_LINE).replace(/\r$/, '').trim();
    if (line !== '') this.#onLine(stream, line);
  }
}
