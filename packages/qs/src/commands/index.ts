// Every `qs` subcommand; a new one (report, init) is a file here and a line below.
import type { Command } from '../command.js';
import { check } from './check.js';
import { diff } from './diff.js';
import { doctor } from './doctor.js';
import { examples } from './examples.js';
import { init } from './init.js';
import { report } from './report.js';
import { merge } from './merge.js';
import { results } from './results.js';
import { run } from './run.js';
import { schema } from './schema.js';
import { show } from './show.js';
import { worker } from './worker.js';

export const COMMANDS: readonly Command[] = [run, results, diff, report, merge, show, check, init, examples, schema, doctor, worker];
