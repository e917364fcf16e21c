// Spec loading: every Looper-compiled fixture is accepted unchanged; the max_revisions default.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadSpec, maxRevisions, validateSpec } from './spec.js';

const VALID = fileURLToPath(new URL('../../../fixtures/loops/valid', import.meta.url));

describe('loadSpec', () => {
  it.each(readdirSync(VALID))('accepts the Looper-compiled %s/loop.resolved.json unchanged', (name) => {
    const loaded = loadSpec(join(VALID, name, 'loop.resolved.json'), '/');
    expect(loaded.loopDir).toBe(join(VALID, name));
    expect(loaded.compiled).toBe(false);
  });
  it('reads an absent max_revisions as the documented default of 1', () => {
    expect(maxRevisions({ members: [], criteria: [], verdict_policy: 'fixed_passes' })).toBe(1);
    expect(maxRevisions({ members: [], criteria: [], verdict_policy: 'fixed_passes', max_revisions: 0 })).toBe(0);
  });
});

describe('validateSpec on hand-written resolved specs', () => {
  const typical = (): Record<string, any> => JSON.parse(readFileSync(join(VALID, 'typical', 'loop.resolved.json'), 'utf8'));
  it.each([
    [[null], 'goal.context_sources[0] must be an object with exactly one of file or cmd'],
    [[{ file: 5 }], 'goal.context_sources[0] must be an object with exactly one of file or cmd'],
    [[{ file: 'a.md', cmd: ['ls'] }], 'goal.context_sources[0] must be an object with exactly one of file or cmd'],
    [[{ file: 'a.md' }, { cmd: 'ls -l' }], 'goal.context_sources[1].cmd must be a non-empty argv array of strings'],
    [[{ cmd: [] }], 'goal.context_sources[0].cmd must be a non-empty argv array of strings'],
  ])('refuses context_sources %j before anything runs', (sources, message) => {
    const spec = typical();
    spec.goal.context_sources = sources;
    expect(() => validateSpec(spec, 'loop.resolved.json')).toThrow(`loop.resolved.json: ${message}`);
  });
  it.each([
    ['members', 'constructor', /delivery_gate\.members references unknown council member: constructor/],
    ['criteria', 'toString', /delivery_gate\.criteria references unknown criterion: toString/],
    ['verdict_source', '__proto__', /delivery_gate\.verdict_source must be a judge member or human/],
  ])('refuses a gate %s naming %s, an id only Object.prototype has (it would be skipped unseen)', (key, id, message) => {
    const spec = typical();
    spec.gates.delivery_gate[key] = key === 'verdict_source' ? id : [...spec.gates.delivery_gate[key], id];
    expect(() => validateSpec(spec, 'loop.resolved.json')).toThrow(message);
  });
  it('refuses a verdict_source that names a reviewer (it would be asked for a verdict)', () => {
    const spec = typical();
    const judge = spec.gates.delivery_gate.verdict_source;
    spec.council_by_id[judge].role = 'reviewer';
    expect(() => validateSpec(spec, 'loop.resolved.json')).toThrow(/verdict_source must name a judge, not a reviewer/);
  });
});


describe('validateSpec takes blank as Python does (the compiler already did)', () => {
  const typical = (): Record<string, any> => JSON.parse(readFileSync(join(VALID, 'typical', 'loop.resolved.json'), 'utf8'));
  it('runs a statement that is only a BOM (str.strip keeps it) and an argv[0] with one', () => {
    const spec = typical();
    spec.goal.statement = '\ufeff';
    spec.host.invoke = ['\ufeffcodex', 'exec'];
    expect(() => validateSpec(spec, 'loop.resolved.json')).not.toThrow();
  });
  it('refuses a statement of information separators (str.strip drops them)', () => {
    const spec = typical();
    spec.goal.statement = '\x1f\x1c';
    expect(() => validateSpec(spec, 'loop.resolved.json')).toThrow('loop.resolved.json is missing required field: goal.statement');
  });
});
