// `pnpm schemas`: regenerates schemas/task.enforced.schema.json and its compiled validator (tests fail when either drifts).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ENFORCED_SCHEMA_PATH, renderEnforcedSchema } from './schema.js';
import { VALIDATOR_PATH, renderValidator } from './validator-source.js';

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(ENFORCED_SCHEMA_PATH, renderEnforcedSchema());
  writeFileSync(VALIDATOR_PATH, renderValidator());
  process.stderr.write(`wrote ${ENFORCED_SCHEMA_PATH} and ${VALIDATOR_PATH}\n`);
}
