// @quickloop/loop as a library: the subcommands, for `qs`-style compositions and tests.
export { run, reportLoopError, type LoopOptions } from './run.js';
export { cli } from './cli.js';
export { COMMANDS } from './commands/index.js';
export type { LoopCommand, CommandEntry } from './command.js';
export { compile, type CompileCommandOptions } from './commands/compile.js';
export { lint, type LintCommandOptions } from './commands/lint.js';
