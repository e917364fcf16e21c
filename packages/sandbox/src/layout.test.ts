import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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

  it("never takes another user's folder for one of its sandboxes, nor one that others can write to", () => {
    const dir = base();
    // A whole layout, marker and all, as anyone could make one in a shared /tmp.
    const planted = { root: join(dir, 'planted'), workspace: join(dir, 'planted', 'workspace'), home: join(dir, 'planted', 'home'), tmp: join(dir, 'planted', 'tmp') };
    for (const d of [planted.workspace, planted.home, planted.tmp]) mkdirSync(d, { recursive: true });
    writeFileSync(join(planted.root, MARKER), 'x');
    chmodSync(planted.root, 0o777);
    expect(() => checkLayout(planted)).toThrow(/is not a quickloop sandbox of this user's \(others can write to it\)/);
    chmodSync(planted.root, 0o700);
    expect(checkLayout(planted)).toEqual(planted);
    if (process.getuid?.() === 0) {
      // As root, the harness can hand the folder to another user, as that user would own it.
      chownSync(join(planted.root, MARKER), 4242, 4242);
      expect(() => checkLayout(planted)).toThrow(/\(another user owns it\)/);
    }
  });

  it("a stray marker above its sandboxes, left by another user, does not make them unopenable; one this user left does", () => {
    const dir = base();
    const l = createLayout(dir);
    writeFileSync(join(dir, MARKER), 'x');
    expect(() => checkLayout(l)).toThrow(/is inside the quickloop sandbox/);
    if (process.getuid?.() === 0) {
      chownSync(join(dir, MARKER), 4242, 4242);
      expect(checkLayout(l)).toEqual(l);
    }
  });

  it('removes a sandbox it made, once', () => {
    const l = createLayout(base());
    writeFileSync(join(l.workspace, 'f'), 'x');
    expect(removeLayout(l)).toBe(true);
    expect(existsSync(l.root)).toBe(false);
    expect(removeLayout(l)).toBe(false);
  });
});
