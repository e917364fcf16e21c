// @quickloop/task: load, validate, lint and normalise task files into task.loaded payloads.
export { CODES, severityOf, type Code, type CodeInfo, type Severity } from './codes.js';
export { finding, located, oneLine, fieldPath, type Finding, type Position } from './finding.js';
export { MAX_TASK_BYTES, readSource, stdinSource, type Source, type SourceResult, type Format } from './source.js';
export { parseSource, type Parsed, type Segment } from './parse.js';
export { seedSchema, enforcedSchema, renderEnforcedSchema, schemaFindings, SEED_SCHEMA_PATH, ENFORCED_SCHEMA_PATH } from './schema.js';
export { semanticFindings, type SuccessFile } from './rules.js';
export { checkPrelude, compileSuccess, checkScript, portBase, shellQuote, crc32, PRELUDE_PATH } from './check.js';
export { normalise, BUDGET_DEFAULTS, type TaskLoadedPayload } from './normalise.js';
export { lintTask, duplicateName } from './lint.js';
export { loadTaskFile, loadTaskStdin, loadSource, type LoadOptions, type LoadedTask, type FileResult } from './load.js';
export type { RawTask, RawSuccess } from './raw.js';
export { findProjectConfig, loadProjectConfig, mergeUnder, CONFIG_NAMES, RUN_SETTINGS, type ProjectConfig, type RunSettings } from './project-config.js';
