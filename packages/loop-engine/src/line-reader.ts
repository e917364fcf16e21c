// Answers read from stdin one line at a time, across many questions; end of input is null, never a hang.
import type { Readable } from 'node:stream';
import { InterruptedError } from '@quickloop/cli-kit/errors';

export class LineReader {
  readonly #lines: string[] = [];
  readonly #waiters: ((line: string | null) => void)[] = [];
  #buffer = '';
  #ended = false;
  #started = false;
  #input: Readable | (() => Readable);

  /**
   * `input` may be a function that returns the stream: it is called at the first question, so a run
   * that asks nothing never creates process.stdin (a few ms of every start).
   */
  constructor(input: Readable | (() => Readable)) {
    this.#input = input;
  }

  #stream(): Readable {
    if (typeof this.#input === 'function') this.#input = this.#input();
    return this.#input;
  }

  #start(): void {
    if (this.#started) return;
    this.#started = true;
    const input = this.#stream();
    input.setEncoding('utf8');
    input.on('data', (chunk: string) => {
      this.#buffer += chunk;
      let nl = this.#buffer.indexOf('\n');
      while (nl !== -1) {
        this.#push(this.#buffer.slice(0, nl).replace(/\r$/, ''));
        this.#buffer = this.#buffer.slice(nl + 1);
        nl = this.#buffer.indexOf('\n');
      }
    });
    const end = (): void => {
      if (this.#ended) return;
      if (this.#buffer !== '') this.#push(this.#buffer);
      this.#buffer = '';
      this.#ended = true;
      for (const w of this.#waiters.splice(0)) w(null);
    };
    input.on('end', end);
    input.on('close', end);
    input.on('error', end);
  }

  #push(line: string): void {
    const w = this.#waiters.shift();
    if (w) w(line);
    else this.#lines.push(line);
  }

  /** The next line, or null once stdin has ended. Stdin is only read once a question is asked. */
  next(): Promise<string | null> {
    this.#start();
    const line = this.#lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.#ended) return Promise.resolve(null);
    return new Promise((res) => this.#waiters.push(res));
  }

  /** Stops reading so the process can exit while stdin is still open. */
  close(): void {
    // A stream never asked for was never created, and holds nothing open.
    if (typeof this.#input === 'function') return;
    if (this.#started) this.#input.pause();
    (this.#input as Readable & { unref?: () => void }).unref?.();
  }
}

/**
 * One answer, or InterruptedError once `signal` aborts: a Ctrl-C at a question is an interruption,
 * even when the terminal also ends stdin (which would otherwise read as a refusal).
 */
export async function answerOrInterrupt(reader: LineReader, signal: AbortSignal): Promise<string | null> {
  const interrupted = (): InterruptedError => new InterruptedError('interrupted while waiting for an answer on stdin');
  if (signal.aborted) throw interrupted();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(interrupted());
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const answer = await Promise.race([reader.next(), aborted]);
    if (signal.aborted) throw interrupted();
    return answer;
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
