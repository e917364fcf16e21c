// Recorded streams (fixtures/streams/qs-check/<case>/in.ndjson) replayed through qs-check: out.ndjson and exit_code are the goldens.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { memoryIo } from '@quickloop/cli-kit';
import { createLayout, removeLayout } from '@quickloop/sandbox';
import { run } from './run.js';

const DIR = fileURLToPath(new URL('../../../fixtures/streams/qs-check', import.meta.url));
const UPDATE = process.env.QUICKLOOP_UPDATE_GOLDEN === '1';
const cases = readdirSync(DIR).filter((d) => existsSync(join(DIR, d, 'in.ndjson')));

/** What varies between machines and runs: the sandbox path and how long things took. */
const normalise = (text: string, root: string): string => text.split(root).join('@ROOT@').replace(/"duration_ms":\d+/g, '"duration_ms":0');

describe('golden streams through qs-check', () => {
  it('has every recorded case', () => {
    expect(cases.sort()).toEqual(['agent-refusal', 'docs-gap', 'incomplete', 'passed', 'skipped']);
  });

  it.each(cases)('%s', async (name) => {
    // The recorded workspace is gone; a fresh (empty) one stands in at the same place in the stream.
    const layout = createLayout();
    try {
      const input = readFileSync(join(DIR, name, 'in.ndjson'), 'utf8').split('@ROOT@').join(layout.root);
      const io = memoryIo({ stdin: input, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1' } });
      const code = await run({ keep: false, level: 'quiet' }, io);
      const out = normalise(io.out(), layout.root);
      if (UPDATE) {
        writeFileSync(join(DIR, name, 'out.ndjson'), out);
        writeFileSync(join(DIR, name, 'exit_code'), `${code}\n`);
      }
      expect(out).toBe(readFileSync(join(DIR, name, 'out.ndjson'), 'utf8'));
      expect(code).toBe(Number(readFileSync(join(DIR, name, 'exit_code'), 'utf8')));
    } finally {
      if (existsSync(layout.root)) removeLayout(layout);
    }
  });
});
