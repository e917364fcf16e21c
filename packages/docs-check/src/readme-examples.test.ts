// Every `sh example` and `js example` block of every README runs here: an example that stops working,
// or stops printing what the README shows, fails the suite. `sh` runs from a scratch folder that sees
// the repo's fixtures, with the built binaries on PATH; `js` runs as a module inside its package, so
// its imports resolve as they would for a user of that package.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { extractExamples, extractJsExamples, matchesOutput, outputLines, type Example, type JsExample } from './examples.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function readmes(): string[] {
  const files = ['README.md'];
  for (const pkg of readdirSync(join(ROOT, 'packages')).sort()) {
    if (existsSync(join(ROOT, 'packages', pkg, 'README.md'))) files.push(`packages/${pkg}/README.md`);
  }
  return files;
}

const texts = readmes().map((f) => [f, readFileSync(join(ROOT, f), 'utf8')] as const);
const examples: Example[] = texts.flatMap(([f, text]) => extractExamples(f, text));
const jsExamples: JsExample[] = texts.flatMap(([f, text]) => extractJsExamples(f, text));
const scratch = mkdtempSync(join(tmpdir(), 'ql-readme-'));
for (const entry of ['fixtures', 'schemas']) symlinkSync(join(ROOT, entry), join(scratch, entry));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('extractExamples', () => {
  it('finds commands in sh example blocks only, with their expected exit codes and output', () => {
    const text = ['```sh', '$ not-run', 'x', '```', '```sh example', '$ a | b', 'output line', '', '$ c   # exit 3', '```', 'after'].join('\n');
    expect(extractExamples('R.md', text)).toEqual([
      { file: 'R.md', line: 6, command: 'a | b', exitCode: 0, stdout: ['output line'] },
      { file: 'R.md', line: 9, command: 'c', exitCode: 3, stdout: [] },
    ]);
  });
  it('finds js example blocks', () => {
    expect(extractJsExamples('R.md', ['```js', 'no()', '```', '```js example', 'a()', 'b()', '```'].join('\n'))).toEqual([{ file: 'R.md', line: 4, code: 'a()\nb()' }]);
  });
  it('the READMEs have examples to run', () => {
    expect(examples.length).toBeGreaterThan(0);
    expect(jsExamples.length).toBeGreaterThan(0);
  });
});

describe('matchesOutput', () => {
  it.each([
    [['a', 'b'], ['a', 'b'], true],
    [['a', 'b'], ['a', 'b', 'c'], false],
    [['a'], [], false],
    [[], ['a'], false],
    [['a', '…'], ['a', 'b', 'c'], true],
    [['a', '…', 'c'], ['a', 'c'], true],
    [['a', '…', 'c'], ['a', 'b', 'd'], false],
    [['run …  ok'], ['run 01ab  ok'], true],
    [['run …  ok'], ['run 01ab  ok!'], false],
    [['a.b'], ['axb'], false],
    [['(x)*'], ['(x)*'], true],
  ])('%j against %j: %s', (expected, actual, result) => {
    expect(matchesOutput(expected, actual)).toBe(result);
  });
});

/**
 * A temp folder of the example's own: what it leaves there is its, never another test's. A sandbox
 * (`quickloop-*`) left behind fails the example: a reader who types it would be left one too.
 */
function privateTmp(): string {
  return mkdtempSync(join(scratch, 'tmp-'));
}

function leftSandboxes(tmp: string): string[] {
  return readdirSync(tmp).filter((n) => n.startsWith('quickloop-'));
}

describe.each(examples.map((e) => [`${e.file}:${e.line}: ${e.command}`, e] as const))('%s', (_name, example) => {
  it(`exits ${example.exitCode}, prints what the README shows and leaves no sandbox behind`, () => {
    const tmp = privateTmp();
    const result = spawnSync('bash', ['-o', 'pipefail', '-c', example.command], {
      cwd: scratch,
      encoding: 'utf8',
      timeout: 110_000,
      env: { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}`, NO_COLOR: '1', TMPDIR: tmp },
    });
    expect(result.status, `stderr: ${result.stderr}`).toBe(example.exitCode);
    const actual = outputLines(result.stdout);
    expect(matchesOutput(example.stdout, actual), `stdout:\n${result.stdout}\nexpected:\n${example.stdout.join('\n')}`).toBe(true);
    expect(leftSandboxes(tmp), 'sandbox folders the example left (a pipeline with no last stage to remove them?)').toEqual([]);
  });
});

describe.each(jsExamples.map((e) => [`${e.file}:${e.line}`, e] as const))('%s (js)', (_name, example) => {
  it('runs and its assertions hold', () => {
    const packageDir = join(ROOT, dirname(example.file));
    const dir = mkdtempSync(join(packageDir, '.readme-example-'));
    try {
      const file = join(dir, `line-${example.line}.mjs`);
      writeFileSync(file, example.code);
      const tmp = privateTmp();
      const r = spawnSync(process.execPath, [file], { cwd: dir, encoding: 'utf8', timeout: 60_000, env: { ...process.env, NO_COLOR: '1', TMPDIR: tmp } });
      expect(r.status, r.stderr).toBe(0);
      expect(leftSandboxes(tmp), 'sandbox folders the example left').toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
