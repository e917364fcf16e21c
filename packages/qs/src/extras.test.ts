// qs examples, qs schema and qs doctor: embedded data that must match the repository, and a doctor that tells without telling secrets.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { memoryIo } from '@quickloop/cli-kit';
import { cli } from './cli.js';
import { EXAMPLES_MODULE_PATH, renderExamplesModule, renderSchemasModule, SCHEMA_FILES, SCHEMAS_MODULE_PATH } from './examples/source.js';
import { findExample, materialise } from './examples/examples.js';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('embedded files', () => {
  it('match fixtures/examples and schemas/ (run `pnpm schemas` after changing them)', () => {
    expect(readFileSync(EXAMPLES_MODULE_PATH, 'utf8')).toBe(renderExamplesModule());
    expect(readFileSync(SCHEMAS_MODULE_PATH, 'utf8')).toBe(renderSchemasModule());
  });
});

describe('qs examples', () => {
  it('lists every bundled example with its whole route and how to run it', async () => {
    const io = memoryIo();
    expect(await cli(['examples'], io)).toBe(0);
    expect(io.out()).toContain('greeter  https://docs.greeter.test/install.html  (replay+agent)');
    expect(io.out()).toContain('    then https://docs.greeter.test/quickstart.html');
    expect(io.out()).toContain('greeter-docs-gap  https://docs.greeter.test/quickstart.html');
    expect(io.out()).toContain('qs run --example greeter');
  });

  it('writes an example with its docs to a private folder, and removes it', () => {
    const m = materialise(findExample('greeter'));
    expect(readFileSync(m.taskPath, 'utf8')).toBe(readFileSync(`${ROOT}fixtures/examples/greeter.yaml`, 'utf8'));
    expect(m.docsMap).toMatch(/^https:\/\/docs\.greeter\.test\/=.*\/docs$/);
    expect(readFileSync(`${m.docsMap.split('=')[1]}/quickstart.html`, 'utf8')).toBe(readFileSync(`${ROOT}fixtures/docs-site/quickstart.html`, 'utf8'));
    m.remove();
    expect(existsSync(m.dir)).toBe(false);
    expect(() => findExample('nope')).toThrow("no example named 'nope'; available: greeter, greeter-docs-gap");
  });
});

