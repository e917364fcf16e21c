// Every `qs` subcommand; a new one (check, report, diff, init, doctor, examples, schema) is a file here and a line below.
import type { Command } from '../command.js';
import { check } from './check.js';
import { doctor } from './doctor.js';
import { examples } from './examples.js';
import { run } from './run.js';
import { schema } from './schema.js';
import { show } from './show.js';

export const COMMANDS: readonly Command[] = [run, show, check, examples, schema, doctor];
