import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { InputError } from '@quickloop/cli-kit';
import { readEvents, type StreamLine } from './reader.js';

const ev = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  v: 1,
  type: 'custom.thing',
  ts: '2026-01-01T00:00:00.000Z',
  run_id: 'r1',
  stage: 'test',
  ...extra,
});

async function readAll(text: string | string[], options = {}): Promise<StreamLine[]> {
  const chunks = (Array.isArray(text) ? text : [text]).map((t) => Buffer.from(t));
  const out: StreamLine[] = [];
  for await (const line of readEvents(Readable.from(chunks), options)) out.push(line);
  return out;
}

async function failure(text: string, options = {}): Promise<string> {
  try {
    await readAll(text, options);
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return (error as Error).message;
  }
  throw new Error('expected the reader to fail');
}

describe('readEvents', () => {
  it('yields events with their line numbers and raw text, skipping (but counting) blank lines', async () => {
    const a = JSON.stringify(ev({ n: 1 }));
    const b = JSON.stringify(ev({ n: 2 }));
    const lines = await readAll(`${a}\n\n   \n${b}\n`);
    expect(lines.map((l) => [l.line, l.raw, l.event.n])).toEqual([
      [1, a, 1],
      [4, b, 2],
    ]);
  });

  it('accepts CRLF, a last line without newline, and lines split across chunks', async () => {
    const a = JSON.stringify(ev({ n: 1 }));
    const b = JSON.stringify(ev({ n: 2, s: 'é✓' }));
    const bytes = Buffer.from(`${a}\r\n${b}`);
    // split in the middle of a multi-byte character
    const cut = bytes.indexOf(Buffer.from('✓')) + 1;
    const lines: StreamLine[] = [];
    for await (const l of readEvents(Readable.from([bytes.subarray(0, cut), bytes.subarray(cut)]))) lines.push(l);
    expect(lines.map((l) => l.raw)).toEqual([a, b]);
    expect(lines[1]?.event.s).toBe('é✓');
  });

  it('passes unknown event types through as unknown', async () => {
    const [line] = await readAll(JSON.stringify(ev({ anything: [1, 2] })));
    expect(line?.known).toBe(false);
  });

  it('reports a line that is not JSON as stdin:N with the parser message', async () => {
    const msg = await failure(`${JSON.stringify(ev())}\n{nope\n`);
    expect(msg).toMatch(/^stdin:2: not JSON \(.+\): \{nope$/);
  });

  it('names the source given', async () => {
    expect(await failure('[1]\n', { source: 'run.ndjson' })).toBe('run.ndjson:1: an event must be a JSON object: [1]');
  });

  it('refuses a line without the envelope, naming the missing field', async () => {
    const { run_id: _, ...rest } = ev();
    expect(await failure(`${JSON.stringify(rest)}\n`)).toBe("stdin:1: not a quickloop event: missing field 'run_id'");
  });

  it('refuses a newer protocol version clearly, before checking anything else', async () => {
    expect(await failure(`${JSON.stringify({ v: 2, type: 'x.y', brand: 'new' })}\n`)).toBe(
      'stdin:1: event protocol v2 is newer than this reader understands (v1); upgrade quickloop',
    );
  });

  it('accepts older versions up to its own', async () => {
    const lines = await readAll(JSON.stringify(ev({ v: 1 })), { version: 2 });
    expect(lines).toHaveLength(1);
  });

  it('validates known event types against their schema', async () => {
    const bad = ev({ type: 'diagnostic', severity: 'fatal', code: 'QS001', message: 'm', path: 'p' });
    expect(await failure(`${JSON.stringify(bad)}\n`)).toMatch(/^stdin:1: bad diagnostic event: severity: /);
  });

  it('stops at a line longer than the limit', async () => {
    const long = JSON.stringify(ev({ pad: 'x'.repeat(500) }));
    expect(await failure(`${JSON.stringify(ev())}\n${long}\n`, { maxLineBytes: 200 })).toBe('stdin:2: line longer than 200 bytes');
  });

  it('counts the limit in bytes, not characters', async () => {
    const line = JSON.stringify(ev({ pad: 'é'.repeat(60) }));
    expect(line.length).toBeLessThan(200);
    expect(Buffer.byteLength(line)).toBeGreaterThan(200);
    expect(await failure(`${line}\n`, { maxLineBytes: 200 })).toBe('stdin:1: line longer than 200 bytes');
    expect(await readAll(`${line}\n`, { maxLineBytes: 300 })).toHaveLength(1);
  });

  it('rejects a malformed timestamp', async () => {
    expect(await failure(`${JSON.stringify(ev({ ts: 'yesterday' }))}\n`)).toMatch(/^stdin:1: not a quickloop event: ts: must match pattern /);
  });
});
