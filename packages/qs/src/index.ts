export { cli, main } from './cli.js';
export { COMMANDS } from './commands/index.js';
export type { Command } from './command.js';
export { createRenderer, type RenderOptions } from './render.js';
export { VERSION } from './version.js';
