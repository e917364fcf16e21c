// qs-validate in-process: inputs, exit codes, the stream it writes, and what people read on stderr.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InterruptedError, UsageError, memoryIo } from '@quickloop/cli-kit';
import { parseLine } from '@quickloop/events';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli, parseOptions } from './cli.js';
import { run } from './run.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'qs-validate-test-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const env = () => ({ NO_COLOR: '1', HOME: dir, npm_config_registry: 'https://npm.run.test/' });
const machine = () => ({ root: dir, execPath: join(dir, 'no-node') });
const TASK = (name: string) => `name: ${name}\ngoal: Make out.txt.\ndocs: {path: [https://docs.example.com/]}\nreplay: [touch out.txt]\nsuccess: {script: 'test -f out.txt || qs_fail "no out.txt"'}\n`;

async function validate(args: string[], opts: { cwd?: string; stdin?: string } = {}) {
  const io = memoryIo({ env: env(), cwd: opts.cwd ?? dir, ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}) });
  const code = await run({ ...(await parseOptions(args, io)), registryPaths: machine() }, io);
  const events = io
    .out()
    .split('\n')
    .filter((l) => l !== '')
    .map((l, i) => parseLine(l, i + 1, 'stdout').event);
  return { code, events, err: io.err(), out: io.out() };
}

