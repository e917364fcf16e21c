// qs-validate: each task file → task.loaded per task and a diagnostic per finding on stdout; ok/INVALID lines for people on stderr.
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { InterruptedError } from '@quickloop/cli-kit/errors';
import { QsExit } from '@quickloop/cli-kit/exit-codes';
import { createLogger, type LogLevel } from '@quickloop/cli-kit/logger';
import { shownName } from '@quickloop/cli-kit/safe-text';
import type { Io } from '@quickloop/cli-kit/io';
import { EventWriter, createEmitter } from '@quickloop/events';
import { discoverRegistries, type SystemPaths } from '@quickloop/registries';
import { MAX_TASK_BYTES, duplicateName, finding, findProjectConfig, loadProjectConfig, loadTaskFile, loadTaskStdin, located, type FileResult, type Finding } from '@quickloop/task';
import { resolveInputs } from './inputs.js';

export interface ValidateOptions {
  /** Files, directories, globs or `-`; empty means tasks/ then ./. */
  inputs: string[];
  /** Warnings fail the run (exit 3). */
  strict: boolean;
  /** Read each docs.path page over the network (`--check-urls`); off by default, validation stays offline. */
  checkUrls?: boolean;
  /** `--rate-limit`: seconds between requests to one docs host under --check-urls (default 1). */
  rateLimit?: number;
  /** More registry hosts the shell may reach (`--allow-registry`). */
  allowRegistry: string[];
  level: LogLevel;
  /** The project config: a file, false for none, undefined for the nearest quickloop.yaml from the working folder up. */
  config?: string | false;
  /** Where registry discovery looks for /etc and npm (tests point it at a fake machine). */
  registryPaths?: Partial<SystemPaths>;
}

export const STAGE = 'qs-validate';

