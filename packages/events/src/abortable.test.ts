import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { untilAborted, signalName } from './abortable.js';
import { readEvents } from './reader.js';

const line = (n: number): string => `${JSON.stringify({ v: 1, type: 'x.y', ts: '2026-01-01T00:00:00.000Z', run_id: 'r', stage: 's', n })}\n`;

describe('untilAborted', () => {
  it('yields every line of a stream that ends', async () => {
    const input = new PassThrough();
    input.end(line(1) + line(2));
    const seen: number[] = [];
    for await (const l of untilAborted(readEvents(input), new AbortController().signal)) seen.push(l.event.n as number);
    expect(seen).toEqual([1, 2]);
  });

  it('stops while parked on a read that never comes when the signal aborts', async () => {
    const input = new PassThrough();
    input.write(line(1));
    const controller = new AbortController();
    const seen: number[] = [];
    for await (const l of untilAborted(readEvents(input), controller.signal)) {
      seen.push(l.event.n as number);
      setImmediate(() => controller.abort(new Error('interrupted by SIGINT')));
    }
    expect(seen).toEqual([1]);
    expect(signalName(controller.signal)).toBe('SIGINT');
    input.destroy();
  });
});
