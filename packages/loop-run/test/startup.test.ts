// What a start of the built bin loads: a normal run starts from the build's code cache, and --help
// loads neither the child-process machinery nor yargs (start-up is most of a short run).
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { startRecorded as start } from '@quickloop/testkit';
import { BIN, makeLoop, type Loop } from './helpers.js';

const loops: Loop[] = [];
afterEach(() => {
  for (const l of loops.splice(0)) l.cleanup();
});

const startRecorded = (args: string[], cwd: string) => start(BIN, args, cwd);

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
