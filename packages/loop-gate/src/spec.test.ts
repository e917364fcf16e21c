// Spec loading: every Looper-compiled fixture is accepted unchanged; the max_revisions default.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadSpec, maxRevisions } from './spec.js';

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
