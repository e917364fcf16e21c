// `pnpm schemas`: regenerates schemas/events.schema.json and the README's events reference from the
// catalog (tests fail when either drifts).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { spliceReference } from './reference.js';
import { eventsJsonSchema } from './schema.js';

export const EVENTS_SCHEMA_PATH = fileURLToPath(new URL('../../../schemas/events.schema.json', import.meta.url));
export const README_PATH = fileURLToPath(new URL('../../../README.md', import.meta.url));

export function renderEventsSchema(): string {
  return `${JSON.stringify(eventsJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(EVENTS_SCHEMA_PATH, renderEventsSchema());
  writeFileSync(README_PATH, spliceReference(readFileSync(README_PATH, 'utf8')));
  process.stderr.write(`wrote ${EVENTS_SCHEMA_PATH} and the events reference in ${README_PATH}\n`);
}
