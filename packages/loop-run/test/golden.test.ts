// The demo loop's whole event stream against a reviewed golden (clock and ids injected; paths and durations normalised).
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { memoryIo } from '@quickloop/cli-kit';
import { parseLine } from '@quickloop/events';
import { describe, expect, it } from 'vitest';
import { run } from '../src/run.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const GOLDEN = join(ROOT, 'fixtures', 'streams', 'loop-run', 'demo-haiku.ndjson');

describe('loop-run golden stream', () => {
  it('demo-haiku emits the reviewed stream', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loop-run-golden-'));
    try {
      cpSync(join(ROOT, 'fixtures', 'loops', 'demo-haiku'), dir, { recursive: true });
      const io = memoryIo({ stdin: '' });
      const code = await run({ spec: join(dir, 'loop.yaml'), retries: 0, retryDelayMs: 0, consent: [], level: 'quiet' }, io);
      expect(code).toBe(0);
      const lines = io.out().trim().split('\n');
      // Every line is a valid event of the catalog.
      lines.forEach((l, i) => parseLine(l, i + 1, 'loop-run'));
      const normalised = `${lines
        .map((l) => l.split(dir).join('<LOOP>').replace(/"duration_ms":\d+/g, '"duration_ms":0').replace(/"wall_clock_used_sec":[\d.]+/g, '"wall_clock_used_sec":0'))
        .join('\n')}\n`;
      if (process.env.QUICKLOOP_UPDATE_GOLDEN === '1') {
        mkdirSync(dirname(GOLDEN), { recursive: true });
        writeFileSync(GOLDEN, normalised);
      }
      expect(existsSync(GOLDEN), 'golden missing: run with QUICKLOOP_UPDATE_GOLDEN=1 and review it').toBe(true);
      expect(normalised).toBe(readFileSync(GOLDEN, 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
