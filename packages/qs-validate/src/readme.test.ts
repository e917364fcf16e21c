// The man page's code table is the code's: every diagnostic code, with its severity, and nothing else.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CODES } from '@quickloop/task';
import { describe, expect, it } from 'vitest';

const README = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');

describe('README', () => {
  it('lists every diagnostic code with its severity and summary', () => {
    const rows = [...README.matchAll(/^\| (QS\d{3}) \| (\w+) \| (.+) \|$/gm)].map((m) => [m[1], m[2], m[3]]);
    expect(rows).toEqual(Object.entries(CODES).map(([code, info]) => [code, info.severity, info.summary]));
  });

  it('has runnable examples (docs-check runs every `sh example` block)', () => {
    expect(README.match(/^\$ qs-validate /gm)?.length ?? 0).toBeGreaterThanOrEqual(3);
    expect(README).toContain('```sh example\n$ qs-validate ');
  });
});
