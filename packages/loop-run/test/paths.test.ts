// Confinement as Looper's runner decides it (Path.resolve, then "is it under the loop directory").
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isInside } from '../src/paths.js';

const made: string[] = [];
const temp = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'loop-run-paths-'));
  made.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('isInside', () => {
  it('keeps a name that merely starts with two dots inside (`..ws` is not `..`)', () => {
    const base = temp();
    expect(isInside(base, join(base, '..ws'))).toBe(true);
    expect(isInside(base, join(base, '..notes.md'))).toBe(true);
    expect(isInside(base, join(base, 'a', '...'))).toBe(true);
    expect(isInside(base, join(base, '..', 'x'))).toBe(false);
  });

  it('follows a dangling symlink to where it points, as realpath does', () => {
    const base = temp();
    const away = temp();
    symlinkSync(join(away, 'not-yet'), join(base, 'up'));
    expect(isInside(base, join(base, 'up', 'ws'))).toBe(false);
    symlinkSync('sub/later', join(base, 'near'));
    mkdirSync(join(base, 'sub'));
    expect(isInside(base, join(base, 'near', 'ws'))).toBe(true);
  });

  it('takes a symlink cycle for an escape (nothing can be written through it), without looping', () => {
    const base = temp();
    symlinkSync(join(base, 'b'), join(base, 'a'));
    symlinkSync(join(base, 'a'), join(base, 'b'));
    expect(isInside(base, join(base, 'a', 'ws'))).toBe(false);
  });
});