describe('qs run --example', () => {
  it('runs a bundled example offline, from a private copy it removes afterwards', async () => {
    const io = memoryIo({ cwd: ROOT, env: { PATH: `${ROOT}node_modules/.bin:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: process.env.HOME ?? '/root', NO_COLOR: '1' } });
    expect(await cli(['run', '--example', 'greeter-docs-gap', '-q'], io)).toBe(1);
    const events = io.out().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.find((e) => e.type === 'run.completed')).toMatchObject({ task: 'greeter-docs-gap', classification: 'docs_gap', suspect_page: 'https://docs.greeter.test/quickstart.html' });
    const source = String((events.find((e) => e.type === 'task.loaded')?.source as { path: string }).path);
    expect(source).toMatch(/qs-example-greeter-docs-gap-/);
    expect(existsSync(source)).toBe(false);
    await expect(cli(['run', '--example', 'greeter', 'tasks/x.yaml'], memoryIo())).rejects.toThrow('--example runs the bundled tasks; name no task files with it');
  });
});

describe('qs run with a quickloop.yaml', () => {
  it('takes the flags it sets where none was typed, lets a typed flag win, and refuses a setting that changes a result', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qs-config-run-'));
    try {
      mkdirSync(join(dir, 'sub'));
      writeFileSync(join(dir, 'quickloop.yaml'), `run:\n  docs_map: https://docs.greeter.test/=${ROOT}fixtures/docs-site\n  summary: summary.md\ntasks:\n  budgets:\n    max_seconds: 77\n`);
      writeFileSync(join(dir, 'sub', 'greeter.yaml'), readFileSync(`${ROOT}fixtures/examples/greeter.yaml`, 'utf8'));
      const env = { PATH: `${ROOT}node_modules/.bin:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: process.env.HOME ?? '/root', NO_COLOR: '1' };
      const io = memoryIo({ cwd: join(dir, 'sub'), env });
      expect(await cli(['run', 'greeter.yaml', '-q'], io), io.err()).toBe(0);
      const events = io.out().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
      const loaded = events.find((e) => e.type === 'task.loaded') as { task: { budgets: { max_seconds: number } }; source: { config?: { path: string } } };
      expect(loaded.task.budgets.max_seconds).toBe(77);
      expect(loaded.source.config?.path).toBe(join(dir, 'quickloop.yaml'));
      expect(events.filter((e) => e.type === 'docs.read')).toHaveLength(2);
      expect(existsSync(join(dir, 'summary.md'))).toBe(true);
      const typed = memoryIo({ cwd: join(dir, 'sub'), env });
      expect(await cli(['run', 'greeter.yaml', '-q', '--summary', 'mine.md'], typed), typed.err()).toBe(0);
      expect(existsSync(join(dir, 'sub', 'mine.md'))).toBe(true);
      const none = memoryIo({ cwd: join(dir, 'sub'), env });
      expect(await cli(['run', 'greeter.yaml', '-q', '--no-config'], none)).toBe(0);
      expect(none.out()).not.toContain('"max_seconds":77');
      await expect(cli(['run', 'greeter.yaml', '--no-config', '--config', '../quickloop.yaml'], memoryIo({ cwd: join(dir, 'sub'), env }))).rejects.toThrow('qs run: --config and --no-config contradict each other: give one');
      writeFileSync(join(dir, 'quickloop.yaml'), 'run:\n  model: gpt-5\n');
      await expect(cli(['run', 'greeter.yaml'], memoryIo({ cwd: join(dir, 'sub'), env }))).rejects.toThrow('../quickloop.yaml:2:3: run.model: settings that change what a result means stay on the command line (--model)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('qs schema', () => {
  it('prints the task schema exactly as given, and the others by name', async () => {
    const io = memoryIo();
    expect(await cli(['schema'], io)).toBe(0);
    expect(JSON.parse(io.out())).toEqual(JSON.parse(readFileSync(`${ROOT}schemas/task.schema.json`, 'utf8')));
    const ev = memoryIo();
    expect(await cli(['schema', 'events'], ev)).toBe(0);
    expect(JSON.parse(ev.out())).toEqual(JSON.parse(readFileSync(`${ROOT}schemas/events.schema.json`, 'utf8')));
    await expect(cli(['schema', 'tasks'], memoryIo())).rejects.toThrow("qs schema: no schema named 'tasks'; available: task, task-enforced, events, loop, loop-resolved");
  });
  // The seeds (task, loop) end without a newline: `qs schema > f && cmp f schemas/…` must still hold,
  // so a sha256 of the output is the published file's.
  it.each(Object.entries(SCHEMA_FILES))('prints %s byte for byte as schemas/ holds it', async (name, file) => {
    const io = memoryIo();
    expect(await cli(['schema', name], io)).toBe(0);
    expect(io.out()).toBe(readFileSync(`${ROOT}schemas/${file}`, 'utf8'));
  });
});

describe('qs doctor', () => {
  it('reports the backend from a real sandbox, the keys by name only, and the tasks as qs-validate sees them', async () => {
    const secret = 'sk-ant-doctor-must-not-print-this-0123456789';
    // A gateway's key in a base URL's query is as secret as the key: not even the URL is printed.
    const gatewayKey = 'gw/doctor key+0123';
    const io = memoryIo({ cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', NO_COLOR: '1', ANTHROPIC_API_KEY: secret, OPENAI_BASE_URL: `http://127.0.0.1:9/v1?key=${encodeURIComponent(gatewayKey)}` } });
    expect(await cli(['doctor', 'fixtures/pipeline/docs-gap.yaml', 'fixtures/tasks/invalid/blank-name.yaml'], io)).toBe(0);
    const out = io.out();
    for (const s of [secret, gatewayKey, encodeURIComponent(gatewayKey), new URLSearchParams({ k: gatewayKey }).toString().slice(2), '127.0.0.1:9']) {
      expect(out).not.toContain(s);
      expect(io.err()).not.toContain(s);
    }
    expect(out).toMatch(/^ {2}bwrap {3}available, .*commands run as uid 1000 inside$/m);
    expect(out).toMatch(/limits: processes 1024 \((cgroup_v1|cgroup_v2|rlimit)/);
    expect(out).toContain('anthropic   key from ANTHROPIC_API_KEY');
    expect(out).toContain('openai      no key (QS_OPENAI_API_KEY, OPENAI_API_KEY) · base URL from OPENAI_BASE_URL');
    expect(out).toContain('  ok  fixtures/pipeline/docs-gap.yaml (greeter-docs-gap, replay+agent)');
    expect(out).toMatch(/INVALID\s+fixtures\/tasks\/invalid\/blank-name\.yaml/);
  });

  it("says what a sandbox's own npmrc and pip.conf are given, never a credential", async () => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', NO_COLOR: '1', NPM_CONFIG_REGISTRY: 'https://npm-mirror.test/r', PIP_INDEX_URL: 'https://me:pip-secret@pip.test/simple' };
    const io = memoryIo({ cwd: ROOT, env });
    expect(await cli(['doctor'], io)).toBe(0);
    expect(io.out()).toContain("  a sandbox's own config: npm registry=https://npm-mirror.test/r/");
    expect(io.out()).not.toContain('pip-secret');
  });
});
