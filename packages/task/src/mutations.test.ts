// Seeded mutations of the valid fixtures: whatever a task file holds, loading never throws and never passes a broken task silently.
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadSource } from './load.js';
import type { Source } from './source.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const VALID = `${ROOT}fixtures/tasks/valid/`;

/** mulberry32: a fixed seed gives the same mutations on every run. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ODD_VALUES: unknown[] = [null, '', ' ', 0, -1, 1.5, 1e300, true, [], {}, [null], ['x', 3], { a: { b: [] } }, 'x'.repeat(5000), '\u0000\u202e', 'https://', '../../x', '$(rm -rf /)'];

function mutate(value: unknown, random: () => number): unknown {
  if (Array.isArray(value)) {
    const copy = [...value];
    const r = random();
    if (copy.length > 0 && r < 0.3) copy.splice(Math.floor(random() * copy.length), 1);
    else if (copy.length > 0 && r < 0.7) copy[Math.floor(random() * copy.length)] = mutate(copy[Math.floor(random() * copy.length)], random);
    else copy.push(ODD_VALUES[Math.floor(random() * ODD_VALUES.length)]);
    return copy;
  }
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    const r = random();
    const key = keys[Math.floor(random() * keys.length)];
    if (key !== undefined && r < 0.25) delete copy[key];
    else if (key !== undefined && r < 0.75) copy[key] = random() < 0.5 ? mutate(copy[key], random) : ODD_VALUES[Math.floor(random() * ODD_VALUES.length)];
    else copy[random() < 0.5 ? 'surprise' : (key ?? 'x')] = ODD_VALUES[Math.floor(random() * ODD_VALUES.length)];
    return copy;
  }
  return ODD_VALUES[Math.floor(random() * ODD_VALUES.length)];
}

describe('mutated tasks', () => {
  it('load without throwing, and every refusal is one line with an error code', async () => {
    const random = rng(20261130);
    const originals = readdirSync(VALID)
      .filter((f) => /\.(ya?ml|json)$/.test(f))
      .map((f) => parse(readFileSync(`${VALID}${f}`, 'utf8')) as unknown);
    let refused = 0;
    for (let i = 0; i < 400; i += 1) {
      let value = originals[i % originals.length];
      for (let k = 1 + Math.floor(random() * 3); k > 0; k -= 1) value = mutate(value, random);
      const text = JSON.stringify(value, null, 2) ?? 'null';
      const source: Source = { path: `m${i}.json`, display: `m${i}.json`, baseDir: VALID, relBaseDir: 'fixtures/tasks/valid', text, sha256: '0'.repeat(64), format: 'json' };
      const result = await loadSource({ ok: true, source }, { registries: [] });
      if (result.ok) {
        for (const t of result.tasks) expect(t.payload.task.name.length).toBeGreaterThan(0);
        continue;
      }
      refused += 1;
      expect(result.errors.length, text).toBeGreaterThan(0);
      for (const e of result.errors) {
        expect(e.code, text).toMatch(/^QS0\d\d$/);
        expect(e.message, text).not.toMatch(/[\r\n]|undefined|\[object Object\]|TypeError/);
      }
    }
    expect(refused).toBeGreaterThan(200);
  });
});