describe('qs-validate', () => {
  it('writes only valid known events on stdout: a task.loaded per task, each with a fresh run_id', async () => {
    const r = await validate(['fixtures/tasks/valid'], { cwd: ROOT });
    expect(r.code).toBe(0);
    const loaded = r.events.filter((e) => e.type === 'task.loaded');
    expect(loaded).toHaveLength(11);
    expect(new Set(loaded.map((e) => e.run_id)).size).toBe(11);
    expect(r.events.every((e) => e.stage === 'qs-validate')).toBe(true);
    expect(r.err.split('\n').filter((l) => l.startsWith('ok  '))).toHaveLength(11);
    expect(r.err).toContain('ok  fixtures/tasks/valid/duckdb-python-agent.yaml (duckdb-python-agent, agent-only)');
  });

  it('with no argument takes tasks/, then ./ (only files that look like tasks), and says when there are none', async () => {
    writeFileSync(join(dir, 'package.json'), '{"name": "not-a-task"}');
    let r = await validate([]);
    expect(r.code).toBe(3);
    expect(r.err).toBe('INVALID  .: no task files found in tasks/ or ./ (looked for *.yaml, *.yml and *.json)\n');
    expect(r.events).toMatchObject([{ type: 'diagnostic', code: 'QS007', severity: 'error', path: '.' }]);
    writeFileSync(join(dir, 'here.yml'), TASK('here'));
    r = await validate([]);
    expect(r.code).toBe(0);
    expect(r.err).toBe('ok  here.yml (here, replay+agent)\n');
    mkdirSync(join(dir, 'tasks'));
    writeFileSync(join(dir, 'tasks', 'b.json'), JSON.stringify({ name: 'b', goal: 'g', docs: { path: ['https://docs.example.com/'] }, replay: ['touch x'], success: { script: 'test -f x || qs_fail no' } }));
    writeFileSync(join(dir, 'tasks', 'a.yaml'), TASK('a'));
    r = await validate([]);
    expect(r.err).toBe('ok  tasks/a.yaml (a, replay+agent)\nok  tasks/b.json (b, replay+agent)\n');
  });

  it('expands globs itself, and reports a directory or glob with no tasks as invalid (exit 3)', async () => {
    mkdirSync(join(dir, 'x', 'y'), { recursive: true });
    writeFileSync(join(dir, 'x', 'y', 'one.yaml'), TASK('one'));
    writeFileSync(join(dir, 'x', 'two.yaml'), TASK('two'));
    writeFileSync(join(dir, 'x', 'notes.md'), '# not a task');
    let r = await validate(['x/**/*.yaml']);
    expect(r.err).toBe('ok  x/two.yaml (two, replay+agent)\nok  x/y/one.yaml (one, replay+agent)\n');
    r = await validate(['x/*.txt', 'x/y', 'empty-dir-missing']);
    expect(r.code).toBe(3);
    expect(r.err.split('\n')).toEqual([
      'INVALID  x/*.txt: the pattern matches no task files (*.yaml, *.yml, *.json)',
      'ok  x/y/one.yaml (one, replay+agent)',
      'INVALID  empty-dir-missing: no such file or directory',
      '',
    ]);
  });

  it('loads each file once: ** does not follow a linked folder (a loop would repeat every task), and a file named twice is one task', async () => {
    mkdirSync(join(dir, 'x', 'y'), { recursive: true });
    writeFileSync(join(dir, 'x', 'y', 'one.yaml'), TASK('one'));
    symlinkSync('..', join(dir, 'x', 'y', 'loop'));
    symlinkSync('one.yaml', join(dir, 'x', 'y', 'alias.yaml'));
    const r = await validate(['x/**/*.yaml', 'x/y/one.yaml', 'x/y']);
    expect(r.code).toBe(0);
    expect(r.events.filter((e) => e.type === 'task.loaded')).toHaveLength(1);
    expect(r.err).toBe('ok  x/y/alias.yaml (one, replay+agent)\n');
  });

  it('reports a broken link or a link loop among the task files as invalid, in a folder, a glob and the default tasks/, never skips it', async () => {
    mkdirSync(join(dir, 'tasks'));
    writeFileSync(join(dir, 'tasks', 'a.yaml'), TASK('a'));
    symlinkSync('moved-away.yaml', join(dir, 'tasks', 'b.yaml'));
    symlinkSync('c.yaml', join(dir, 'tasks', 'c.yaml'));
    // A folder named like a task file is a folder: not a task, not an error.
    mkdirSync(join(dir, 'tasks', 'd.yaml'));
    const expected = [
      'ok  tasks/a.yaml (a, replay+agent)',
      "INVALID  tasks/b.yaml: is a broken link (to 'moved-away.yaml', which does not exist)",
      'INVALID  tasks/c.yaml: is a link that leads back to itself (a loop of symbolic links)',
      '',
    ];
    for (const args of [[], ['tasks'], ['tasks/*.yaml']]) {
      const r = await validate(args);
      expect(r.code, args.join(' ')).toBe(3);
      expect(r.err.split('\n'), args.join(' ')).toEqual(expected);
      expect(r.events.filter((e) => e.type === 'diagnostic').map((e) => [e.code, e.path])).toEqual([
        ['QS001', 'tasks/b.yaml'],
        ['QS001', 'tasks/c.yaml'],
      ]);
    }
  });

  it("reads a task from stdin only when given '-'", async () => {
    const r = await validate(['-'], { stdin: TASK('piped') });
    expect(r.code).toBe(0);
    expect(r.events[0]).toMatchObject({ type: 'task.loaded', source: { path: '-' }, task: { name: 'piped' } });
    expect(r.err).toBe('ok  stdin (piped, replay+agent)\n');
    const bad = await validate(['-'], { stdin: 'name: [unclosed\n' });
    expect(bad.code).toBe(3);
    expect(bad.err).toMatch(/^INVALID {2}stdin:2:1: invalid YAML: /);
    await expect(parseOptions(['-', '-'], memoryIo())).resolves.toMatchObject({ inputs: ['-', '-'] });
    await expect(validate(['-', '-'], { stdin: '' })).rejects.toThrow(UsageError);
  });

  it('flags duplicate names across files; warnings keep exit 0 unless --strict; --quiet keeps only errors', async () => {
    writeFileSync(join(dir, 'a.yaml'), TASK('same'));
    writeFileSync(join(dir, 'b.yaml'), TASK('same'));
    const r = await validate(['a.yaml', 'b.yaml']);
    expect(r.code).toBe(0);
    expect(r.err).toContain("  warning  b.yaml:1:7: task name 'same' is also used by a.yaml; results and output folders would collide [QS110]");
    const diag = r.events.find((e) => e.type === 'diagnostic')!;
    expect(diag).toMatchObject({ code: 'QS110', severity: 'warning', path: 'b.yaml', task: 'same' });
    expect(diag.run_id).toBe(r.events[1]!.run_id);
    const strict = await validate(['--strict', 'a.yaml', 'b.yaml']);
    expect(strict.code).toBe(3);
    expect(strict.err.trimEnd().split('\n').pop()).toBe('INVALID  1 warning under --strict');
    const quiet = await validate(['--quiet', 'a.yaml', 'b.yaml', 'missing.yaml']);
    expect(quiet.err).toBe('INVALID  missing.yaml: no such file or directory\n');
    expect(quiet.events.filter((e) => e.type === 'task.loaded')).toHaveLength(2);
  });

  it('a file that is invalid gives every error as a diagnostic, and no task.loaded', async () => {
    writeFileSync(join(dir, 'bad.yaml'), 'name: bad\ngoal: g\ndocs: {path: [ftp://x.test/]}\nsuccess: {}\nbudgetz: 1\n');
    const r = await validate(['bad.yaml']);
    expect(r.code).toBe(3);
    expect(r.events.map((e) => e.type)).toEqual(['diagnostic', 'diagnostic', 'diagnostic']);
    expect(r.events.map((e) => e.code)).toEqual(['QS013', 'QS030', 'QS010']);
    expect(r.err.split('\n')[0]).toBe("INVALID  bad.yaml:3:15: docs.path[0] must be an http(s) URL, got 'ftp://x.test/'");
    expect(r.err).toContain("  error    bad.yaml:5:1: unknown field 'budgetz'; did you mean 'budgets'?");
  });

  it('--verbose names a registry once for a sources file that lists it for two suites', async () => {
    mkdirSync(join(dir, 'etc', 'apt', 'sources.list.d'), { recursive: true });
    writeFileSync(join(dir, 'etc', 'apt', 'sources.list.d', 'two.sources'), 'Types: deb\nURIs: http://mirror.apt.test/debian\nSuites: stable stable-updates\nComponents: main\n\nTypes: deb\nURIs: http://mirror.apt.test/debian\nSuites: stable-backports\nComponents: main\n');
    writeFileSync(join(dir, 'a.yaml'), TASK('a'));
    try {
      const r = await validate(['--verbose', 'a.yaml']);
      expect(r.err.split('\n').filter((l) => l.startsWith('registry  mirror.apt.test:80'))).toHaveLength(1);
    } finally {
      rmSync(join(dir, 'etc'), { recursive: true, force: true });
    }
  });

  it('--verbose shows where each registry came from and the policy of each task', async () => {
    writeFileSync(join(dir, 'a.yaml'), TASK('a'));
    const r = await validate(['--verbose', '--allow-registry', 'extra.run.test', 'a.yaml']);
    expect(r.err).toContain('registry  npm.run.test:443  (npm environment (registry))');
    expect(r.err).toContain('registry  extra.run.test:443  (option --allow-registry)');
    expect(r.err).toMatch(/docs hosts docs\.example\.com; registries \(default\) npm\.run\.test:443, extra\.run\.test:443; explicit none; QS_PORT from \d+/);
  });

  it('refuses an --allow-registry that is not a host (a forgotten value would swallow a file name)', async () => {
    writeFileSync(join(dir, 'a.yaml'), TASK('a'));
    await expect(validate(['--allow-registry', './a.yaml'])).rejects.toThrow("--allow-registry './a.yaml' is not a registry URL, host:port or host name");
    await expect(validate(['--allow-registry', 'https://bad host/', 'a.yaml'])).rejects.toThrow(UsageError);
    await expect(validate(['--config', 'quickloop.yaml', '--no-config', 'a.yaml'])).rejects.toThrow('--config and --no-config contradict each other: give one');
    const r = await validate(['--verbose', '--allow-registry', 'https://Mirror.Run.Test:8443/npm/', 'a.yaml']);
    expect(r.err).toContain('registry  mirror.run.test:8443  (option --allow-registry)');
  });

  it('the fixtures/events examples of its two event types are its real output', async () => {
    const lines = (c: string) => readFileSync(join(ROOT, 'fixtures/golden/qs-validate', c, 'out.ndjson'), 'utf8').split('\n');
    const example = (t: string) => JSON.parse(readFileSync(join(ROOT, 'fixtures/events', `${t}.json`), 'utf8'));
    expect(example('task.loaded')).toEqual(JSON.parse(lines('valid-script')[0]!));
    expect(example('diagnostic')).toEqual(JSON.parse(lines('strict')[1]!));
  });

  it('stops with InterruptedError (exit 130) when the signal is aborted', async () => {
    writeFileSync(join(dir, 'a.yaml'), TASK('a'));
    const io = memoryIo({ env: env(), cwd: dir });
    io.abort();
    await expect(run({ ...(await parseOptions(['a.yaml'], io)), registryPaths: machine() }, io)).rejects.toThrow(InterruptedError);
  });

  it('an interrupt ends a wait on stdin that never ends (qs-validate - on a terminal)', async () => {
    const stdin = new PassThrough();
    const io = memoryIo({ env: env(), cwd: dir, stdin });
    stdin.write('name: half');
    const pending = run({ ...(await parseOptions(['-'], io)), registryPaths: machine() }, io);
    setImmediate(() => io.abort(new InterruptedError('interrupted by SIGINT')));
    await expect(pending).rejects.toThrow(InterruptedError);
    expect(stdin.destroyed).toBe(true);
  });

  it('cli() refuses an unknown flag as a usage error', async () => {
    await expect(cli(['--frobnicate'], memoryIo())).rejects.toThrow(/Unknown argument: frobnicate/);
  });
});
