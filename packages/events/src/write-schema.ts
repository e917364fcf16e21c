// `pnpm schemas`: regenerates schemas/events.schema.json, the precompiled validators and the README's
// events reference from the catalog (tests fail when any of them drifts).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { spliceReference } from './reference.js';
import { eventsJsonSchema } from './json-schema.js';
import { renderValidators } from './gen-validators.js';

export const EVENTS_SCHEMA_PATH = fileURLToPath(new URL('../../../schemas/events.schema.json', import.meta.url));
export const VALIDATORS_PATH = fileURLToPath(new URL('../src/validators.generated.ts', import.meta.url));
export const README_PATH = fileURLToPath(new URL('../../../README.md', import.meta.url));

export function renderEventsSchema(): string {
  return `${JSON.stringify(eventsJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(EVENTS_SCHEMA_PATH, renderEventsSchema());
  writeFileSync(VALIDATORS_PATH, renderValidators());
  writeFileSync(README_PATH, spliceReference(readFileSync(README_PATH, 'utf8')));
  process.stderr.write(`wrote ${EVENTS_SCHEMA_PATH}, ${VALIDATORS_PATH} and the events reference in ${README_PATH}\n`);
}
