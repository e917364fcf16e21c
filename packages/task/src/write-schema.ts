// `pnpm schemas`: regenerates schemas/task.enforced.schema.json, its compiled validator and the embedded check prelude (tests fail when any drifts).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ENFORCED_SCHEMA_PATH, renderEnforcedSchema } from './schema.js';
import { VALIDATOR_PATH, renderValidator } from './validator-source.js';
import { PRELUDE_MODULE_PATH, renderPreludeModule } from './prelude-source.js';

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(ENFORCED_SCHEMA_PATH, renderEnforcedSchema());
  writeFileSync(VALIDATOR_PATH, renderValidator());
  writeFileSync(PRELUDE_MODULE_PATH, renderPreludeModule());
  process.stderr.write(`wrote ${ENFORCED_SCHEMA_PATH}, ${VALIDATOR_PATH} and ${PRELUDE_MODULE_PATH}\n`);
}
