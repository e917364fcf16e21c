// Shared bits for benchmarks: run a command to completion, paths of the repo and its binaries.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BIN = (name) => `${ROOT}node_modules/.bin/${name}`;

/** Runs argv to completion (stdout discarded unless `input`/`capture`); rejects on an unexpected exit code. */
export function run(argv, { input, stdinFile, ok = [0], env, cwd = ROOT } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      cwd,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: [input !== undefined ? 'pipe' : 'ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    if (input !== undefined) child.stdin.end(input);
    child.on('error', reject);
    child.on('close', (code) => (ok.includes(code) ? resolve(code) : reject(new Error(`${argv.join(' ')} exited ${code}: ${stderr.trim().split('\n').pop()}`))));
  });
}

/** `sh -c` with the file as stdin: for streams too large to hold twice in memory. */
export function runShell(script, opts = {}) {
  return run(['bash', '-c', script], opts);
}
