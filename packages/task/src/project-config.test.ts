import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTaskFile } from './load.js';
import { findProjectConfig, loadProjectConfig, mergeUnder } from './project-config.js';

const dir = mkdtempSync(join(tmpdir(), 'qs-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const config = (text: string, name = 'quickloop.yaml') => {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
};
const TASK = `name: t
goal: Greet.
docs:
  entrypoint: https://docs.example.test/
budgets:
  max_turns: 5
success:
  script: 'true'
`;

describe('quickloop.yaml', () => {
  it('is found from a subfolder upward, and not at all where there is none', () => {
    const file = config('run:\n  workers: 2\n');
    mkdirSync(join(dir, 'a', 'b'), { recursive: true });
    expect(findProjectConfig(join(dir, 'a', 'b'))).toBe(file);
    rmSync(file);
    const lone = mkdtempSync(join(tmpdir(), 'qs-noconfig-'));
    expect(findProjectConfig(lone)).toBe(findProjectConfig('/'));
    rmSync(lone, { recursive: true });
  });

  it('reads run settings typed, paths relative to the file', () => {
    const file = config('run:\n  backend: bwrap\n  workers: 3\n  out: results\n  docs_map: https://d.test/=site\n  keep_sandbox: true\n  rate_limit: 0.5\n  install_cache: .qs-install\n');
    const c = loadProjectConfig(file, dir);
    expect(c.run).toEqual({ backend: 'bwrap', workers: 3, out: join(dir, 'results'), docs_map: [`https://d.test/=${join(dir, 'site')}`], keep_sandbox: true, rate_limit: 0.5, install_cache: join(dir, '.qs-install') });
    expect(c.display).toBe('quickloop.yaml');
    expect(c.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses, naming file, line and column, what would change a result or is not a setting', () => {
    const cases: Array<[string, string]> = [
      ['run:\n  model: gpt-5\n', 'quickloop.yaml:2:3: run.model: settings that change what a result means stay on the command line (--model)'],
      ['run:\n  max_spend: 5\n', 'quickloop.yaml:2:3: run.max_spend: settings that change what a result means stay on the command line (--max-spend)'],
      ['run:\n  repeat: 3\n', 'quickloop.yaml:2:3: run.repeat: settings that change what a result means stay on the command line (--repeat)'],
      ['run:\n  allow_unenforced: true\n', 'quickloop.yaml:2:3: run.allow_unenforced: settings that change what a result means'],
      ['run:\n  wrokers: 2\n', 'quickloop.yaml:2:3: run.wrokers: unknown setting'],
      ['run:\n  strict-inconclusive: true\n', 'quickloop.yaml:2:3: run.strict-inconclusive: settings that change what a result means stay on the command line (--strict-inconclusive)'],
      ['run:\n  keep-sandbox: true\n', 'quickloop.yaml:2:3: run.keep-sandbox: unknown setting; the file spells it keep_sandbox (known: '],
      ['run:\n  workers: two\n', 'quickloop.yaml:2:12: run.workers: must be a whole number from 1 to 64'],
      ['run:\n  backend: docker\n', 'quickloop.yaml:2:12: run.backend: must be auto, bwrap or local'],
      ['runs:\n  workers: 2\n', "quickloop.yaml:1:1: unknown key 'runs' (the keys are run and tasks)"],
      ['- 1\n', 'quickloop.yaml:1:1: the top level must be a mapping'],
      ['run: [1\n', 'quickloop.yaml:'],
    ];
    for (const [text, message] of cases) expect(() => loadProjectConfig(config(text), dir), text).toThrow(message);
  });

  it('merges tasks: under each task: the task wins, mappings merge, lists replace', () => {
    expect(mergeUnder({ budgets: { max_turns: 9, max_seconds: 60 }, setup: ['a'] }, { budgets: { max_turns: 5 }, setup: ['b'] })).toEqual({ budgets: { max_turns: 5, max_seconds: 60 }, setup: ['b'] });
  });

  it('merges into a loaded task, records the config, and blames the config for its own bad field', async () => {
    writeFileSync(join(dir, 't.yaml'), TASK);
    const defaults = (tasks: Record<string, unknown>) => ({ tasks, display: 'quickloop.yaml', path: join(dir, 'quickloop.yaml'), sha256: 'a'.repeat(64) });
    const ok = await loadTaskFile('t.yaml', dir, { registries: [], defaults: defaults({ budgets: { max_seconds: 77, max_turns: 40 }, network: { allow: ['example.org'] } }) });
    expect(ok.ok).toBe(true);
    const p = ok.tasks[0]!.payload;
    expect(p.task.budgets).toMatchObject({ max_turns: 5, max_seconds: 77 });
    expect(p.policy.explicit).toContain('example.org');
    expect(p.source.config).toEqual({ path: join(dir, 'quickloop.yaml'), sha256: 'a'.repeat(64) });
    const bad = await loadTaskFile('t.yaml', dir, { registries: [], defaults: defaults({ budgets: { max_seconds: 'lots' } }) });
    expect(bad.ok).toBe(false);
    expect(bad.errors[0]?.message).toContain('(set in quickloop.yaml tasks: budgets.max_seconds)');
    expect(bad.errors[0]?.line).toBeUndefined();
  });
});
