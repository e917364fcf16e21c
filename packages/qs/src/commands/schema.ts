// `qs schema [NAME]`: prints one of the repository's JSON Schemas (the task format by default) for editors and CI.
import { parseArgs, QsExit, UsageError } from '@quickloop/cli-kit';
import type { Command } from '../command.js';
import { SCHEMAS } from '../examples/schemas.generated.js';
import { VERSION } from '../version.js';

export const schema: Command = {
  name: 'schema',
  summary: 'Print a JSON Schema: task (default), task-enforced, events, loop or loop-resolved',
  async run(argv, io) {
    const names = Object.keys(SCHEMAS);
    const args = parseArgs(argv, { name: 'qs schema', version: VERSION, usage: `$0 [${names.join('|')}]`, out: io.stdout, positionals: 1 }, (y) => y);
    const name = String(args._[0] ?? 'task');
    const text = SCHEMAS[name];
    if (text === undefined) throw new UsageError(`qs schema: no schema named '${name}'; available: ${names.join(', ')}`);
    // Verbatim, even where a seed ends without a newline: the output's hash is the published file's.
    io.stdout.write(text);
    return QsExit.passed;
  },
};
