// The one NDJSON writer: a line per event, batched into large writes, backpressure respected.
import type { Writable } from 'node:stream';
import { PipeClosedError, isPipeClosed } from '@quickloop/cli-kit/errors';

const HIGH_WATER = 64 * 1024;

export class EventWriter {
  readonly #out: Writable;
  #buffer: string[] = [];
  #size = 0;
  #scheduled = false;
  #closed = false;
  #failure: Error | undefined;
  #pending: Promise<void> | undefined;

  constructor(out: Writable) {
    this.#out = out;
    out.on('error', (error: Error) => {
      if (isPipeClosed(error)) this.#closed = true;
      else this.#failure = error;
    });
    out.on('close', () => {
      this.#closed = true;
    });
  }

  /** True once the reader downstream has gone away: producers should stop and exit 0. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Serialises one event. Await the result: it settles when a full buffer has drained. */
  write(event: object): Promise<void> | undefined {
    return this.line(JSON.stringify(event));
  }

  /** Writes a line received from upstream exactly as it came (minus its line ending). */
  forward(raw: string): Promise<void> | undefined {
    return this.line(raw);
  }

  line(text: string): Promise<void> | undefined {
    this.#check();
    this.#buffer.push(text, '\n');
    this.#size += text.length + 1;
    if (this.#size >= HIGH_WATER) return this.flush();
    // Small bursts go out together, but never later than the next turn of the event loop, so a
    // downstream stage sees each event while the run is still going.
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        this.flush().catch(() => undefined);
      });
    }
    return undefined;
  }

  /** Writes what is buffered and waits for the stream to drain if it asked to. */
  async flush(): Promise<void> {
    if (this.#pending) await this.#pending;
    if (this.#buffer.length === 0) return;
    this.#check();
    const chunk = this.#buffer.join('');
    this.#buffer = [];
    this.#size = 0;
    if (!this.#out.write(chunk)) {
      this.#pending = new Promise<void>((resolve) => {
        const done = (): void => {
          this.#out.off('drain', done);
          this.#out.off('close', done);
          this.#out.off('error', done);
          resolve();
        };
        this.#out.on('drain', done);
        this.#out.on('close', done);
        this.#out.on('error', done);
      });
      await this.#pending;
      this.#pending = undefined;
      this.#check();
    }
  }

  #check(): void {
    if (this.#closed) throw new PipeClosedError();
    if (this.#failure) throw this.#failure;
  }
}
