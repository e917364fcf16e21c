import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { parseArgs } from './args.js';
import { parseFast, type FastFlag } from './fast-args.js';

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
