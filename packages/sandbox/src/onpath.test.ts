// The backend's tool probe looks programs up itself instead of asking a shell: it must answer as
// `command -v` does, for the folders and files a PATH really holds.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPath } from './backends/bwrap.js';

let dir: string;
const commandV = (name: string, path: string, cwd = dir): string | undefined => {
  const out = spawnSync('/bin/sh', ['-c', 'command -v "$1"', 'sh', name], { encoding: 'utf8', env: { PATH: path }, cwd });
  return out.status === 0 ? out.stdout.trim() : undefined;
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ql-onpath-'));
  for (const d of ['a', 'b', 'c']) mkdirSync(join(dir, d));
  writeFileSync(join(dir, 'a', 'tool'), '#!/bin/sh\n');
  // not executable: a shell passes over it and finds the next one
  writeFileSync(join(dir, 'b', 'tool'), '#!/bin/sh\n');
  chmodSync(join(dir, 'a', 'tool'), 0o644);
  writeFileSync(join(dir, 'c', 'tool'), '#!/bin/sh\n', { mode: 0o755 });
  // a folder with the program's name is not the program
  mkdirSync(join(dir, 'a', 'dirtool'));
  writeFileSync(join(dir, 'c', 'dirtool'), '#!/bin/sh\n', { mode: 0o755 });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('onPath', () => {
  it('finds the first executable file, skipping a non-executable one and a folder of that name', () => {
    const path = ['a', 'b', 'c'].map((d) => join(dir, d)).join(':');
    expect(onPath('tool', path)).toBe(join(dir, 'c', 'tool'));
    expect(onPath('dirtool', path)).toBe(join(dir, 'c', 'dirtool'));
    expect(commandV('tool', path)).toBe(join(dir, 'c', 'tool'));
    expect(commandV('dirtool', path)).toBe(join(dir, 'c', 'dirtool'));
  });

  it('answers nothing where a shell finds nothing', () => {
    const path = [join(dir, 'a'), join(dir, 'b'), '/nonexistent'].join(':');
    expect(onPath('tool', path)).toBeUndefined();
    expect(commandV('tool', path)).toBeUndefined();
    expect(onPath('no-such-program-anywhere', '/usr/bin:/bin')).toBeUndefined();
  });

  it('agrees with the shell on the tools the backend needs, on this PATH', () => {
    const path = process.env.PATH ?? '';
    for (const tool of ['bwrap', 'socat', 'nsenter', 'setpriv', 'unshare', 'ip', 'sh']) {
      expect(onPath(tool, path) !== undefined, tool).toBe(commandV(tool, path, '/') !== undefined);
    }
  });
});
