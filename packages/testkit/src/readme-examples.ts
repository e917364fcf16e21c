// Runs the ```js example blocks of a library README, so a README that stops working fails its package's tests.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface JsExample {
  /** The 1-based line of the opening fence. */
  line: number;
  code: string;
}

export function jsExamples(markdown: string): JsExample[] {
  const examples: JsExample[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```js example') continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i]!.trim() !== '```'; i++) body.push(lines[i]!);
    examples.push({ line: start + 1, code: body.join('\n') });
  }
  return examples;
}

/**
 * Runs one example as an ES module from a scratch folder inside `packageDir`, so its imports resolve as
 * they would for a user of the package (its dependencies, and the package itself by name).
 */
export function runJsExample(example: JsExample, packageDir: string, timeoutMs = 60_000) {
  const dir = mkdtempSync(join(packageDir, '.readme-example-'));
  try {
    const file = join(dir, `line-${example.line}.mjs`);
    writeFileSync(file, example.code);
    return spawnSync(process.execPath, [file], { cwd: dir, encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, NO_COLOR: '1' } });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
