// What a start of the built bin loads: a normal run starts from the build's code cache, and --help
// loads neither the child-process machinery nor yargs (start-up is most of a short run).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  describe('NODE_EXTRA_CA_CERTS (Node 20 parses its file at every start; loop-run opens no TLS itself)', () => {
    // The host records what it was given; a file that does not exist makes Node say so when it loads it.
    const runWith = (argv: string[], env: Record<string, string>) => {
      const loop = makeLoop({ tweak: (s) => (s.host.invoke = ['sh', '-c', 'printf "%s|%s" "${NODE_EXTRA_CA_CERTS-unset}" "${QUICKLOOP_NODE_EXTRA_CA_CERTS-unset}" > ca-seen; cat > /dev/null; echo "# Plan"']) });
      loops.push(loop);
      loop.write();
      const r = spawnSync(argv[0]!, [...argv.slice(1), loop.specPath], { cwd: loop.dir, input: '', encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } });
      return { stderr: r.stderr, seen: readFileSync(join(loop.dir, 'ca-seen'), 'utf8') };
    };
    const missing = join(tmpdir(), 'no-such-ca-bundle.pem');

    it('run as a program, Node starts without it, and the CLIs loop-run starts get it back unchanged', () => {
      const r = runWith([BIN], { NODE_EXTRA_CA_CERTS: missing });
      // Node's own warning is a line of its own; the CLIs and checks loop-run starts get the variable
      // back, and a check's words (quoted in a verdict line) may carry theirs.
      expect(r.stderr).not.toMatch(/^Warning: Ignoring extra certs/m);
      expect(r.seen).toBe(`${missing}|unset`);
    });

    it('started as `node bin/loop-run.js`, Node loads it as usual (so the test above can fail)', () => {
      const r = runWith([process.execPath, BIN], { NODE_EXTRA_CA_CERTS: missing });
      expect(r.stderr).toMatch(/^Warning: Ignoring extra certs/m);
      expect(r.stderr).toContain(`Ignoring extra certs from \`${missing}\``);
      expect(r.seen).toBe(`${missing}|unset`);
    });

    it('unset stays unset, and an empty value stays empty', () => {
      expect(runWith([BIN], {}).seen).toBe('unset|unset');
      expect(runWith([BIN], { NODE_EXTRA_CA_CERTS: '' }).seen).toBe('|unset');
    });

    it('the name it is kept under, set from outside, never becomes NODE_EXTRA_CA_CERTS', () => {
      expect(runWith([BIN], { QUICKLOOP_NODE_EXTRA_CA_CERTS: '/not/mine.pem' }).seen).toBe('unset|unset');
      expect(runWith([process.execPath, BIN], { NODE_EXTRA_CA_CERTS: missing, QUICKLOOP_NODE_EXTRA_CA_CERTS: '/not/mine.pem' }).seen).toBe(`${missing}|unset`);
    });
  });
});
