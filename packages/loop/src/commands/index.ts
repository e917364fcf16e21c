// Every `loop` subcommand, in the order `loop --help` lists them.
import type { LoopCommand } from '../command.js';
import { compileCommand } from './compile.js';
import { gateCommand } from './gate.js';
import { lintCommand } from './lint.js';
import { runCommand } from './run.js';

export const COMMANDS: readonly LoopCommand[] = [compileCommand, lintCommand, runCommand, gateCommand];
