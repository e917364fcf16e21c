// `qs check TASK --sandbox DIR`: the task file's check, read again now, run against a kept workspace —
// so a check is iterated on for free, without re-running the agent.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { InputError, parseArgs, QsExit, shownName, terminalSafe, UsageError, type Io } from '@quickloop/cli-kit';
import { createEmitter, EventWriter, parseLine, type Payload } from '@quickloop/events';
import { newFacts, runCheck } from '@quickloop/qs-check';
import { MARKER, selectBackend, type BackendChoice } from '@quickloop/sandbox';
import type { Command } from '../command.js';
import { stageCommand } from '../bins.js';
import { VERSION } from '../version.js';

type TaskLoaded = Payload<'task.loaded'>;

/** The task exactly as qs-validate loads it today (the file is read again: an edited check counts). */
function loadTask(file: string, io: Io): Promise<TaskLoaded> {
  return new Promise((done, fail) => {
    const cmd = stageCommand('qs-validate');
    const child = spawn(cmd.file, [...cmd.args, '--quiet', file], { cwd: io.cwd, env: io.env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.on('error', (e) => fail(new UsageError(`qs check: cannot start qs-validate: ${e.message}`)));
    child.on('close', () => {
      const lines = out.split('\n').filter((l) => l.trim() !== '');
      const loaded = lines.map((l, i) => parseLine(l, i + 1, 'qs-validate', undefined, false).event).filter((e) => e.type === 'task.loaded');
      if (loaded.length === 1) return done(loaded[0] as unknown as TaskLoaded);
      const why = err.split('\n').map((l) => l.trim()).filter(Boolean)[0]?.replace(/^INVALID\s+/, '').replace(`${file}: `, '');
      fail(new InputError(loaded.length > 1 ? `qs check: ${file} holds ${loaded.length} tasks; name one file with one task` : `qs check: ${file}: ${why ?? 'not a valid task'}`));
    });
  });
}

/**
 * The kept sandbox's root, from its root or its workspace folder (what `--keep` printed either way).
 * The parent first: the workspace is the run's own, and a marker there is one a command wrote (with
 * folders of its making beside it, which checkLayout then refuses when named directly).
 */
function sandboxRoot(given: string): string {
  let dir: string;
  try {
    dir = realpathSync(given);
  } catch {
    dir = given;
  }
  // The sandbox's root, or its workspace (what a person copies from the sandbox.ready line): the
  // parent is taken only for a folder named workspace, never for a root whose parent holds a marker.
  for (const candidate of basename(dir) === 'workspace' ? [dirname(dir), dir] : [dir]) if (existsSync(join(candidate, MARKER))) return candidate;
  throw new InputError(`qs check: ${given} is not a kept quickloop sandbox (no ${MARKER} in it or its parent): was it removed, or run without --keep?`);
}

/** Outputs of the saved run's bash calls that exited 0: the transcript expect_output reads. */
function transcript(file: string, task: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new InputError(`qs check: --stream ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  const events = text.split('\n').flatMap((l, i) => (l.trim() === '' ? [] : [parseLine(l, i + 1, file).event]));
  const runs = new Set(events.filter((e) => e.type === 'task.loaded' && (e as unknown as TaskLoaded).task.name === task).map((e) => e.run_id));
  if (runs.size === 0) throw new InputError(`qs check: --stream ${file} has no run of task '${task}'`);
  if (runs.size > 1) throw new InputError(`qs check: --stream ${file} has ${runs.size} runs of task '${task}'; save one run's stream`);
  return events.filter((e) => runs.has(e.run_id) && e.type === 'tool.result' && e.tool === 'bash' && e.exit_code === 0).map((e) => String(e.output));
}

export const check: Command = {
  name: 'check',
  summary: 'Re-run a task\'s check (read again from its file) against a kept workspace',
  async run(argv, io) {
    const args = parseArgs(argv, { name: 'qs check', version: VERSION, usage: '$0 TASK --sandbox DIR [--stream FILE] [--show]', out: io.stdout, positionals: 1 }, (y) =>
      y
        .option('sandbox', { type: 'string', describe: 'The kept sandbox (its root or its workspace, as --keep printed it)' })
        .option('stream', { type: 'string', describe: 'The saved stream of the run, for expect_output (its bash outputs are the transcript)' })
        .option('show', { type: 'boolean', default: false, describe: 'Print the compiled check script and exit' })
        .option('backend', { type: 'string', default: 'auto', choices: ['auto', 'bwrap', 'local'], describe: 'Sandbox backend' })
        .option('allow-unenforced', { type: 'boolean', default: false, describe: 'Allow the local backend, which enforces nothing' }),
    );
    const file = String(args._[0] ?? '');
    if (file === '') throw new UsageError('qs check: name the task file');
    const loaded = await loadTask(file, io);
    if (args.show) {
      io.stdout.write(loaded.check.script.endsWith('\n') ? loaded.check.script : `${loaded.check.script}\n`);
      return QsExit.passed;
    }
    if (args.sandbox === undefined || args.sandbox === '') throw new UsageError('qs check: --sandbox DIR is required (the workspace a run kept with --keep)');
    const root = sandboxRoot(resolve(io.cwd, args.sandbox));
    const uses = loaded.task.success.expect_output !== undefined;
    const outputs = args.stream !== undefined ? transcript(resolve(io.cwd, args.stream), loaded.task.name) : [];
    if (uses && args.stream === undefined) io.stderr.write('qs check: note: the check asserts on the run\'s output (expect_output) and no --stream was given, so it sees an empty transcript\n');
    const selection = selectBackend(args.backend as BackendChoice, args['allow-unenforced']);
    const ready: Payload<'sandbox.ready'> = {
      root,
      workspace: join(root, 'workspace'),
      home: join(root, 'home'),
      tmp: join(root, 'tmp'),
      backend: selection.backend,
      enforced: selection.backend !== 'local',
      reason: selection.reason,
      policy: loaded.policy,
      keep: true,
    };
    // The check's events are not this command's output: a person asked for its verdict.
    const sink = new PassThrough();
    sink.resume();
    const emitter = createEmitter({ stage: 'qs check', writer: new EventWriter(sink), now: io.now });
    const result = await runCheck(
      { ...newFacts(io.newId()), loaded, ready, okOutputs: outputs },
      { emitter, newId: io.newId, signal: io.signal, env: io.env, onEgress: () => undefined },
    );
    if (result.interrupted) return QsExit.interrupted;
    const output = result.output;
    // The check prints what the workspace holds, written by commands from the docs: shown, never acted on by the terminal.
    if (output !== '') io.stdout.write(terminalSafe(output.endsWith('\n') ? output : `${output}\n`, 'block'));
    const verdict = result.passed ? 'PASS' : 'FAIL';
    io.stdout.write(`[${verdict}] ${shownName(loaded.task.name)} check exited ${result.exitCode} (${selection.backend}) — ${terminalSafe(basename(root))}\n`);
    if (!result.passed) {
      if (result.syntaxError !== undefined) io.stdout.write(`the success check is not valid bash: ${terminalSafe(result.syntaxError)}\n`);
      else if (output.trim() === '') io.stdout.write('note: the check printed nothing, so this failure cannot be diagnosed\n');
    }
    return result.passed ? QsExit.passed : QsExit.docsGap;
  },
};
