// Every `qs` subcommand; a new one (check, report, init, doctor, examples, schema) is a file here and a line below.
import type { Command } from '../command.js';
import { diff } from './diff.js';
import { results } from './results.js';
import { run } from './run.js';
import { show } from './show.js';

export const COMMANDS: readonly Command[] = [run, results, diff, show];
