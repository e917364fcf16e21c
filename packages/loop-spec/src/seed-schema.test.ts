// Specs valid under the seed schema (schemas/loop.schema.json, verbatim) compile; the schema is checked with ajv.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { compileSpec } from './compile.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const schema = JSON.parse(readFileSync(join(ROOT, 'schemas/loop.schema.json'), 'utf8')) as object;
const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);

// The fixtures written to the seed schema's letter (every gate with when/members/criteria/max_revisions, a workspace).
// bug-hunt is left out on purpose: its string checks (shlex-split after substitution) are outside the schema, as in Looper's own template.
const SCHEMA_VALID = ['typical', 'security-scan', 'code-review', 'docs-sync', 'research-synthesis'];

describe('seed schema', () => {
  it.each(SCHEMA_VALID)('%s is valid under the seed schema and compiles', (name) => {
    const text = readFileSync(join(ROOT, 'fixtures/loops/valid', name, 'loop.yaml'), 'utf8');
    const ok = validate(parse(text));
    expect(validate.errors ?? [], name).toEqual([]);
    expect(ok).toBe(true);
    const { resolved } = compileSpec(text, { path: `/loops/${name}/loop.yaml` });
    expect(resolved.version).toBe(1);
  });

  it('Looper\'s newer fields (criterion and context-source timeout_sec, budget usd/tokens) pass through', () => {
    const { resolved } = compileSpec(readFileSync(join(ROOT, 'fixtures/loops/valid/security-scan/loop.yaml'), 'utf8'), { path: '/l/loop.yaml' });
    expect(resolved.goal.context_sources[0]).toMatchObject({ timeout_sec: 300 });
    expect(resolved.criteria_by_id['scan-ran']).toMatchObject({ timeout_sec: 600 });
    expect(resolved.loop_control.budget).toEqual({ usd: 5, wall_clock_min: 30 });
  });
});
