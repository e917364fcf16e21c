// `qs examples`: the bundled tasks that run offline, with the command that runs each.
import { parseArgs, QsExit } from '@quickloop/cli-kit';
import type { Command } from '../command.js';
import { EXAMPLES } from '../examples/examples.js';
import { VERSION } from '../version.js';

export const examples: Command = {
  name: 'examples',
  summary: 'List the bundled example tasks (they run offline: qs run --example NAME)',
  async run(argv, io) {
    parseArgs(argv, { name: 'qs examples', version: VERSION, usage: '$0', out: io.stdout, positionals: 0 }, (y) => y);
    for (const e of EXAMPLES) {
      io.stdout.write(`${e.name}  ${e.route[0] ?? ''}  (${e.mode}) — ${e.summary}\n`);
      for (const p of e.route.slice(1)) io.stdout.write(`    then ${p}\n`);
    }
    io.stdout.write(`\nrun one:  qs run --example ${EXAMPLES[0]?.name ?? 'NAME'}\n`);
    return QsExit.passed;
  },
};
