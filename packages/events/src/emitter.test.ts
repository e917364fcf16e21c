import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { steppingClock } from '@quickloop/cli-kit';
import { createEmitter } from './emitter.js';
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
