// loadResolved: what a runner is handed (Looper's loop.resolved.json unchanged, or loop.yaml), checked up front.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compileSpec } from './compile.js';
import { SpecError } from './errors.js';
import { compileFile, loadResolved } from './load.js';

const VALID = resolve(import.meta.dirname, '../../../fixtures/loops/valid');
let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'loop-spec-load-'));
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

function thrown(fn: () => unknown): SpecError {
  try {
    fn();
  } catch (error) {
    if (error instanceof SpecError) return error;
    throw error;
  }
  throw new Error('expected a SpecError');
}

describe('loadResolved', () => {
  it('takes a resolved JSON as written, byte for byte what the compiler produced', () => {
    const golden = readFileSync(join(VALID, 'typical/loop.resolved.json'), 'utf8');
    writeFileSync(join(tmp, 'loop.resolved.json'), golden);
    const loaded = loadResolved(join(tmp, 'loop.resolved.json'));
    expect(loaded.compiled).toBe(false);
    expect(loaded.path).toBe(join(tmp, 'loop.resolved.json'));
    expect(loaded.spec).toEqual(JSON.parse(golden));
    expect(loaded.spec.criteria_by_id['mentions-breaking']).toMatchObject({ type: 'programmatic', timeout_sec: 20, contains: '1' });
  });

  it('tolerates a UTF-8 BOM and a Windows source path, as Looper writes them', () => {
    const spec = JSON.parse(readFileSync(join(VALID, 'minimal/loop.resolved.json'), 'utf8'));
    spec.source = 'C:\\Users\\someone\\loop\\loop.yaml';
    writeFileSync(join(tmp, 'loop.resolved.json'), `\uFEFF${JSON.stringify(spec, null, 2)}\n`);
    expect(loadResolved(join(tmp, 'loop.resolved.json')).spec.source).toBe('C:\\Users\\someone\\loop\\loop.yaml');
  });

  it('compiles loop.yaml in memory and writes nothing', () => {
    const text = readFileSync(join(VALID, 'typical/loop.yaml'), 'utf8');
    writeFileSync(join(tmp, 'loop.yaml'), text);
    const now = new Date('2026-03-04T05:06:07Z');
    const loaded = loadResolved(join(tmp, 'loop.yaml'), { now });
    expect(loaded.compiled).toBe(true);
    expect(loaded.spec).toEqual(compileSpec(text, { path: join(tmp, 'loop.yaml'), now }).resolved);
    expect(loaded.spec.compiled_at).toBe('2026-03-04T05:06:07+00:00');
    expect(compileFile(join(tmp, 'loop.yaml'), { now }).json).toContain(`"source": "${join(tmp, 'loop.yaml')}"`);
  });

  it('refuses a resolved spec missing a field the runner contract requires, naming it', () => {
    const spec = JSON.parse(readFileSync(join(VALID, 'minimal/loop.resolved.json'), 'utf8'));
    delete spec.gates.delivery_gate;
    writeFileSync(join(tmp, 'loop.resolved.json'), JSON.stringify(spec));
    expect(thrown(() => loadResolved(join(tmp, 'loop.resolved.json'))).text).toBe('loop.resolved.json is missing required field: gates.delivery_gate');
    delete spec.host.invoke;
    writeFileSync(join(tmp, 'loop.resolved.json'), JSON.stringify(spec));
    expect(thrown(() => loadResolved(join(tmp, 'loop.resolved.json'))).text).toBe('loop.resolved.json is missing required field: gates.delivery_gate');
    spec.gates.delivery_gate = {};
    writeFileSync(join(tmp, 'loop.resolved.json'), JSON.stringify(spec));
    expect(thrown(() => loadResolved(join(tmp, 'loop.resolved.json'))).text).toBe('loop.resolved.json is missing required field: host.invoke');
  });

  it('reports unreadable, unparseable and non-object files in Looper\'s words', () => {
    const missing = join(tmp, 'nope.json');
    expect(thrown(() => loadResolved(missing)).text).toBe(`Could not read ${missing}: [Errno 2] No such file or directory: '${missing}'`);
    writeFileSync(join(tmp, 'bad.json'), '{"a": ');
    expect(thrown(() => loadResolved(join(tmp, 'bad.json'))).text).toMatch(/^Could not parse JSON in .*bad\.json: /);
    writeFileSync(join(tmp, 'list.json'), '[1]');
    expect(thrown(() => loadResolved(join(tmp, 'list.json'))).text).toBe(`${join(tmp, 'list.json')} must contain a JSON object`);
    writeFileSync(join(tmp, 'latin1.yaml'), Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x0a]));
    expect(thrown(() => loadResolved(join(tmp, 'latin1.yaml'))).text).toMatch(/^Could not parse YAML in .*latin1\.yaml: the file is not valid UTF-8$/);
  });
});
