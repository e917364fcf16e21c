// Runs one argv (never a shell) with input on stdin, a timeout that kills the whole process group, UTF-8 output.
import { spawn } from 'node:child_process';
import { endGroup, exitCodeOf, groupAlive, signalGroup } from '@quickloop/cli-kit/process-group';

export interface ExecResult {
  /** 124 on timeout, 127 when the program cannot be started, 128+n on a signal. */
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
  /** The spawn error when the program could not be started at all. */
  spawnError?: string;
}

export interface ExecOptions {
  cwd: string;
  input?: string;
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** The grace between SIGTERM and SIGKILL once a call has to end. */
  killGraceMs?: number;
}

export function runArgv(argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
  const started = performance.now();
  return new Promise((resolveResult) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    let settled = false;
    // detached: the child leads its own process group, so a timeout reaches its descendants too.
    const child = spawn(argv[0] as string, argv.slice(1), {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let ending: Promise<void> | undefined;
    const stop = (): void => {
      if (child.pid !== undefined) ending ??= endGroup(child.pid, options.killGraceMs ?? 1000);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs);
    const onAbort = (): void => stop();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (result: Omit<ExecResult, 'durationMs'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      // Strays the CLI left behind in its group must not outlive the call.
      if (result.spawnError === undefined && child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
      resolveResult({ ...result, durationMs: Math.round(performance.now() - started) });
    };
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', (error: NodeJS.ErrnoException) => {
      finish({ exitCode: error.code === 'ENOENT' || error.code === 'EACCES' ? 127 : 126, stdout: '', stderr: `${argv[0]}: ${error.message}\n`, timedOut: false, spawnError: error.message });
    });
    // A background child (`server & curl …`) keeps the pipes open after the command exits: without
    // this the check waited out its whole timeout and then read as timed out (124).
    child.once('exit', () => {
      if (child.pid !== undefined && groupAlive(child.pid)) stop();
    });
    child.on('close', (code, signal) => {
      // TextDecoder without `fatal` replaces bad bytes, whatever the locale says.
      const decode = (parts: Buffer[]): string => new TextDecoder('utf-8').decode(Buffer.concat(parts));
      const exitCode = timedOut ? 124 : exitCodeOf(code, signal);
      finish({ exitCode, stdout: decode(out), stderr: decode(err), timedOut });
    });
    // A CLI that exits without reading its prompt closes the pipe: that is its answer, not our error.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}
