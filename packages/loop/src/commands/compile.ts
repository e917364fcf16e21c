// `loop compile SPEC [--out FILE.json|DIR] [--render FILE] [--session-prompt FILE]`, with Looper's meanings.
import { statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { UsageError } from '@quickloop/cli-kit/errors';
import type { Io } from '@quickloop/cli-kit/io';
import { makeDirs } from '@quickloop/cli-kit/dirs';
import { absoluteSpecPath, compileSpec, placeholderWarningText, readSpecText, type CompileResult } from '@quickloop/loop-spec';
import type { LoopCommand } from '../command.js';

export interface CompileCommandOptions {
  spec: string;
  /**
   * A path ending in `.json` (in any case; not an existing directory) is the resolved file, as in Looper; any other
   * path is the directory form: loop.resolved.json, LOOP.md and RUN_IN_SESSION.md inside it.
   */
  out?: string | undefined;
  /** LOOP.md, as Looper renders it. */
  render?: string | undefined;
  /** RUN_IN_SESSION.md, as Looper renders it. */
  sessionPrompt?: string | undefined;
  /** Print loop.resolved.json on stdout and write nothing. */
  print?: boolean;
  quiet?: boolean;
  verbose?: boolean;
}

/**
 * What goes where. Without `--out DIR`, exactly the files Looper's compile would write for the same
 * command line: loop.resolved.json (beside the spec, or at `--out FILE.json`), plus LOOP.md and
 * RUN_IN_SESSION.md only where `--render` and `--session-prompt` name them — so a Looper user's own
 * LOOP.md or RUN_IN_SESSION.md is never overwritten by a plain `loop compile`.
 */
function plan(opts: CompileCommandOptions, specPath: string, cwd: string, result: CompileResult): Array<[string, string]> {
  const files: Array<[string, string]> = [];
  let dir: string | undefined;
  if (opts.out === undefined) {
    files.push([join(dirname(specPath), 'loop.resolved.json'), result.json]);
  } else {
    const out = resolveFrom(cwd, opts.out);
    const kind = pathKind(out);
    // `.json` in any case: Looper writes whatever file it is given, X.JSON too.
    const jsonName = /\.json$/i.test(opts.out);
    if (kind === 'file' && !jsonName) {
      throw new UsageError(`--out ${opts.out} is a file; --out names the resolved JSON file (ending in .json) or a directory for loop.resolved.json, LOOP.md and RUN_IN_SESSION.md`);
    }
    if (kind !== 'dir' && jsonName) files.push([out, result.json]);
    else {
      dir = out;
      files.push([join(dir, 'loop.resolved.json'), result.json]);
    }
  }
  if (opts.render !== undefined) files.push([resolveFrom(cwd, opts.render), result.looper.loopMd]);
  else if (dir !== undefined) files.push([join(dir, 'LOOP.md'), result.loopMd]);
  if (opts.sessionPrompt !== undefined) files.push([resolveFrom(cwd, opts.sessionPrompt), result.looper.runInSessionMd]);
  else if (dir !== undefined) files.push([join(dir, 'RUN_IN_SESSION.md'), result.runInSessionMd]);
  for (const [target] of files) {
    if (pathKind(target) === 'dir') throw new UsageError(`${target} is a directory; name the file to write`);
  }
  return files;
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
  const files = plan(opts, specPath, io.cwd, result);
  for (const [target, text] of files) {
    makeDirs(dirname(target));
    writeFileSync(target, text, 'utf8');
    say(`Wrote ${target}`);
  }
  return 0;
}

function pathKind(path: string): 'dir' | 'file' | 'none' {
  try {
    return statSync(path).isDirectory() ? 'dir' : 'file';
  } catch {
    return 'none';
  }
}

function resolveFrom(cwd: string, path: string): string {
  return path.startsWith('/') ? path : join(cwd, path);
}

export const compileCommand: LoopCommand = {
  name: 'compile',
  summary: 'Compile loop.yaml to loop.resolved.json (and LOOP.md, RUN_IN_SESSION.md on request)',
  synopsis: 'loop compile SPEC [--out FILE.json|DIR] [--render FILE] [--session-prompt FILE] | --print',
  positionals: { min: 1, max: 1, names: 'SPEC' },
  fastFlags: { out: { type: 'string', short: 'o' }, render: { type: 'string' }, 'session-prompt': { type: 'string' }, print: { type: 'boolean' } },
  configure: (y) =>
    y
      .option('out', { alias: 'o', type: 'string', describe: "The resolved file (a path ending in .json), or a directory for all three files (default: loop.resolved.json beside the spec)" })
      .option('render', { type: 'string', describe: 'Also write LOOP.md here (Looper\'s text)' })
      .option('session-prompt', { type: 'string', describe: 'Also write RUN_IN_SESSION.md here (Looper\'s text)' })
      .option('print', { type: 'boolean', describe: 'Print loop.resolved.json to stdout; write nothing' }),
  run: (args, io) => {
    // Checked here: yargs' conflicts() counts a boolean's default as given.
    const sessionPrompt = args['session-prompt'] ?? args.sessionPrompt;
    if (args.print === true) {
      const given = [['--out', args.out], ['--render', args.render], ['--session-prompt', sessionPrompt]].find(([, v]) => typeof v === 'string');
      if (given) throw new UsageError(`--print and ${given[0] as string} cannot be used together (see loop compile --help)`);
    }
    return compile(
      {
        spec: args.positionals[0] as string,
        out: typeof args.out === 'string' ? args.out : undefined,
        render: typeof args.render === 'string' ? args.render : undefined,
        sessionPrompt: typeof sessionPrompt === 'string' ? sessionPrompt : undefined,
        print: args.print === true,
        quiet: args.quiet === true,
        verbose: args.verbose === true,
      },
      io,
    );
  },
};
