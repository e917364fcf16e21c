// Every `sh example` block of every README runs here, from a scratch folder that sees the repo's
// fixtures, with the built binaries on PATH: an example that stops working fails the suite.
import { mkdtempSync, readFileSync, readdirSync, existsSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { extractExamples, type Example } from './examples.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function readmes(): string[] {
  const files = ['README.md'];
  for (const pkg of readdirSync(join(ROOT, 'packages')).sort()) {
    if (existsSync(join(ROOT, 'packages', pkg, 'README.md'))) files.push(`packages/${pkg}/README.md`);
  }
  return files;
}

const examples: Example[] = readmes().flatMap((f) => extractExamples(f, readFileSync(join(ROOT, f), 'utf8')));
const scratch = mkdtempSync(join(tmpdir(), 'ql-readme-'));
for (const entry of ['fixtures', 'schemas']) symlinkSync(join(ROOT, entry), join(scratch, entry));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('extractExamples', () => {
  it('finds commands in sh example blocks only, with their expected exit codes', () => {
    const text = ['```sh', '$ not-run', '```', '```sh example', '$ a | b', 'output line', '$ c   # exit 3', '```'].join('\n');
    expect(extractExamples('R.md', text)).toEqual([
      { file: 'R.md', line: 5, command: 'a | b', exitCode: 0 },
      { file: 'R.md', line: 7, command: 'c', exitCode: 3 },
    ]);
  });
  it('the READMEs have examples to run', () => {
    expect(examples.length).toBeGreaterThan(0);
  });
});

describe.each(examples.map((e) => [`${e.file}:${e.line}: ${e.command}`, e] as const))('%s', (_name, example) => {
  it(`exits ${example.exitCode}`, () => {
    const result = spawnSync('bash', ['-o', 'pipefail', '-c', example.command], {
      cwd: scratch,
      encoding: 'utf8',
      timeout: 110_000,
      env: { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}`, NO_COLOR: '1' },
    });
    expect(result.status, `stderr: ${result.stderr}`).toBe(example.exitCode);
  });
});
