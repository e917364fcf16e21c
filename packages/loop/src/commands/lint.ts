// `loop lint SPEC [--json] [--strict] [--compat]`: Looper's 16 rubric checks and quickloop's own.
import { join } from 'node:path';
import type { Io } from '@quickloop/cli-kit/io';
import { absoluteSpecPath, lintSpecText, pyJsonDumps, readSpecText } from '@quickloop/loop-spec';
import type { LoopCommand } from '../command.js';
import { pythonPathText } from '../path-text.js';

export interface LintCommandOptions {
  spec: string;
  json?: boolean;
  strict?: boolean;
  /** Only Looper's sixteen rules: output byte-identical to `looper lint`'s findings. */
  compat?: boolean;
}

export async function lint(opts: LintCommandOptions, io: Io): Promise<number> {
  const specPath = absoluteSpecPath(opts.spec.startsWith('/') ? opts.spec : join(io.cwd, opts.spec));
  const result = lintSpecText(readSpecText(specPath), { path: specPath, displayPath: opts.spec, env: io.env, compat: opts.compat === true });
  if (opts.json) {
    // json.dumps(indent=2, sort_keys=True), as Looper prints it: sorted keys, non-ASCII escaped.
    const findings = result.findings.map((f) => ({ check: f.check, message: f.message, severity: f.severity }));
    io.stdout.write(`${pyJsonDumps({ errors: result.errors, findings, warnings: result.warnings }, { indent: 2, sortKeys: true })}\n`);
  } else {
    const name = pythonPathText(opts.spec);
    for (const f of result.findings) io.stdout.write(`${name}: ${f.severity}[${f.check}]: ${f.message}\n`);
    io.stdout.write(result.findings.length > 0 ? `loop lint: ${result.errors} error(s), ${result.warnings} warning(s)\n` : 'loop lint: no findings\n');
  }
  return result.errors > 0 || (opts.strict === true && result.findings.length > 0) ? 1 : 0;
}

export const lintCommand: LoopCommand = {
  name: 'lint',
  summary: 'Check a loop.yaml for specs that will not behave the way they read',
  synopsis: 'loop lint SPEC [--json] [--strict] [--compat]',
  positionals: { min: 1, max: 1, names: 'SPEC' },
  fastFlags: { json: { type: 'boolean' }, strict: { type: 'boolean' }, compat: { type: 'boolean' } },
  configure: (y) =>
    y
      .option('json', { type: 'boolean', default: false, describe: 'Print {errors, findings, warnings} as JSON' })
      .option('strict', { type: 'boolean', default: false, describe: 'Exit 1 on any finding, warnings included' })
      .option('compat', { type: 'boolean', default: false, describe: "Only Looper 0.4's sixteen rules" }),
  run: (args, io) =>
    lint({ spec: args.positionals[0] as string, json: args.json === true, strict: args.strict === true, compat: args.compat === true }, io),
};
