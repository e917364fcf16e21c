// `pnpm schemas`: regenerates schemas/task.enforced.schema.json from the seed (a test fails when it drifts).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ENFORCED_SCHEMA_PATH, renderEnforcedSchema } from './schema.js';

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(ENFORCED_SCHEMA_PATH, renderEnforcedSchema());
  process.stderr.write(`wrote ${ENFORCED_SCHEMA_PATH}\n`);
}
