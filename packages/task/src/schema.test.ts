// The seed stays verbatim, the enforced schema differs from it only in `success`, and the published copy never drifts.
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { ENFORCED_SCHEMA_PATH, SEED_SCHEMA_PATH, enforcedSchema, renderEnforcedSchema, seedSchema } from './schema.js';
import { VALIDATOR_PATH, renderValidator } from './validator-source.js';
import { PRELUDE_MODULE_PATH, renderPreludeModule } from './prelude-source.js';

const compile = (schema: object) => {
  const ajv = new Ajv({ strict: false });
  addFormatsModule.default(ajv, ['uri']);
  return ajv.compile(schema);
};

const task = (success: object) => ({ name: 't', goal: 'g', docs: { path: ['https://docs.example.com/'] }, success });

describe('task schemas', () => {
  it('schemas/task.enforced.schema.json is exactly what the code generates (run `pnpm schemas` after a change)', () => {
    expect(readFileSync(ENFORCED_SCHEMA_PATH, 'utf8')).toBe(renderEnforcedSchema());
  });

  it('src/task-validator.generated.ts is the enforced schema compiled now (run `pnpm schemas` after a change)', () => {
    expect(readFileSync(VALIDATOR_PATH, 'utf8')).toBe(renderValidator());
  });

  it('the embedded check prelude is prelude.sh (run `pnpm schemas` after editing it)', () => {
    expect(readFileSync(PRELUDE_MODULE_PATH, 'utf8')).toBe(renderPreludeModule());
  });

  it('differs from the seed only by one more success.anyOf branch', () => {
    const seed = seedSchema();
    const enforced = enforcedSchema();
    const strip = (s: Record<string, any>) => {
      const copy = structuredClone(s);
      delete copy.properties.success.anyOf;
      return copy;
    };
    expect(strip(enforced)).toEqual(strip(seed));
    const seedBranches = seed.properties as Record<string, any>;
    const branches = (enforced.properties as Record<string, any>).success.anyOf as unknown[];
    expect(branches.slice(0, -1)).toEqual(seedBranches.success.anyOf);
    expect(branches).toHaveLength(seedBranches.success.anyOf.length + 1);
  });

  it('the seed file is untouched JSON with the draft-07 $schema', () => {
    const text = readFileSync(SEED_SCHEMA_PATH, 'utf8');
    expect(JSON.parse(text).$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(seedSchema()).toEqual(JSON.parse(text));
  });

  it('accepts declarative-only success blocks the seed rejects, and nothing else the seed rejects', () => {
    const seed = compile(seedSchema());
    const enforced = compile(enforcedSchema());
    const declarative = [
      { expect_output: { contains: 'hi' } },
      { wait_http: { url: 'http://127.0.0.1:8000/' } },
      { serve: 'python3 -m http.server $QS_PORT', wait_http: { path: '/' } },
      { serve: 'x', expect_output: { matches: 'y' } },
    ];
    for (const s of declarative) {
      expect(seed(task(s)), JSON.stringify(s)).toBe(false);
      expect(enforced(task(s)), JSON.stringify(s)).toBe(true);
    }
    const stillInvalid = [{}, { serve: 'x' }, { script: 'a', file: 'b' }, { script: 'a', file: 'b', wait_http: { path: '/' } }, { file: 'b', script: 'a', expect_output: { contains: 'x' } }];
    for (const s of stillInvalid) {
      expect(seed(task(s)), JSON.stringify(s)).toBe(false);
      expect(enforced(task(s)), JSON.stringify(s)).toBe(false);
    }
    for (const s of [{ script: 'a' }, { file: 'f.sh' }, { script: 'a', serve: 'b', wait_http: { path: '/' } }]) {
      expect(seed(task(s))).toBe(true);
      expect(enforced(task(s))).toBe(true);
    }
  });
});
