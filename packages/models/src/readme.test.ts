// The README's examples, run for real against the fake CLIs and the mock server.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { jsExamples, runJsExample } from '@quickloop/testkit';
import { describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const examples = jsExamples(readFileSync(new URL('../README.md', import.meta.url), 'utf8'));

describe('README examples', () => {
  it('has examples', () => {
    expect(examples.length).toBeGreaterThanOrEqual(3);
  });
  for (const example of examples) {
    it(`README.md:${example.line} runs and its assertions hold`, () => {
      const r = runJsExample(example, packageDir);
      expect(r.status, r.stderr).toBe(0);
    });
  }
});
