// `qs diff BEFORE AFTER`: two sweeps' pass rates compared task by task with Fisher's exact test.
import { resolve } from 'node:path';
import { InputError, parseArgs, QsExit, terminalSafe } from '@quickloop/cli-kit';
import type { Command } from '../command.js';
import { compare, diffText } from '../results/diff.js';
import { loadResults } from '../results/load.js';
import { VERSION } from '../version.js';

export const diff: Command = {
  name: 'diff',
  summary: 'Compare two results (results.json files or --out folders): per-task exact test, intervals, regressions',
  async run(argv, io) {
    const args = parseArgs(argv, { name: 'qs diff', version: VERSION, usage: '$0 BEFORE AFTER [--fail-on-regression] [--json] [--allow-different]', out: io.stdout, positionals: 2 }, (y) =>
      y
        .option('fail-on-regression', { type: 'boolean', default: false, describe: 'Exit 1 when any task regressed significantly' })
        .option('json', { type: 'boolean', default: false, describe: 'Print the whole comparison as JSON (p-values at full precision)' })
        .option('allow-different', { type: 'boolean', default: false, describe: 'Compare tasks served by different agents or models anyway' }),
    );
    const [before, after] = args._.map(String);
    if (before === undefined || after === undefined) throw new InputError('qs diff: name two results (BEFORE AFTER): results.json files or qs run --out folders');
    const b = await loadResults(resolve(io.cwd, before), before, VERSION);
    const a = await loadResults(resolve(io.cwd, after), after, VERSION);
    // Tasks are paired by name: a name twice on one side would pair one of them silently.
    for (const [r, shown] of [[b, before], [a, after]] as const) {
      const seen = new Map<string, number>();
      for (const [i, t] of r.tasks.entries()) {
        const first = seen.get(t.task);
        if (first !== undefined) throw new InputError(`${shown}: tasks[${i}].task: ${t.task} is also tasks[${first}] (qs diff pairs tasks by name)`);
        seen.set(t.task, i);
      }
    }
    const c = compare(b, a, args['allow-different']);
    // Names, agents and pages come from the documents: shown, never acted on by the terminal.
    io.stdout.write(args.json ? `${JSON.stringify(c, null, 2)}\n` : terminalSafe(diffText(c), 'block'));
    const refused = c.tasks.filter((t) => t.verdict === 'not_comparable');
    if (refused.length > 0) {
      io.stderr.write(`qs diff: not comparable (different agent or model): ${terminalSafe(refused.map((t) => `${t.task} (${t.not_comparable})`).join('; '))}; --allow-different compares them anyway\n`);
      return QsExit.usage;
    }
    if (c.regressions.length > 0) io.stderr.write(`qs diff: regressed: ${terminalSafe(c.regressions.join(', '))}\n`);
    return args['fail-on-regression'] && c.regressions.length > 0 ? QsExit.docsGap : QsExit.passed;
  },
};
