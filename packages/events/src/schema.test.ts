import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { EVENT_DEFS } from './catalog.js';
import { renderEventsSchema, EVENTS_SCHEMA_PATH, README_PATH, VALIDATORS_PATH } from './write-schema.js';
import { renderValidators } from './gen-validators.js';
import { spliceReference } from './reference.js';
import { parseLine } from './reader.js';

const FIXTURES = fileURLToPath(new URL('../../../fixtures/events/', import.meta.url));

describe('events schema', () => {
  it('schemas/events.schema.json is generated from the catalog (run `pnpm schemas` after changing an event)', () => {
    expect(readFileSync(EVENTS_SCHEMA_PATH, 'utf8')).toBe(renderEventsSchema());
  });

  it('the precompiled validators are generated from the catalog (run `pnpm schemas`)', () => {
    expect(readFileSync(VALIDATORS_PATH, 'utf8')).toBe(renderValidators());
  });

  it('the light entry point loads neither typebox nor ajv (start-up cost of every stage)', () => {
    // walk the static import graph of the built entry: every bare package it reaches
    const seen = new Set<string>();
    const packages = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm)) {
        const spec = (m[1] ?? m[2])!;
        if (/^(?:import|export)\s+type\s/.test(m[0].trim())) continue;
        if (spec.startsWith('.')) visit(fileURLToPath(new URL(spec, `file://${file}`)));
        else packages.add(spec);
      }
    };
    visit(fileURLToPath(new URL('../dist/index.js', import.meta.url)));
    expect(seen.size).toBeGreaterThan(5);
    expect([...packages].filter((p) => /typebox|^ajv/.test(p))).toEqual([]);
  });

  it('the README events reference is generated from the catalog (run `pnpm schemas`)', () => {
    const readme = readFileSync(README_PATH, 'utf8');
    expect(spliceReference(readme)).toBe(readme);
  });

  it('every event type has a doc comment, an emitter and dotted name', () => {
    for (const def of EVENT_DEFS) {
      expect(def.doc.length, def.type).toBeGreaterThan(20);
      expect(def.emittedBy.length, def.type).toBeGreaterThan(0);
    }
    expect(new Set(EVENT_DEFS.map((d) => d.type)).size).toBe(EVENT_DEFS.length);
  });

  it('every event type has an example in fixtures/events, and every example is a known type', () => {
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));
    const types = EVENT_DEFS.map((d) => d.type).sort();
    expect(files.map((f) => f.replace(/\.json$/, '')).sort()).toEqual(types);
  });

  it('every example validates, both through the reader and through the published JSON Schema', () => {
    const ajv = new Ajv({ strict: false });
    addFormatsModule.default(ajv);
    const validate = ajv.compile(JSON.parse(renderEventsSchema()));
    for (const def of EVENT_DEFS) {
      const raw = readFileSync(`${FIXTURES}${def.type}.json`, 'utf8');
      const event = JSON.parse(raw);
      expect(event.type).toBe(def.type);
      expect(parseLine(JSON.stringify(event), 1, 'fixture').known).toBe(true);
      expect(validate(event), `${def.type}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it('the published schema rejects a known type with a broken payload but accepts unknown types', () => {
    const ajv = new Ajv({ strict: false });
    addFormatsModule.default(ajv);
    const validate = ajv.compile(JSON.parse(renderEventsSchema()));
    const envelope = { v: 1, ts: '2026-01-01T00:00:00.000Z', run_id: 'r', stage: 's' };
    expect(validate({ ...envelope, type: 'diagnostic', severity: 'loud' })).toBe(false);
    expect(validate({ ...envelope, type: 'some.future_event', anything: true })).toBe(true);
  });
});
