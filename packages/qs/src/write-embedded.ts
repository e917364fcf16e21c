// `pnpm schemas`: regenerates what qs embeds from the repository (examples, schemas); a test fails on drift.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EXAMPLES_MODULE_PATH, renderExamplesModule, renderSchemasModule, SCHEMAS_MODULE_PATH } from './examples/source.js';

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(EXAMPLES_MODULE_PATH, renderExamplesModule());
  writeFileSync(SCHEMAS_MODULE_PATH, renderSchemasModule());
  process.stderr.write(`wrote ${EXAMPLES_MODULE_PATH} and ${SCHEMAS_MODULE_PATH}\n`);
}
