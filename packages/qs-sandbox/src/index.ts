// @quickloop/qs-sandbox: the stage as a function, for `qs run` and tests.
export { run, STAGE, type SandboxStageOptions } from './run.js';
export { cli, main, VERSION } from './cli.js';
