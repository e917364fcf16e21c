// makeDirs against the paths Node's recursive mkdir gets wrong or a user gets wrong.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDirs } from './dirs.js';

const temps: string[] = [];
afterEach(() => {
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true });
});
const temp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'qs-dirs-'));
  temps.push(d);
  return d;
};

describe('makeDirs', () => {
  it('makes every missing level, with the mode asked for, and is a no-op on a folder that exists', () => {
    const base = temp();
    makeDirs(join(base, 'a', 'b', 'c'), 0o700);
    expect(statSync(join(base, 'a', 'b', 'c')).isDirectory()).toBe(true);
    expect(statSync(join(base, 'a')).mode & 0o777).toBe(0o700 & ~process.umask());
    makeDirs(join(base, 'a', 'b', 'c'));
    makeDirs(`${base}/a/b/c/`);
  });

  it('fails at once with the error that stopped it: a file on the way, a folder /proc will not make', () => {
    const base = temp();
    writeFileSync(join(base, 'file'), '');
    expect(() => makeDirs(join(base, 'file', 'x'))).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
    expect(() => makeDirs(join(base, 'file'))).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
    // Node's own recursive mkdir spins forever here; in a child, so a regression cannot hang the suite.
    const lib = fileURLToPath(new URL('../dist/dirs.js', import.meta.url));
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', `import { makeDirs } from ${JSON.stringify(lib)}; try { makeDirs('/proc/quickloop-x/y'); } catch (e) { console.log(e.code); }`], { encoding: 'utf8', timeout: 10_000 });
    expect(r.signal).toBeNull();
    expect(r.stdout.trim()).toBe('ENOENT');
  });
});
