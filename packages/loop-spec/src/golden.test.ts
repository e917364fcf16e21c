// Golden tests over fixtures/loops: valid specs compile byte for byte, invalid ones fail with their
// `# expect:` text, lint cases report exactly their `# expect:` rule ids in order.
// QUICKLOOP_UPDATE_GOLDEN=1 rewrites the valid goldens (then review the diff).
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileSpec, lintSpecText } from './compile.js';
import { LINT_RULES } from './lint.js';
import { pyJsonLoads } from './py-json.js';
import { toPlain } from './py.js';
import { SpecError } from './errors.js';

const LOOPS = resolve(import.meta.dirname, '../../../fixtures/loops');
const NOW = new Date('2026-01-01T00:00:00Z');
const UPDATE = process.env.QUICKLOOP_UPDATE_GOLDEN === '1';
const list = (dir: string): string[] => readdirSync(join(LOOPS, dir)).sort();
const expectLine = (text: string): string => {
  const first = text.split('\n')[0] ?? '';
  if (!first.startsWith('# expect: ')) throw new Error(`fixture lacks a "# expect:" first line: ${first}`);
  return first.slice('# expect: '.length);
};

describe('valid specs compile to their goldens', () => {
  const names = list('valid');
  it('has the pattern-library shapes and the edge cases', () => {
    expect(names).toEqual(expect.arrayContaining(['bug-hunt', 'code-review', 'docs-sync', 'research-synthesis', 'security-scan', 'typical', 'minimal', 'nulls-and-strings']));
  });

  it.each(names)('%s', (name) => {
    const dir = join(LOOPS, 'valid', name);
    // A fixed source path and clock: the goldens must not depend on the machine or the day.
    const result = compileSpec(readFileSync(join(dir, 'loop.yaml'), 'utf8'), { path: `/loops/${name}/loop.yaml`, now: NOW });
    const outputs: [string, string][] = [
      ['loop.resolved.json', result.json],
      ['LOOP.md', result.loopMd],
      ['RUN_IN_SESSION.md', result.runInSessionMd],
    ];
    for (const [file, text] of outputs) {
      const golden = join(dir, file);
      if (UPDATE) writeFileSync(golden, text);
      expect(existsSync(golden), `${name}/${file} is missing: run with QUICKLOOP_UPDATE_GOLDEN=1 and review it`).toBe(true);
      expect(text, `${name}/${file}`).toBe(readFileSync(golden, 'utf8'));
    }
    // Read back as Python's json reads it (the loader's way): `.inf` is written Infinity, which JSON.parse refuses.
    expect(toPlain(pyJsonLoads(result.json))).toEqual(result.resolved);
    expect(lintSpecText(readFileSync(join(dir, 'loop.yaml'), 'utf8'), { path: `/loops/${name}/loop.yaml` }).errors).toBe(0);
  });
});

describe('invalid specs fail with their expected message', () => {
  it.each(list('invalid'))('%s', (file) => {
    const text = readFileSync(join(LOOPS, 'invalid', file), 'utf8');
    const expected = expectLine(text);
    let caught: unknown;
    try {
      compileSpec(text, { path: `/loops/invalid/${file}`, now: NOW });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SpecError);
    expect((caught as SpecError).text).toContain(expected);
  });
});

describe('lint cases report exactly their expected rules', () => {
  it.each(list('lint'))('%s', (file) => {
    const text = readFileSync(join(LOOPS, 'lint', file), 'utf8');
    const expected = expectLine(text);
    const ids = lintSpecText(text, { path: `/loops/lint/${file}` }).findings.map((f) => f.check);
    expect(ids.length > 0 ? ids.join(', ') : '(none)').toBe(expected);
  });
});

describe('coverage of the fixtures', () => {
  it('every lint rule fires in at least one lint fixture', () => {
    const fired = new Set<string>();
    for (const file of list('lint')) {
      for (const f of lintSpecText(readFileSync(join(LOOPS, 'lint', file), 'utf8'), { path: `/loops/lint/${file}` }).findings) fired.add(f.check);
    }
    expect(LINT_RULES.map((r) => r.id).filter((id) => !fired.has(id))).toEqual([]);
  });

  it('a pattern compiles with its placeholders named, and without them once they are filled in', () => {
    const text = readFileSync(join(LOOPS, 'valid/code-review/loop.yaml'), 'utf8');
    expect(compileSpec(text, { path: '/l/loop.yaml' }).placeholders).toEqual(['{{BASE_BRANCH}}', '{{BRANCH}}', '{{REPO_DIR}}']);
    const filled = text.replaceAll('{{BASE_BRANCH}}', 'main').replaceAll('{{BRANCH}}', 'feature/x').replaceAll('{{REPO_DIR}}', '../repo');
    const result = compileSpec(filled, { path: '/l/loop.yaml' });
    expect(result.placeholders).toEqual([]);
    expect(lintSpecText(filled, { path: '/l/loop.yaml' }).findings.map((f) => f.check)).not.toContain('unresolved-placeholders');
  });
});
