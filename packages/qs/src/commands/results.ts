// `qs results DIR`: results.json rebuilt from the attempts' saved streams alone.
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InputError, parseArgs, QsExit } from '@quickloop/cli-kit';
import type { Command } from '../command.js';
import { serialiseResults } from '../results/fold.js';
import { checkReportPaths } from '../results/publish.js';
import { resultsFromDir } from '../results/load.js';
import { junitXml, summaryMarkdown } from '../results/reports.js';
import { VERSION } from '../version.js';

export const results: Command = {
  name: 'results',
  summary: 'Rebuild results.json (and JUnit, the summary) from the streams a `qs run --out DIR` saved',
  async run(argv, io) {
    const args = parseArgs(argv, { name: 'qs results', version: VERSION, usage: '$0 DIR [--write] [--junit FILE] [--summary FILE]', out: io.stdout, positionals: 1 }, (y) =>
      y
        .option('write', { type: 'boolean', default: false, describe: 'Write DIR/results.json instead of printing it' })
        .option('junit', { type: 'string', describe: 'Also write JUnit XML here' })
        .option('summary', { type: 'string', describe: 'Also write the Markdown summary here' }),
    );
    const dir = String(args._[0] ?? '');
    if (dir === '') throw new InputError('qs results: name the folder a `qs run --out DIR` wrote');
    // Checked before the fold, so nothing is printed or written when a report cannot be.
    checkReportPaths({ junit: args.junit, summary: args.summary }, io.cwd, 'qs results');
    const own = resolve(io.cwd, dir, 'results.json');
    if (args.write && existsSync(own) && statSync(own).isDirectory()) throw new InputError(`qs results: ${join(dir, 'results.json')}: is a folder, not a file`);
    const doc = await resultsFromDir(resolve(io.cwd, dir), VERSION, dir);
    const text = serialiseResults(doc);
    if (args.write) writeFileSync(resolve(io.cwd, dir, 'results.json'), text);
    else io.stdout.write(text);
    if (args.junit !== undefined) writeFileSync(resolve(io.cwd, String(args.junit)), junitXml(doc));
    if (args.summary !== undefined) writeFileSync(resolve(io.cwd, String(args.summary)), summaryMarkdown(doc));
    return QsExit.passed;
  },
};
