// Public surface of @quickloop/loop-gate: the binary (one gate round). The engine it runs on is @quickloop/loop-engine.
export { run, gateName, type RunOptions } from './run.js';
export { cli, main } from './cli.js';
