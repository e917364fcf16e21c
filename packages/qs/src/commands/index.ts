// Every `qs` subcommand; a new one (check, report, diff, init, doctor, examples, schema) is a file here and a line below.
import type { Command } from '../command.js';
import { run } from './run.js';
import { show } from './show.js';

export const COMMANDS: readonly Command[] = [run, show];
