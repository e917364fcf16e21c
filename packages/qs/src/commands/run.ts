// `qs run TASK...`: qs-validate | qs-sandbox | qs-agent | qs-check as a real pipeline of child processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { logLevel, parseArgs, QsExit, UsageError, type Io } from '@quickloop/cli-kit';
import type { Command } from '../command.js';
import { stageCommand, STAGES, type StageName } from '../bins.js';
import { VERSION } from '../version.js';
import { exitCodeOf } from '@quickloop/cli-kit/process-group';

/**
 * Real processes rather than in-process calls: each stage keeps its own signal handling, sandbox
 * and proxy lifetime exactly as when a person types the pipe, so `qs run` cannot drift from it.
 */
export const run: Command = {
  name: 'run',
  summary: 'Validate, sandbox, run the agent and check: the whole pipeline for the given task files',
  async run(argv, io) {
    const args = parseArgs(argv, { name: 'qs run', version: VERSION, usage: '$0 TASK... [--agent replay] [--docs-map URL_PREFIX=DIR]... [--keep]', out: io.stdout, positionals: 1000 }, (y) =>
      y
        .option('agent', { type: 'string', default: 'replay', describe: 'Who works on the task' })
        .option('docs-map', { type: 'string', array: true, default: [] as string[], describe: 'Serve docs under URL_PREFIX from the folder DIR (repeatable)' })
        .option('backend', { type: 'string', default: 'auto', choices: ['auto', 'bwrap', 'local'], describe: 'Sandbox backend' })
        .option('allow-unenforced', { type: 'boolean', default: false, describe: 'Allow the local backend, which enforces nothing' })
        .option('allow-registry', { type: 'string', array: true, default: [] as string[], describe: 'Also allow this registry host (repeatable)' })
        .option('keep', { type: 'boolean', default: false, describe: 'Keep the workspace for `qs-check < saved.ndjson`' }),
    );
    const files = args._.map(String);
    if (files.length === 0) throw new UsageError('qs run: name at least one task file or folder');
    const quiet = logLevel(args) === 'quiet' ? ['--quiet'] : logLevel(args) === 'verbose' ? ['--verbose'] : [];
    const registries = args['allow-registry'].flatMap((h) => ['--allow-registry', String(h)]);
    const argvOf: Record<StageName, string[]> = {
      'qs-validate': [...files, ...registries, ...quiet],
      'qs-sandbox': ['--backend', args.backend, ...(args['allow-unenforced'] ? ['--allow-unenforced'] : []), ...registries, ...(args.keep ? ['--keep'] : []), ...quiet],
      'qs-agent': ['--agent', args.agent, ...args['docs-map'].flatMap((m) => ['--docs-map', String(m)]), ...quiet],
      'qs-check': [...(args.keep ? ['--keep'] : []), ...quiet],
    };
    return pipeline(argvOf, io);
  },
};

async function pipeline(argvOf: Record<StageName, string[]>, io: Io): Promise<number> {
  const children: ChildProcess[] = [];
  for (const [i, name] of STAGES.entries()) {
    const cmd = stageCommand(name);
    const child = spawn(cmd.file, [...cmd.args, ...argvOf[name]], {
      cwd: io.cwd,
      env: io.env as NodeJS.ProcessEnv,
      stdio: [i === 0 ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      // Each stage in its own process group: a terminal's Ctrl-C reaches only qs, which passes on
      // exactly one SIGINT. A stage that got two (the group's and ours) would exit at once with
      // 130, before ending its runs and removing their workspaces.
      detached: true,
    });
    const prev = children[i - 1];
    if (prev?.stdout && child.stdin) {
      prev.stdout.pipe(child.stdin);
      // A stage that exits early closes its stdin: the writer upstream sees EPIPE and ends quietly.
      child.stdin.on('error', () => undefined);
    }
    child.stderr?.on('data', (c: Buffer) => io.stderr.write(c));
    children.push(child);
  }
  const last = children.at(-1) as ChildProcess;
  last.stdout?.on('data', (c: Buffer) => io.stdout.write(c));
  const exited = children.map(
    (c) =>
      new Promise<number>((resolve) => {
        c.once('error', () => resolve(QsExit.usage));
        c.once('exit', (code, signal) => resolve(exitCodeOf(code, signal, QsExit.noEvidence)));
      }),
  );
  const onAbort = (): void => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGINT');
  };
  io.signal.addEventListener('abort', onAbort, { once: true });
  const codes = await Promise.all(exited);
  io.signal.removeEventListener('abort', onAbort);
  if (io.signal.aborted || codes.includes(QsExit.interrupted)) return QsExit.interrupted;
  // An invalid task file stops qs-validate with 3; the empty stream after it is no verdict.
  if (codes[0] === QsExit.usage || codes.slice(1).includes(QsExit.usage)) return QsExit.usage;
  return codes.at(-1) ?? QsExit.noEvidence;
}
