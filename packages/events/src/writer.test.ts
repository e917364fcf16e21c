import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { PipeClosedError } from '@quickloop/cli-kit';
import { EventWriter } from './writer.js';

/** A sink that accepts one chunk at a time and only drains when told to: it exercises backpressure. */
function slowSink(): { sink: Writable; chunks: string[]; release: () => void } {
  const chunks: string[] = [];
  let waiting: (() => void) | undefined;
  const sink = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      waiting = cb;
    },
  });
  return {
    sink,
    chunks,
    release: () => {
      const cb = waiting;
      waiting = undefined;
      cb?.();
    },
  };
}

describe('EventWriter', () => {
  it('writes one line per event and forwards raw lines unchanged', async () => {
    let text = '';
    const sink = new Writable({
      write(chunk: Buffer, _e, cb) {
        text += chunk.toString();
        cb();
      },
    });
    const w = new EventWriter(sink);
    await w.write({ a: 1 });
    await w.forward('{"b":   2}');
    await w.flush();
    expect(text).toBe('{"a":1}\n{"b":   2}\n');
  });

  it('waits for drain once the sink is full, losing and reordering nothing', async () => {
    const { sink, chunks, release } = slowSink();
    const w = new EventWriter(sink);
    const big = 'x'.repeat(70 * 1024);
    const first = w.write({ big, n: 1 });
    expect(first).toBeInstanceOf(Promise);
    let settled = false;
    void first?.then(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    release();
    await first;
    expect(settled).toBe(true);
    await w.write({ n: 2 });
    await w.flush();
    release();
    const lines = chunks.join('').trimEnd().split('\n').map((l) => JSON.parse(l).n);
    expect(lines).toEqual([1, 2]);
  });

  it('throws PipeClosedError once the reader has gone away', async () => {
    const sink = new Writable({
      write(_c, _e, cb) {
        const error = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
        cb(error);
      },
    });
    const w = new EventWriter(sink);
    await w.write({ n: 1 });
    await w.flush().catch(() => undefined);
    await new Promise((r) => setImmediate(r));
    expect(w.closed).toBe(true);
    expect(() => w.write({ n: 2 })).toThrow(PipeClosedError);
  });
});
