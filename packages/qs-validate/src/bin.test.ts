// The real binary, spawned: exit codes, stdout as NDJSON only, and a reader that goes away early.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseLine } from '@quickloop/events';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PKG = fileURLToPath(new URL('../', import.meta.url));
const BIN = join(PKG, 'bin', 'qs-validate.js');

const sh = (command: string) =>
  spawnSync('bash', ['-o', 'pipefail', '-c', command], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', QSV: BIN },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });

describe('bin/qs-validate.js', () => {
  it('validates the bundled tasks: exit 0, NDJSON events on stdout, people lines on stderr', () => {
    const r = sh('node "$QSV" fixtures/tasks/valid');
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.map((l, i) => parseLine(l, i + 1, 'stdout').event.type).filter((t) => t === 'task.loaded')).toHaveLength(11);
    expect(r.stderr).toMatch(/^ok {2}fixtures\/tasks\/valid\/agent-only\.yaml \(uv-projects, agent-only\)$/m);
  });

  it('validates the bundled examples as a folder: it holds only tasks (their manifest lives beside it)', () => {
    const r = sh('node "$QSV" fixtures/examples');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('INVALID');
    const loaded = r.stdout.trimEnd().split('\n').map((l, i) => parseLine(l, i + 1, 'stdout').event).filter((e) => e.type === 'task.loaded');
    expect(loaded.map((e) => (e.task as { name: string }).name).sort()).toEqual(['greeter-docs-gap', 'greeter-quickstart']);
  });

  it('exits 3 with one INVALID line per bad file, and 3 for a bad flag', () => {
    const r = sh('node "$QSV" fixtures/tasks/invalid/budget-zero.yaml fixtures/tasks/invalid/empty.yaml');
    expect(r.status).toBe(3);
    expect(r.stderr).toBe(
      'INVALID  fixtures/tasks/invalid/budget-zero.yaml:9:14: budgets.max_turns must be at least 1, got 0\n' +
        'INVALID  fixtures/tasks/invalid/empty.yaml: is empty; a task needs at least name, goal, docs and success\n',
    );
    const flag = sh('node "$QSV" --no-such-flag');
    expect(flag.status).toBe(3);
    expect(flag.stderr).toMatch(/^qs-validate: Unknown argument/);
    expect(flag.stdout).toBe('');
  });

  it('ends quietly with 0 when the reader closes the pipe early', () => {
    const r = sh('node "$QSV" fixtures/tasks/valid fixtures/tasks/lint 2>/dev/null | head -n 1 >/dev/null');
    expect(r.status).toBe(0);
  });

  it('reads a task piped on stdin with -', () => {
    const r = sh('node "$QSV" - < fixtures/tasks/valid/wait-url.json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout.split('\n')[0]!)).toMatchObject({ type: 'task.loaded', source: { path: '-', format: 'json' } });
  });

  it('starts from the code cache the build made, and runs the same without one or with a stale one', () => {
    const used = sh('QUICKLOOP_DEBUG=1 node "$QSV" -q fixtures/tasks/valid/script.yaml');
    expect(used.status).toBe(0);
    expect(used.stderr).toBe('qs-validate: code cache used\n');
    // A copy of the bin (CommonJS: its bin/package.json), its start-up and its bundle without the cache,
    // then with a bad one.
    const copy = mkdtempSync(join(PKG, '.bin-test-'));
    try {
      mkdirSync(join(copy, 'bin'));
      mkdirSync(join(copy, 'dist'));
      copyFileSync(BIN, join(copy, 'bin', 'qs-validate.js'));
      copyFileSync(join(PKG, 'bin', 'package.json'), join(copy, 'bin', 'package.json'));
      for (const file of ['bundle.cjs', 'code-cache.cjs']) copyFileSync(join(PKG, 'dist', file), join(copy, 'dist', file));
      const run = () => sh(`QUICKLOOP_DEBUG=1 node ${JSON.stringify(join(copy, 'bin', 'qs-validate.js'))} fixtures/tasks/valid/script.yaml`);
      const absent = run();
      expect(absent.status).toBe(0);
      expect(absent.stderr).toContain('qs-validate: code cache absent');
      expect(parseLine(absent.stdout.trimEnd(), 1, 'stdout').event.type).toBe('task.loaded');
      writeFileSync(join(copy, 'dist', 'bundle.cjs.cache'), 'not a code cache');
      const stale = run();
      expect(stale.status).toBe(0);
      expect(stale.stderr).toContain('qs-validate: code cache stale');
      expect(stale.stdout).toContain('"type":"task.loaded"');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
