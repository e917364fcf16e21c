// The README examples of loop-run and loop-gate, run as written in a copy of the bundled demo loop.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DEMO = join(ROOT, 'fixtures', 'loops', 'demo-haiku');

/** The ```sh blocks under "## Examples". */
function examples(readme: string): string[] {
  const section = readme.slice(readme.indexOf('## Examples'));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

describe.each(['loop-run', 'loop-gate'])('%s README examples', (pkg) => {
  const blocks = examples(readFileSync(join(ROOT, 'packages', pkg, 'README.md'), 'utf8'));
  it('has two or three examples', () => expect(blocks.length).toBeGreaterThanOrEqual(2));
  it.each(blocks.map((b, i) => [i + 1, b] as const))('example %i runs and succeeds', (_n, block) => {
    const dir = mkdtempSync(join(tmpdir(), `${pkg}-readme-`));
    try {
      cpSync(DEMO, dir, { recursive: true });
      const r = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', block], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, PATH: `${join(ROOT, 'node_modules', '.bin')}${delimiter}${process.env.PATH}`, NO_COLOR: '1' },
      });
      expect(r.status, `${block}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0);
      expect(r.stdout.trim()).not.toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
