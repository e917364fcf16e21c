// `pnpm schemas`: regenerates schemas/events.schema.json from the catalog (a test fails when it drifts).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { eventsJsonSchema } from './schema.js';

export const EVENTS_SCHEMA_PATH = fileURLToPath(new URL('../../../schemas/events.schema.json', import.meta.url));

export function renderEventsSchema(): string {
  return `${JSON.stringify(eventsJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(EVENTS_SCHEMA_PATH, renderEventsSchema());
  process.stderr.write(`wrote ${EVENTS_SCHEMA_PATH}\n`);
}
