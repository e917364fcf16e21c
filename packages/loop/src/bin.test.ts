// The real bin, spawned: exit codes and stderr as a shell or a Makefile sees them (docs-check runs the README's examples).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PKG = resolve(import.meta.dirname, '..');
const ROOT = resolve(PKG, '../..');
const BIN = join(PKG, 'bin/loop.js');
let tmp: string;

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'loop-bin-'));
  // `loop` on PATH, and the repo's fixtures reachable by the relative paths the README uses.
  mkdirSync(join(tmp, 'bin'));
  writeFileSync(join(tmp, 'bin/loop'), `#!/bin/sh\nexec node ${BIN} "$@"\n`, { mode: 0o755 });
  symlinkSync(join(ROOT, 'fixtures'), join(tmp, 'fixtures'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function sh(script: string) {
  const r = spawnSync('bash', ['-c', script], {
    cwd: tmp,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${join(tmp, 'bin')}:${process.env.PATH ?? ''}`, NO_COLOR: '1' },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('the loop binary', () => {
  it('exits 2 on an invalid spec with one stderr line and no stack trace', () => {
    const r = sh('loop compile fixtures/loops/invalid/empty-invoke.yaml --print');
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^loop: error: host\.invoke must not be empty \(fixtures\/loops\/invalid\/empty-invoke\.yaml:\d+\)\n$/);
  });

  it('starts from the code cache its build made; --version reads the package.json beside the bundle', () => {
    const r = sh('QUICKLOOP_DEBUG=1 loop compile fixtures/loops/valid/typical/loop.yaml --print --quiet && QUICKLOOP_DEBUG= loop --version');
    expect(r.code).toBe(0);
    expect(r.err).toBe('loop: code cache used\n');
    expect(JSON.parse(r.out.slice(0, r.out.lastIndexOf('}') + 1))).toHaveProperty('$schema');
    expect(r.out.slice(r.out.lastIndexOf('}') + 1).trim()).toBe(JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8')).version);
  });

  it('exits 2 on YAML that does not parse, naming the line', () => {
    const r = sh('loop lint fixtures/loops/invalid/bad-yaml.yaml');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^loop: error: Could not parse YAML in \/.*bad-yaml\.yaml: .*line \d+, column \d+\n$/);
    expect(r.err).not.toMatch(/\n\s+at /);
  });

  it('lint: 0 clean, 1 on an error finding, 1 on a warning with --strict, usable in && chains', () => {
    expect(sh('loop lint fixtures/loops/lint/clean.yaml').code).toBe(0);
    expect(sh('loop lint fixtures/loops/lint/egress-unknown-member.yaml').code).toBe(1);
    expect(sh('loop lint fixtures/loops/lint/no-stop-conditions.yaml').code).toBe(0);
    const strict = sh('loop lint fixtures/loops/lint/no-stop-conditions.yaml --strict && echo reached');
    expect(strict.code).toBe(1);
    expect(strict.out).not.toContain('reached');
  });

  it('a usage error exits 2', () => {
    const r = sh('loop compile --nope x.yaml');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^loop: error: Unknown argument: nope/);
  });
});
