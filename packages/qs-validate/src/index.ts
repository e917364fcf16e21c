// qs-validate as a library: run() for tests and for `qs`, cli() for argv.
export { run, STAGE, type ValidateOptions } from './run.js';
export { cli, parseOptions, VERSION } from './cli.js';
export { resolveInputs, taskFilesIn, type Input } from './inputs.js';
export { expandGlob } from './glob.js';
