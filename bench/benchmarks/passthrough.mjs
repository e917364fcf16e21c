// Events per second through a pass-through stage (the shared reader + writer) against `cat`, on the
// same 1,000,000-line stream of 300-byte events.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, runShell } from '../helpers.mjs';

const LINES = 1_000_000;

export default {
  name: 'pass-through stage, 1,000,000 events of 300 bytes',
  iterations: 3,
  target: { min_rate: 150_000, unit: 'events' },
  setup() {
    const dir = mkdtempSync(join(tmpdir(), 'ql-bench-'));
    // a real, schema-valid event (the fixture of its type), so validation is part of the cost
    const event = JSON.parse(readFileSync(`${ROOT}fixtures/events/tool.result.json`, 'utf8'));
    event.output = '';
    event.output = 'x'.repeat(Math.max(0, 300 - 1 - JSON.stringify(event).length));
    const line = `${JSON.stringify(event)}\n`;
    const file = join(dir, 'stream.ndjson');
    writeFileSync(file, line.repeat(LINES));
    return { dir, file };
  },
  baseline: { name: 'cat', run: ({ file }) => runShell(`cat ${file} | cat > /dev/null`) },
  candidate: {
    name: 'pass-through stage (packages/events/test-fixtures/forward.mjs)',
    run: async ({ file }) => {
      await runShell(`node ${ROOT}packages/events/test-fixtures/forward.mjs < ${file} > /dev/null`);
      return { units: LINES };
    },
  },
  teardown: ({ dir }) => rmSync(dir, { recursive: true, force: true }),
};
