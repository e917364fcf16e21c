// Public surface of @quickloop/loop-run: run(opts, io) for tests and the `loop run` subcommand.
export { run, type RunOptions } from './run.js';
export { cli, main } from './cli.js';
export { runLoop, type Outcome, type RunnerIo } from './runner.js';
export { loadState, writeStateAtomic, acquireLock, sortedJson, type LoopState } from './state.js';
