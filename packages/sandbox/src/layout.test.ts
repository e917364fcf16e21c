import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InputError } from '@quickloop/cli-kit';
import { checkLayout, createLayout, MARKER, removeLayout } from './layout.js';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
const base = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'qs-layout-test-'));
  made.push(d);
  return d;
};

describe('workspace layout', () => {
  it('makes an empty workspace with home and tmp as siblings, never inside it', () => {
    const l = createLayout(base());
    expect(dirname(l.workspace)).toBe(l.root);
    expect(dirname(l.home)).toBe(l.root);
    expect(dirname(l.tmp)).toBe(l.root);
    expect(readdirSync(l.workspace)).toEqual([]);
    expect(existsSync(join(l.root, MARKER))).toBe(true);
    expect(checkLayout(l)).toEqual(l);
  });

  it('refuses to re-open or remove a folder it did not make', () => {
    const dir = base();
    const fake = { root: dir, workspace: join(dir, 'workspace'), home: join(dir, 'home'), tmp: join(dir, 'tmp') };
    expect(() => checkLayout(fake)).toThrow(InputError);
    expect(() => removeLayout({ root: dir })).toThrow(/not a quickloop sandbox/);
    expect(existsSync(dir)).toBe(true);
  });

  it('refuses a description whose folders are not the root\'s own', () => {
    const l = createLayout(base());
    expect(() => checkLayout({ ...l, home: '/etc' })).toThrow(/home \/etc is not/);
  });

  it('removes a sandbox it made, once', () => {
    const l = createLayout(base());
    writeFileSync(join(l.workspace, 'f'), 'x');
    expect(removeLayout(l)).toBe(true);
    expect(existsSync(l.root)).toBe(false);
    expect(removeLayout(l)).toBe(false);
  });
});
