#!/usr/bin/env node
// The last step of `pnpm build`: one real replay sweep of the bundled example, and the same task through
// the typed pipe, so that the V8 code cache of every qs binary holds what a real run compiles. Each
// package's own build (scripts/bundle.mjs) can only warm its binary alone (`qs-sandbox --help`,
// `qs-agent` on empty input), and every function a real attempt needs beyond that is then compiled
// again on every start of every attempt.
//
// The sweep runs offline (the example's docs are a local folder) in the enforced sandbox, in a temporary
// folder removed afterwards. Where it cannot run as it should (no bubblewrap here, say), the caches the
// packages' builds made are put back: the binaries are then only slower, and the build does not fail.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name) => join(root, 'packages', name, 'bin', `${name}.js`);
const caches = [
  ...['qs', 'qs-validate', 'qs-sandbox', 'qs-agent', 'qs-check'].map((name) => join(root, 'packages', name, 'dist', 'bundle.cjs.cache')),
  join(root, 'packages', 'qs', 'dist', 'attempt.cjs.cache'),
].filter((file) => existsSync(file));

const scratch = mkdtempSync(join(tmpdir(), 'quickloop-warm-up-'));
const options = (extra = {}) => ({
  cwd: scratch,
  env: { ...process.env, QUICKLOOP_WRITE_CODE_CACHE: '1', NO_COLOR: '1', TMPDIR: scratch },
  stdio: ['ignore', 'ignore', 'pipe'],
  timeout: 120_000,
  ...extra,
});
const failed = (what, run) => {
  if (run.status === 0) return false;
  const why = String(run.stderr ?? '').trim().split('\n').pop() || run.error?.message || '';
  console.error(`warm-up: \`${what}\` ended with ${run.status ?? run.signal}${why ? ` (${why})` : ''}; the qs stages work, with the caches their builds made`);
  return true;
};
try {
  caches.forEach((file, i) => copyFileSync(file, join(scratch, `${i}.cache`)));
  // A sweep (qs, qs-validate and the attempt process, bin/attempt.js), then the same task through the
  // stages' own binaries, as a person types the pipe. One worker, one attempt per task: each binary
  // runs one process at a time, so no two write one cache.
  // --no-config: a quickloop.yaml above the temporary folder (in /tmp, or /) is nobody's to trust.
  const sweep = spawnSync(process.execPath, [bin('qs'), 'run', '--example', 'greeter', '--no-config', '--workers', '1', '-q', '--out', join(scratch, 'out')], options());
  const docs = `https://docs.greeter.test/=${join(root, 'fixtures', 'docs-site')}`;
  const node = (name, ...args) => [process.execPath, bin(name), ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const typed = `set -o pipefail; ${node('qs-validate', join(root, 'fixtures', 'examples', 'greeter.yaml'), '--no-config', '-q')} | ${node('qs-sandbox', '-q')} | ${node('qs-agent', '--docs-map', docs, '-q')} | ${node('qs-check', '-q')}`;
  if (failed('qs run --example greeter', sweep) || failed('qs-validate greeter.yaml | qs-sandbox | qs-agent | qs-check', spawnSync('bash', ['-c', typed], options()))) {
    caches.forEach((file, i) => copyFileSync(join(scratch, `${i}.cache`), file));
  }
} finally {
  try {
    rmSync(scratch, { recursive: true, force: true });
  } catch (error) {
    // A sandbox a timed-out sweep left behind can hold a folder busy for a moment: a note, never a failed build.
    console.error(`warm-up: could not remove ${scratch} (${error.code ?? error.message})`);
  }
}
