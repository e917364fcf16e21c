import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { steppingClock } from '@quickloop/cli-kit';
import { createEmitter, detachableEvents } from './emitter.js';
import { EventWriter } from './writer.js';
import { parseLine } from './reader.js';

describe('createEmitter', () => {
  it('stamps the envelope first, in a fixed key order, with the injected clock', async () => {
    const sink = new PassThrough();
    let text = '';
    sink.on('data', (c: Buffer) => (text += c.toString()));
    const writer = new EventWriter(sink);
    const emitter = createEmitter({ stage: 'qs-validate', writer, now: steppingClock('2026-05-01T10:00:00.000Z', 1000) });
    await emitter.emit('diagnostic', { run_id: 'r1', id: 'd1' }, { severity: 'warning', code: 'QS101', message: 'm', path: 't.yaml' });
    await emitter.emit('diagnostic', { run_id: 'r1', parent_id: 'd1' }, { severity: 'note', code: 'QS201', message: 'n', path: 't.yaml' });
    await writer.flush();
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe(
      '{"v":1,"type":"diagnostic","ts":"2026-05-01T10:00:00.000Z","run_id":"r1","stage":"qs-validate","id":"d1","severity":"warning","code":"QS101","message":"m","path":"t.yaml"}',
    );
    expect(JSON.parse(lines[1]!).ts).toBe('2026-05-01T10:00:01.000Z');
    // what we write, we can read back
    expect(lines.every((l, i) => parseLine(l, i + 1, 'out').known)).toBe(true);
  });
});

describe('detachableEvents', () => {
  it('stops writing quietly once the reader has gone, and keeps working', async () => {
    const { Writable } = await import('node:stream');
    let writes = 0;
    const sink = new Writable({
      write(_c, _e, cb) {
        writes += 1;
        cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const writer = new EventWriter(sink);
    const emitter = createEmitter({ stage: 'loop-run', writer, now: steppingClock() });
    const events = detachableEvents({ emitter, writer, runId: () => 'r1' });
    events.emit('diagnostic', { severity: 'note', code: 'QS200', message: 'm', path: 'p' });
    await events.flush();
    await new Promise((r) => setImmediate(r));
    expect(writer.closed).toBe(true);
    expect(() => events.emit('diagnostic', { severity: 'note', code: 'QS200', message: 'n', path: 'p' })).not.toThrow();
    await expect(events.forward('{"v":1}')).resolves.toBeUndefined();
    await expect(events.flush()).resolves.toBeUndefined();
    expect(writes).toBe(1);
  });
});
