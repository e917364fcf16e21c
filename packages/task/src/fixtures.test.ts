// Golden tests over fixtures/tasks: every file in valid/, invalid/ and lint/ is a case (a new file is a new test).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadTaskFile, located } from './index.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const dir = (name: string): string => `fixtures/tasks/${name}`;
const taskFiles = (name: string): string[] =>
  readdirSync(`${ROOT}${dir(name)}`)
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .sort();
const registries = { registries: ['registry.lint.test'] };

describe('fixtures/tasks/valid', () => {
  it.each(taskFiles('valid'))('%s loads with no errors and no warnings', async (file) => {
    const result = await loadTaskFile(`${dir('valid')}/${file}`, ROOT, registries);
    expect(result.errors.map((e) => located(file, e))).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.tasks.length).toBeGreaterThan(0);
    for (const t of result.tasks) {
      expect(t.findings.filter((f) => f.severity !== 'note').map((f) => `${f.code} ${f.message}`)).toEqual([]);
      expect(t.payload.check.script).toContain(t.payload.check.body);
    }
  });

  it('covers every shape the issue names', async () => {
    const loaded = await Promise.all(taskFiles('valid').map((f) => loadTaskFile(`${dir('valid')}/${f}`, ROOT, registries)));
    const tasks = loaded.flatMap((r) => r.tasks.map((t) => t.payload));
    const success = tasks.map((t) => t.task.success);
    expect(success.some((s) => s.script !== undefined)).toBe(true);
    expect(success.some((s) => s.file !== undefined)).toBe(true);
    expect(success.some((s) => s.serve !== undefined && s.wait_http?.path !== undefined)).toBe(true);
    expect(success.some((s) => s.expect_output !== undefined && s.script === undefined && s.wait_http === undefined)).toBe(true);
    expect(success.some((s) => s.wait_http?.url !== undefined)).toBe(true);
    expect(tasks.some((t) => t.policy.registries_source === 'only')).toBe(true);
    expect(tasks.some((t) => t.task.network.allow.length > 0 && t.policy.registries_source === 'default')).toBe(true);
    expect(tasks.some((t) => t.mode === 'agent-only')).toBe(true);
    expect(new Set(tasks.map((t) => t.source.format))).toEqual(new Set(['yaml', 'json']));
    expect(taskFiles('valid').some((f) => f.endsWith('.yml'))).toBe(true);
  });
});

/** The expected one-line error: a sidecar NAME.expect, or the file's first-line `# expect:` comment. */
function expected(file: string): string {
  const sidecar = `${ROOT}${dir('invalid')}/${file.replace(/\.[^.]+$/, '')}.expect`;
  if (existsSync(sidecar)) return readFileSync(sidecar, 'utf8').trim();
  const first = readFileSync(`${ROOT}${dir('invalid')}/${file}`, 'latin1').split('\n')[0]!;
  const m = /^# expect: (.+)$/.exec(first);
  if (!m) throw new Error(`${file}: no '# expect:' first line and no sidecar .expect`);
  return m[1]!;
}

describe('fixtures/tasks/invalid', () => {
  it.each(taskFiles('invalid'))('%s is refused with its expected one-line error', async (file) => {
    const result = await loadTaskFile(`${dir('invalid')}/${file}`, ROOT, registries);
    expect(result.ok).toBe(false);
    expect(result.tasks).toEqual([]);
    const first = result.errors[0]!;
    expect(first.severity).toBe('error');
    expect(first.code).toMatch(/^QS0\d\d$/);
    expect(located('', first).replace(/^:/, '').replace(/^ /, '')).toBe(expected(file));
    for (const e of result.errors) expect(e.message).not.toMatch(/[\r\n]/);
  });
});

describe('fixtures/tasks/lint', () => {
  it.each(taskFiles('lint'))('%s yields exactly the codes in its first line', async (file) => {
    const text = readFileSync(`${ROOT}${dir('lint')}/${file}`, 'utf8');
    const want = /^# codes:(.*)$/m.exec(text)![1]!.trim().split(/\s+/).filter(Boolean).sort();
    const result = await loadTaskFile(`${dir('lint')}/${file}`, ROOT, registries);
    expect(result.errors).toEqual([]);
    const got = [...new Set(result.tasks.flatMap((t) => t.findings.map((f) => f.code)))].sort();
    expect(got).toEqual(want);
    for (const f of result.tasks.flatMap((t) => t.findings)) {
      expect(f.severity).not.toBe('error');
      expect(f.line, `${f.code} has a line`).toBeGreaterThan(0);
    }
  });
});
