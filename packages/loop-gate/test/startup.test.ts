// What a start of the built bin loads: a gate round starts from the build's code cache, and --help
// loads no child-process machinery (start-up is most of a short run).
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { startRecorded as start } from '@quickloop/testkit';
import { BIN, gateLoop } from './loop.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const startRecorded = (args: string[], cwd: string) => start(BIN, args, cwd);

describe('loop-gate start-up', () => {
  it('--help loads no child_process (nor the dgram it brings) and starts from the code cache', () => {
    const r = startRecorded(['--help'], tmpdir());
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('loop-gate SPEC GATE');
    expect(r.stderr).toBe('loop-gate: code cache used\n');
    for (const heavy of ['NativeModule child_process', 'NativeModule dgram']) expect(r.builtins).not.toContain(heavy);
  });

  it('a gate round starts from the code cache its build made (warmed by a real round, not only --help)', () => {
    const loop = gateLoop(['--verdicts', 'pass'], (s) => (s.council[0].local = true));
    dirs.push(loop.dir);
    const r = startRecorded(['loop.resolved.json', 'delivery', 'loop-workspace/delivery-2.md'], loop.dir);
    expect(r.stderr.split('\n')[0]).toBe('loop-gate: code cache used');
    expect(r.status).toBe(0);
    expect(r.builtins).toContain('NativeModule child_process');
  });
});
