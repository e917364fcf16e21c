// `loop compile SPEC [--out DIR]`: loop.resolved.json, LOOP.md and RUN_IN_SESSION.md, as Looper writes them.
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { UsageError } from '@quickloop/cli-kit/errors';
import type { Io } from '@quickloop/cli-kit/io';
import { absoluteSpecPath, compileSpec, placeholderWarningText, readSpecText } from '@quickloop/loop-spec';
import type { LoopCommand } from '../command.js';

export interface CompileCommandOptions {
  spec: string;
  /** Directory for the three files; defaults to the spec's own directory. */
  out?: string | undefined;
  /** Print loop.resolved.json on stdout and write nothing. */
  print?: boolean;
  quiet?: boolean;
  verbose?: boolean;
}

export async function compile(opts: CompileCommandOptions, io: Io): Promise<number> {
  // Two plain kinds of line, never coloured: the logger (and chalk's terminal probing) would cost a
  // sixth of the start-up budget.
  const say = (line: string): void => {
    if (!opts.quiet) io.stderr.write(`${line}\n`);
  };
  const specPath = absoluteSpecPath(resolveFrom(io.cwd, opts.spec));
  const result = compileSpec(readSpecText(specPath), { path: specPath, displayPath: opts.spec, env: io.env });
  if (result.placeholders.length > 0) say(`loop: warning: ${placeholderWarningText(result.placeholders)}`);
  if (opts.print === true) {
    io.stdout.write(result.json);
    return 0;
  }
  const dir = opts.out === undefined ? dirname(specPath) : resolveFrom(io.cwd, opts.out);
  if (opts.out !== undefined) checkOutDir(dir, opts.out);
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of [
    ['loop.resolved.json', result.json],
    ['LOOP.md', result.loopMd],
    ['RUN_IN_SESSION.md', result.runInSessionMd],
  ] as const) {
    const target = join(dir, name);
    writeFileSync(target, text, 'utf8');
    say(`Wrote ${target}`);
  }
  return 0;
}

/**
 * `--out` names a directory. Looper's `--out` names the JSON file, so `--out loop.resolved.json` from a
 * Looper habit would otherwise become a directory of that name; an existing file would fail in mkdir.
 */
function checkOutDir(dir: string, given: string): void {
  let isDir: boolean | undefined;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    isDir = undefined;
  }
  if (isDir === false) throw new UsageError(`--out ${given} is a file; --out names the directory for loop.resolved.json, LOOP.md and RUN_IN_SESSION.md`);
  if (isDir === undefined && given.endsWith('.json')) {
    throw new UsageError(`--out names a directory, not the JSON file (got '${given}'); loop compile writes DIR/loop.resolved.json, DIR/LOOP.md and DIR/RUN_IN_SESSION.md`);
  }
}

function resolveFrom(cwd: string, path: string): string {
  return path.startsWith('/') ? path : join(cwd, path);
}

export const compileCommand: LoopCommand = {
  name: 'compile',
  summary: 'Compile loop.yaml to loop.resolved.json, LOOP.md and RUN_IN_SESSION.md',
  synopsis: 'loop compile SPEC [--out DIR | --print]',
  positionals: { min: 1, max: 1, names: 'SPEC' },
  fastFlags: { out: { type: 'string', short: 'o' }, print: { type: 'boolean' } },
  configure: (y) =>
    y
      .option('out', { alias: 'o', type: 'string', describe: "Directory to write into (default: the spec's own)" })
      .option('print', { type: 'boolean', describe: 'Print loop.resolved.json to stdout; write nothing' }),
  run: (args, io) => {
    // Checked here: yargs' conflicts() counts a boolean's default as given.
    if (args.print === true && typeof args.out === 'string') throw new UsageError('--print and --out cannot be used together (see loop compile --help)');
    return compile(
      {
        spec: args.positionals[0] as string,
        out: typeof args.out === 'string' ? args.out : undefined,
        print: args.print === true,
        quiet: args.quiet === true,
        verbose: args.verbose === true,
      },
      io,
    );
  },
};
