// Loading end to end: normalisation, the egress policy, success.file, source limits, stdin and lists of tasks.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUDGET_DEFAULTS, loadTaskFile, loadTaskStdin } from './index.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'qs-task-test-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, text: string | Buffer): string => {
  mkdirSync(join(dir, name, '..'), { recursive: true });
  writeFileSync(join(dir, name), text);
  return name;
};
const opts = { registries: ['npm.reg.test:443', 'localhost:4873'] };

const TASK = `name: demo
goal: "  Build it.  "
docs:
  path: [https://Docs.Example.com/a, https://docs.example.com/b, https://guide.example.net/c]
  allow: [Example.COM, docs.example.com.]
network:
  allow: [Files.Example.org]
setup: ["  python3 -m venv .venv  ", "   "]
replay: [make]
success:
  script: test -f out || qs_fail "no out"
budgets:
  max_turns: 30
`;

describe('loadTaskFile', () => {
  it('normalises: trimmed text, default budgets, route hosts first, registry endpoints, network.allow as explicit, source sha256', async () => {
    write('t.yaml', TASK);
    const r = await loadTaskFile('t.yaml', dir, opts);
    expect(r.errors).toEqual([]);
    const p = r.tasks[0]!.payload;
    expect(p.task.goal).toBe('Build it.');
    expect(p.task.setup).toEqual(['python3 -m venv .venv']);
    expect(p.task.budgets).toEqual({ ...BUDGET_DEFAULTS, max_turns: 30 });
    expect(p.task.docs.allow).toEqual(['docs.example.com', 'guide.example.net', 'example.com']);
    expect(p.policy).toEqual({
      explicit: ['files.example.org'],
      docs_hosts: ['docs.example.com', 'guide.example.net', 'example.com'],
      registries: ['npm.reg.test:443', 'localhost:4873'],
      registries_source: 'default',
    });
    expect(p.mode).toBe('replay+agent');
    expect(p.source).toEqual({ path: 't.yaml', format: 'yaml', sha256: createHash('sha256').update(TASK).digest('hex') });
    expect(p.check.script.startsWith(`QS_PORT_BASE=${p.check.port_base}\n`)).toBe(true);
    expect(p.check.script.endsWith(p.check.body)).toBe(true);
  });

  it('network.only replaces the registries (its hosts are explicit, no registry endpoint is left); entrypoint becomes a one-page path; no replay is agent-only', async () => {
    write('t.yaml', 'name: o\ngoal: g\ndocs: {entrypoint: https://docs.example.com/}\nnetwork: {only: [Mirror.example.net]}\nsuccess: {script: "test -f x || qs_fail no"}\n');
    const p = (await loadTaskFile('t.yaml', dir, opts)).tasks[0]!.payload;
    expect(p.task.docs.path).toEqual(['https://docs.example.com/']);
    expect(p.policy.registries).toEqual([]);
    expect(p.policy.registries_source).toBe('only');
    expect(p.policy.explicit).toEqual(['mirror.example.net']);
    expect(p.task.replay).toBeNull();
    expect(p.mode).toBe('agent-only');
  });

  it('reads success.file at load time and carries its text in the check (with its path and sha256)', async () => {
    write('tasks/checks/c.sh', 'test -f built || qs_fail "not built"\n');
    write('tasks/t.yaml', 'name: f\ngoal: g\ndocs: {path: [https://docs.example.com/]}\nsuccess: {file: checks/c.sh}\n');
    const p = (await loadTaskFile('tasks/t.yaml', dir, opts)).tasks[0]!.payload;
    expect(p.check.body).toBe('test -f built || qs_fail "not built"\n');
    expect(p.check.success_file).toEqual({ path: join('tasks', 'checks', 'c.sh'), sha256: createHash('sha256').update(readFileSync(join(dir, 'tasks/checks/c.sh'))).digest('hex') });
    expect(p.task.success).toEqual({ file: 'checks/c.sh' });
  });

  it("reads YAML merge keys (`<<: *defaults`) as quickstarted's loader (PyYAML) does: the mapping merged in, the task's own keys winning", async () => {
    write('t.yaml', 'name: m\ngoal: g\ndocs: {path: [https://docs.example.com/]}\nsuccess:\n  <<: &check {script: "test -f x || qs_fail no"}\nbudgets:\n  <<: [{max_turns: 5, max_seconds: 100}, {max_output_chars: 900}]\n  max_turns: 7\n');
    const r = await loadTaskFile('t.yaml', dir, opts);
    expect(r.errors).toEqual([]);
    const p = r.tasks[0]!.payload;
    expect(p.task.success).toEqual({ script: 'test -f x || qs_fail no' });
    expect(p.task.budgets).toEqual({ ...BUDGET_DEFAULTS, max_turns: 7, max_seconds: 100, max_output_chars: 900 });
    // A field that came in through the merge is still pointed at (its mapping) when it is wrong.
    write('bad.yaml', 'name: m\ngoal: g\ndocs: {path: [https://docs.example.com/]}\nsuccess: {script: "test -f x || qs_fail no"}\nbudgets:\n  <<: {max_turns: 0}\n');
    expect((await loadTaskFile('bad.yaml', dir, opts)).errors.map((e) => [e.code, e.line, e.message])).toEqual([['QS036', 6, 'budgets.max_turns must be at least 1, got 0']]);
  });

  it.each([
    ['!!binary aGVsbG8=', 'binary data (!!binary)'],
    ['!!timestamp 2001-12-14', 'a timestamp'],
    ['!!set {a, b}', 'a set (!!set)'],
    ['!!omap [a: 1]', 'an ordered mapping (!!omap)'],
  ])('names what YAML tag %s reads as when a field wants a string', async (value, what) => {
    write('tag.yaml', `name: ${value}\ngoal: Build it.\ndocs: {path: [https://docs.example.com/a]}\nsuccess: {script: test -f out}\n`);
    expect((await loadTaskFile('tag.yaml', dir, opts)).errors.map((e) => [e.code, e.message])).toEqual([['QS011', `name must be a string, got ${what}`]]);
  });

  it('reads a success.file saved with a byte-order mark and CRLF line ends as the lines its author wrote (the sha256 stays the bytes)', async () => {
    const bytes = Buffer.from('\uFEFFtest -d out || qs_fail "no out"\r\ntest -f out/x\r\n', 'utf8');
    write('checks/w.sh', bytes);
    write('t.yaml', 'name: f\ngoal: g\ndocs: {path: [https://docs.example.com/]}\nsuccess: {file: checks/w.sh}\n');
    const r = await loadTaskFile('t.yaml', dir, opts);
    expect(r.errors).toEqual([]);
    const p = r.tasks[0]!.payload;
    expect(p.check.body).toBe('test -d out || qs_fail "no out"\ntest -f out/x\n');
    expect(p.check.success_file?.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
  });

  it("reads a success.file only from inside the task's project: up to its quickloop.yaml or .git, else beside the task; never through a link out", async () => {
    const task = (file: string) => `name: f\ngoal: g\ndocs: {path: [https://docs.example.com/]}\nsuccess: {file: ${file}}\n`;
    const error = async (path: string) => (await loadTaskFile(path, dir, opts)).errors.map((e) => `${e.code} ${e.message}`);
    write('secret.txt', 'echo the key\n');
    // No project marker anywhere up: the task's own folder is the boundary.
    write('proj/checks/c.sh', 'true\n');
    write('proj/tasks/t.yaml', task('../checks/c.sh'));
    expect(await error('proj/tasks/t.yaml')).toEqual([expect.stringMatching(/^QS031 success\.file 'proj\/checks\/c\.sh' is outside the task's project/)]);
    // A quickloop.yaml (or a .git) marks the project: a sibling folder of checks is inside it.
    write('proj/quickloop.yaml', '{}\n');
    expect(await error('proj/tasks/t.yaml')).toEqual([]);
    write('proj/tasks/up.yaml', task('../../secret.txt'));
    expect(await error('proj/tasks/up.yaml')).toEqual([expect.stringMatching(/^QS031 success\.file 'secret\.txt' is outside the task's project/)]);
    // A link inside the project to a file outside it is refused as the file it leads to.
    symlinkSync(join(dir, 'secret.txt'), join(dir, 'proj', 'tasks', 'link.sh'));
    write('proj/tasks/link.yaml', task('link.sh'));
    expect(await error('proj/tasks/link.yaml')).toEqual([expect.stringMatching(/^QS031 success\.file 'proj\/tasks\/link\.sh' is outside the task's project/)]);
    mkdirSync(join(dir, 'git', '.git'), { recursive: true });
    write('git/checks/..c.sh', 'true\n');
    write('git/tasks/t.yaml', task('../checks/..c.sh'));
    expect(await error('git/tasks/t.yaml')).toEqual([]);
  });

  it('refuses a file over 10 MB without reading it, and invalid UTF-8', async () => {
    write('big.yaml', '');
    truncateSync(join(dir, 'big.yaml'), 10 * 1024 * 1024 + 1);
    const big = await loadTaskFile('big.yaml', dir, opts);
    expect(big.errors[0]).toMatchObject({ code: 'QS004', message: 'is 10.0 MB, over the 10 MB limit for a task file' });
    write('latin1.yaml', Buffer.from([0x6e, 0x61, 0x6d, 0x65, 0x3a, 0x20, 0xe9, 0x0a]));
    expect((await loadTaskFile('latin1.yaml', dir, opts)).errors[0]!.code).toBe('QS003');
    expect((await loadTaskFile('missing.yaml', dir, opts)).errors[0]).toMatchObject({ code: 'QS001', message: 'no such file or directory' });
    mkdirSync(join(dir, 'adir.yaml'));
    expect((await loadTaskFile('adir.yaml', dir, opts)).errors[0]!.message).toBe('is a directory, not a task file');
  });

  it('reads a pipe given as a file (a named FIFO, <(cmd), /dev/stdin) up to the 10 MB limit, and refuses a device rather than read it forever', async () => {
    const fifo = join(dir, 'piped.yaml');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // The writer is a process of its own: the read is synchronous.
    const writer = (script: string) => {
      const child = spawn('sh', ['-c', script, 'sh', fifo], { stdio: 'ignore' });
      return { child, done: new Promise<number | null>((ok) => child.once('exit', (code) => ok(code))) };
    };
    write('task.txt', TASK);
    const one = writer(`cat '${join(dir, 'task.txt')}' > "$1"`);
    const r = await loadTaskFile(fifo, dir, opts);
    expect(await one.done).toBe(0);
    expect(r.errors).toEqual([]);
    expect(r.tasks[0]!.payload.task.name).toBe('demo');
    // A writer that never stops is cut off past the limit (it then finds the pipe closed).
    const flood = writer('yes > "$1"');
    const big = await loadTaskFile(fifo, dir, opts);
    expect(big.errors.map((e) => [e.code, e.message])).toEqual([['QS004', 'is over the 10 MB limit for a task file']]);
    expect(await flood.done).not.toBe(0);
    for (const device of ['/dev/zero', '/dev/null']) {
      const d = await loadTaskFile(device, dir, opts);
      expect(d.errors.map((e) => [e.code, e.message])).toEqual([['QS001', 'is a device, not a task file']]);
    }
  });

  it('refuses a top-level list of tasks: one task per file, so a path names one task', async () => {
    const one = 'name: NAME\ngoal: g\ndocs: {path: [https://docs.example.com/]}\nsuccess: {script: "test -f x || qs_fail no"}';
    const item = (name: string) => one.replace('NAME', name).split('\n').map((l, i) => (i === 0 ? `- ${l}` : `  ${l}`)).join('\n');
    write('list.yaml', `${item('a')}\n${item('b')}\n`);
    const r = await loadTaskFile('list.yaml', dir, opts);
    expect(r.ok).toBe(false);
    expect(r.tasks).toEqual([]);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ code: 'QS006', line: 1, column: 1 });
    expect(r.errors[0]!.message).toBe('the top level is a list (2 items); a task file holds one task mapping; put each task in its own file');
  });

  it('reads a task from stdin: JSON sniffed by its first character, success.file relative to cwd', async () => {
    write('checks/c.sh', 'true || qs_fail x\n');
    const json = JSON.stringify({ name: 's', goal: 'g', docs: { path: ['https://docs.example.com/'] }, success: { file: 'checks/c.sh' } });
    const r = await loadTaskStdin(Buffer.from(json), dir, opts);
    expect(r.display).toBe('stdin');
    const p = r.tasks[0]!.payload;
    expect(p.source.path).toBe('-');
    expect(p.source.format).toBe('json');
    expect(p.check.success_file!.path).toBe(join('checks', 'c.sh'));
    const broken = await loadTaskStdin(Buffer.from('{"name": }'), dir, opts);
    expect(broken.errors[0]).toMatchObject({ code: 'QS005', message: "invalid JSON: Unexpected token '}'", line: 1, column: 10 });
    const nested = await loadTaskStdin(Buffer.from(`name: x\na: ${'['.repeat(20000)}${']'.repeat(20000)}\n`), dir, opts);
    expect(nested.errors[0]?.message).toBe('invalid YAML: nested too deeply to read (hundreds of levels); a task is a few levels deep');
    const deep = await loadTaskStdin(Buffer.from('{\n  "a": [1,\n  2,,]\n}'), dir, opts);
    expect(deep.errors[0]).toMatchObject({ message: "invalid JSON: Unexpected token ','", line: 3, column: 5 });
    expect((await loadTaskStdin(Buffer.alloc(0), dir, opts)).errors[0]!.code).toBe('QS002');
  });

  it('says a field has the wrong type once, not again for what its members would need', async () => {
    write('t.yaml', 'name: t\ngoal: g\ndocs:\nsuccess: {script: "test -f x || qs_fail x"}\n');
    const r = await loadTaskFile('t.yaml', dir, opts);
    expect(r.errors.map((e) => `${e.code} ${e.message}`)).toEqual(['QS011 docs must be a mapping, got an empty value']);
  });

  it('says why a docs URL is not one, with what it holds shown as written (a trailing space, letters beyond ASCII, a scheme in capitals)', async () => {
    const cases: [string, string][] = [
      ['"https://docs.example.com/start "', "docs.path[0] must be an http(s) URL, got 'https://docs.example.com/start ': it holds whitespace (here at its end), which a URL cannot; remove it or write it as %20"],
      ['"https://docs.example.com/a b"', "docs.path[0] must be an http(s) URL, got 'https://docs.example.com/a b': it holds whitespace, which a URL cannot; remove it or write it as %20"],
      ['https://docs.example.com/grüße', "docs.path[0] must be an http(s) URL, got 'https://docs.example.com/grüße': it holds characters beyond ASCII, which a URL writes encoded: https://docs.example.com/gr%C3%BC%C3%9Fe"],
      ['https://bücher.example/start', "docs.path[0] must be an http(s) URL, got 'https://bücher.example/start': it holds characters beyond ASCII, which a URL writes encoded: https://xn--bcher-kva.example/start"],
      ['HTTPS://docs.example.com/start', "docs.path[0] must be an http(s) URL, got 'HTTPS://docs.example.com/start': write its scheme in lower case (https://)"],
      ['ftp://docs.example.com/start', "docs.path[0] must be an http(s) URL, got 'ftp://docs.example.com/start'"],
    ];
    for (const [url, message] of cases) {
      write('u.yaml', `name: t\ngoal: g\ndocs: {path: [${url}]}\nsuccess: {script: "test -f x || qs_fail no"}\n`);
      const r = await loadTaskFile('u.yaml', dir, opts);
      expect(r.errors.map((e) => [e.code, e.message]), url).toEqual([['QS013', message]]);
    }
  });

  it('warns of a long-running replay step only where a server or watcher is run, not where its name is installed or written into a file (QS113)', async () => {
    const r = await loadTaskFile('fixtures/tasks/lint/server-written.yaml', fileURLToPath(new URL('../../../', import.meta.url)), opts);
    expect(r.errors).toEqual([]);
    expect(r.tasks[0]!.findings.filter((f) => f.code === 'QS113').map((f) => f.field)).toEqual(['replay[3]']);
  });

  it('never lets a wrong type crash the loader, wherever it is', async () => {
    const cases = ['name: [a]', 'goal: 3', 'docs: [x]', 'docs: {path: https://x.test/}', 'success: "true"', 'success: {wait_http: {path: /, json: 3}}', 'budgets: {max_turns: 1.5}', 'network: {allow: example.org}', 'replay: [1, 2]', 'image: {}'];
    for (const c of cases) {
      const base: Record<string, string> = { name: 'name: t', goal: 'goal: g', docs: 'docs: {path: [https://docs.example.com/]}', success: 'success: {script: "test -f x || qs_fail no"}' };
      base[c.split(':')[0]!] = c;
      write('w.yaml', `${Object.values(base).join('\n')}\n`);
      const r = await loadTaskFile('w.yaml', dir, opts);
      expect(r.ok, c).toBe(false);
      expect(r.errors[0]!.code, c).toMatch(/^QS01[0-3]$/);
      expect(r.errors[0]!.field, c).toBeTruthy();
      expect(r.errors[0]!.line, c).toBeGreaterThan(0);
    }
  });
});
