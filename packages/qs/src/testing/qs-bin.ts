// The real `qs` binary as a test runs it: the workspace's bins first on PATH, no colour.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const QS = join(ROOT, 'packages', 'qs', 'bin', 'qs.js');

export const qsEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
  HOME: process.env.HOME ?? '/root',
  NO_COLOR: '1',
  ...extra,
});

/** Runs `qs ARGS` in `cwd` to its end, collecting stdout and stderr. */
export function runQs(args: readonly string[], cwd: string, extra: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  return runNodeBin(QS, args, cwd, extra);
}

/** Runs a bin of the workspace (`node BIN ARGS`) in `cwd` as runQs runs qs. */
export function runNodeBin(bin: string, args: readonly string[], cwd: string, extra: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env: qsEnv(extra), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
}
