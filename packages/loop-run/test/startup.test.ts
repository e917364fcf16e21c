// What a start of the built bin loads: a normal run starts from the build's code cache, and --help
// loads neither the child-process machinery nor yargs (start-up is most of a short run).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, makeLoop, type Loop } from './helpers.js';

const loops: Loop[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const l of loops.splice(0)) l.cleanup();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Runs the bin with a preload that records, at exit, every builtin Node loaded. */
function startRecorded(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string; builtins: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'loop-run-startup-'));
  dirs.push(dir);
  const hook = join(dir, 'record.cjs');
  const list = join(dir, 'builtins.txt');
  writeFileSync(hook, `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')));\n`);
  const r = spawnSync(process.execPath, ['--require', hook, BIN, ...args], { cwd, input: '', encoding: 'utf8', env: { ...process.env, QUICKLOOP_DEBUG: '1' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, builtins: readFileSync(list, 'utf8').split('\n') };
}

describe('loop-run start-up', () => {
  it('--help loads no child_process (nor the dgram it brings) and starts from the code cache', () => {
    const r = startRecorded(['--help'], tmpdir());
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('loop-run SPEC');
    expect(r.stderr).toBe('loop-run: code cache used\n');
    for (const heavy of ['NativeModule child_process', 'NativeModule dgram']) expect(r.builtins).not.toContain(heavy);
  });

  it('a normal run starts from the code cache its build made (warmed by a real run, not only --help)', () => {
    const loop = makeLoop({ tweak: (s) => (s.council[0].local = true) });
    loops.push(loop);
    const r = startRecorded([loop.specPath], loop.dir);
    expect(r.status).toBe(0);
    expect(r.stderr.split('\n')[0]).toBe('loop-run: code cache used');
    expect(loop.state().status).toBe('passed');
    // the run spawned its CLIs, so the builtins it needs were loaded on first use
    expect(r.builtins).toContain('NativeModule child_process');
  });
});
