// `pnpm schemas` (with the events writer): regenerates schemas/loop.resolved.schema.json from resolved-schema.ts.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { resolvedJsonSchema } from './resolved-schema.js';

export const RESOLVED_SCHEMA_PATH = fileURLToPath(new URL('../../../schemas/loop.resolved.schema.json', import.meta.url));

export function renderResolvedSchema(): string {
  return `${JSON.stringify(resolvedJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(RESOLVED_SCHEMA_PATH, renderResolvedSchema());
  process.stderr.write(`wrote ${RESOLVED_SCHEMA_PATH}\n`);
}
