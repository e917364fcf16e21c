// schemas/loop.resolved.schema.json is generated (drift fails here) and every compiled spec satisfies it.
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { compileSpec } from './compile.js';
import { pyJsonLoads } from './py-json.js';
import { toPlain } from './py.js';
import { resolvedJsonSchema } from './resolved-schema.js';
import { RESOLVED_SCHEMA_PATH, renderResolvedSchema } from './write-schema.js';

const VALID = resolve(import.meta.dirname, '../../../fixtures/loops/valid');
const validate = new Ajv2020({ allErrors: true, strict: false }).compile(resolvedJsonSchema());

describe('loop.resolved.schema.json', () => {
  it('is what resolved-schema.ts renders (run `pnpm schemas` after changing it)', () => {
    expect(readFileSync(RESOLVED_SCHEMA_PATH, 'utf8')).toBe(renderResolvedSchema());
  });

  it.each(readdirSync(VALID).sort())('the golden %s/loop.resolved.json satisfies it', (name) => {
    // Python's json, as the loader reads it: `.inf` is written Infinity.
    const ok = validate(toPlain(pyJsonLoads(readFileSync(join(VALID, name, 'loop.resolved.json'), 'utf8'))));
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('rejects a resolved spec missing a default the compiler always writes', () => {
    const { resolved } = compileSpec(readFileSync(join(VALID, 'typical/loop.yaml'), 'utf8'), { path: '/l/loop.yaml' });
    const broken = structuredClone(resolved) as unknown as Record<string, any>;
    delete broken.host.timeout_sec;
    delete broken.loop_control.no_progress.action;
    broken.workspace.dir = '../out';
    expect(validate(broken)).toBe(false);
    expect((validate.errors ?? []).map((e) => e.instancePath).sort()).toEqual(
      expect.arrayContaining(['/host', '/loop_control/no_progress', '/workspace/dir']),
    );
  });
});
