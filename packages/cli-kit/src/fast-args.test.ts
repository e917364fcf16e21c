import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { parseArgs } from './args.js';
import { fastFlagsOf, helpText, parseFast, type FastFlag } from './fast-args.js';

const FLAGS: Record<string, FastFlag> = {
  strict: { type: 'boolean' },
  'allow-registry': { type: 'string', multiple: true },
  base: { type: 'string' },
};

/** The same flags through yargs, the way a binary declares them. */
function viaYargs(argv: string[]): Record<string, unknown> {
  const out = new PassThrough();
  const a = parseArgs(argv, { name: 't', version: '1', usage: '$0', out, positionals: Infinity }, (y) =>
    y
      .parserConfiguration({ 'parse-numbers': false, 'parse-positional-numbers': false, 'duplicate-arguments-array': true, 'greedy-arrays': false })
      .option('strict', { type: 'boolean', default: false })
      .option('allow-registry', { type: 'string', array: true, default: [] as string[] })
      .option('base', { type: 'string' }),
  );
  return { _: a._.map(String), quiet: a.quiet, verbose: a.verbose, strict: a.strict, 'allow-registry': a['allow-registry'], ...(a.base !== undefined ? { base: a.base } : {}) };
}

describe('parseFast', () => {
  it.each([
    [['a.yaml', 'b.yaml']],
    [['-']],
    [['--strict', '-q', 'x']],
    [['--allow-registry', 'r1.test', '--allow-registry=r2.test', 'x']],
    [['-v', '--base', '/tmp/b', 'x', '--', '--not-a-flag']],
    [[]],
  ])('decides %j exactly as yargs would', (argv) => {
    const fast = parseFast(argv, FLAGS);
    expect(fast).toBeDefined();
    expect(fast).toEqual(viaYargs(argv));
  });

  it.each([[['--help']], [['-h']], [['--version']], [['--nope']], [['--strict=yes']], [['-q', '-v']], [['--base']], [['--checkUrls']]])(
    'leaves %j to yargs (help, version, errors, spellings it does not know)',
    (argv) => {
      expect(parseFast(argv, FLAGS)).toBeUndefined();
    },
  );
});

describe('helpText', () => {
  it('lists every flag once, with its default, then the shared flags', () => {
    const text = helpText('x', '$0 SPEC\n\nDoes x.', {
      retries: { type: 'string', default: '2', describe: 'Extra attempts' },
      id: { type: 'string', multiple: true, describe: 'An id' },
      dry: { type: 'boolean', short: 'n', describe: 'Do nothing' },
    });
    expect(text.startsWith('x SPEC\n\nDoes x.\n\nOptions:\n')).toBe(true);
    expect(text).toMatch(/^ {6}--retries VALUE +Extra attempts \[default: 2\]$/m);
    expect(text).toMatch(/^ {6}--id VALUE \(repeatable\) +An id$/m);
    expect(text).toMatch(/^ {2}-n, --dry +Do nothing$/m);
    for (const shared of ['--quiet', '--verbose', '--help', '--version']) expect(text).toContain(shared);
    expect(fastFlagsOf({ dry: { type: 'boolean', short: 'n', describe: 'd' } })).toEqual({ dry: { type: 'boolean', short: 'n' } });
  });
});