async function readAll(stream: NodeJS.ReadableStream, signal: AbortSignal): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  const collect = async (): Promise<Buffer> => {
    for await (const chunk of stream) {
      const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
      size += b.length;
      chunks.push(b);
      // One byte past the limit is enough to refuse it; the rest is not worth holding.
      if (size > MAX_TASK_BYTES) break;
    }
    return Buffer.concat(chunks);
  };
  // `qs-validate -` on a terminal waits for input that may never come: Ctrl-C ends the wait, and
  // stdin is let go so that nothing keeps the process alive.
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
      reject(new InterruptedError('interrupted'));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => undefined);
  try {
    return await Promise.race([collect(), aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

export async function run(opts: ValidateOptions, io: Io): Promise<number> {
  const log = createLogger({ stream: io.stderr, env: io.env, level: opts.level });
  const c = log.color;
  const writer = new EventWriter(io.stdout);
  const emitter = createEmitter({ stage: STAGE, writer, now: io.now });
  const registries = await discoverRegistries({
    env: io.env,
    home: io.env.HOME ?? homedir(),
    cwd: io.cwd,
    extra: opts.allowRegistry,
    ...(opts.registryPaths ? { paths: opts.registryPaths } : {}),
  });
  // A sources file that names one mirror for two suites (a release and its updates) is one line here.
  const shown = new Set<string>();
  for (const s of registries.sources) {
    const line = `registry  ${s.endpoint}  (${s.from})`;
    if (!shown.has(line)) log.verbose(line);
    shown.add(line);
  }
  if (registries.endpoints.length === 0) log.warn(c.yellow('warning  no package registries found in npm, pip or apt config; the shell may reach only network.allow hosts (see --allow-registry)'));

  const configPath = opts.config === false ? undefined : opts.config !== undefined ? resolve(io.cwd, opts.config) : findProjectConfig(io.cwd);
  const config = configPath === undefined ? undefined : loadProjectConfig(configPath, io.cwd);
  if (config) log.verbose(`config  ${config.display}${Object.keys(config.tasks).length > 0 ? ` (tasks: ${Object.keys(config.tasks).join(', ')} merged under every task)` : ''}`);
  const load = { registries: registries.endpoints, ...(config && Object.keys(config.tasks).length > 0 ? { defaults: { tasks: config.tasks, display: config.display, path: config.path, sha256: config.sha256 } } : {}) };
  const inputs = resolveInputs(opts.inputs, io.cwd);
  // Loaded only when asked for: the docs reader (and its HTML converter) is no part of offline validation.
  const urls = opts.checkUrls ? (await import('./check-urls.js')).createUrlChecker({ signal: io.signal, ...(opts.rateLimit !== undefined ? { rateLimitSeconds: opts.rateLimit } : {}) }) : undefined;
  const names = new Map<string, string>();
  let invalid = 0;
  let loaded = 0;
  let warnings = 0;

  const diagnostic = (run_id: string, path: string, f: Finding): Promise<void> | undefined =>
    emitter.emit('diagnostic', { run_id }, {
      severity: f.severity,
      code: f.code,
      message: f.message,
      path,
      ...(f.task !== undefined ? { task: f.task } : {}),
      ...(f.field !== undefined ? { field: f.field } : {}),
      ...(f.line !== undefined ? { line: f.line } : {}),
      ...(f.column !== undefined ? { column: f.column } : {}),
    });

  const report = async (result: FileResult): Promise<void> => {
    if (!result.ok) {
      invalid += 1;
      const run_id = io.newId();
      const [first, ...rest] = result.errors;
      log.error(`${c.red('INVALID')}  ${located(result.display, first!)}`);
      for (const e of rest) log.info(`  ${c.red('error')}    ${located(result.display, e)}`);
      for (const e of result.errors) await diagnostic(run_id, result.path, e);
      return;
    }
    for (const task of result.tasks) {
      loaded += 1;
      const run_id = io.newId();
      const p = task.payload;
      await emitter.emit('task.loaded', { run_id }, p);
      log.info(`${c.green('ok')}  ${result.display} (${shownName(p.task.name)}, ${p.mode})`);
      if (log.level === 'verbose') {
        log.verbose(`  docs hosts ${p.policy.docs_hosts.join(', ')}; registries (${p.policy.registries_source}) ${p.policy.registries.join(', ') || 'none'}; explicit ${p.policy.explicit.join(', ') || 'none'}; QS_PORT from ${p.check.port_base}`);
      }
      const findings = [...task.findings];
      const dup = duplicateName(p.task.name, names, result.display);
      // Duplicates inside one file were already reported by the loader.
      if (dup && !findings.some((f) => f.code === 'QS110')) findings.push(finding('QS110', dup, { field: 'name', at: task.nameAt, task: p.task.name }));
      if (urls) findings.push(...(await urls.check(p)));
      for (const f of findings) {
        if (f.severity === 'warning') warnings += 1;
        const label = f.severity === 'warning' ? c.yellow('warning') : c.cyan('note   ');
        log.warn(`  ${label}  ${located(result.display, f)} [${f.code}]`);
        await diagnostic(run_id, result.path, f);
      }
    }
  };

  for (const [i, input] of inputs.entries()) {
    // A long list stops between files on SIGINT/SIGTERM; what was written stays written. Loading a
    // file never waits on the event loop (its awaits settle at once), so a signal is only seen if
    // each file after the first gives it a turn.
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    if (io.signal.aborted) {
      await writer.flush();
      throw new InterruptedError('interrupted');
    }
    if (input.kind === 'none') {
      invalid += 1;
      const f = finding('QS007', input.message);
      log.error(`${c.red('INVALID')}  ${located(input.path, f)}`);
      await diagnostic(io.newId(), input.path, f);
      continue;
    }
    const result =
      input.kind === 'stdin'
        ? await loadTaskStdin(await readAll(io.stdin, io.signal), io.cwd, load)
        : await loadTaskFile(input.path, io.cwd, load);
    await report(result);
  }
  await writer.flush();
  if (invalid > 0) {
    log.verbose(`${invalid} invalid, ${loaded} task(s) loaded`);
    return QsExit.usage;
  }
  if (opts.strict && warnings > 0) {
    log.error(`${c.red('INVALID')}  ${warnings} warning${warnings === 1 ? '' : 's'} under --strict`);
    return QsExit.usage;
  }
  return QsExit.passed;
}
