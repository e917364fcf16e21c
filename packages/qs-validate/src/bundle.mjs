// Build step (after tsc): dist/cli.js and its dependencies as one CommonJS file, dist/bundle.cjs, plus the V8
// code cache src/start.ts loads it with. CommonJS because only a vm.Script takes a code cache on Node 20.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { rolldown } from 'rolldown';

const bundle = await rolldown({ input: 'dist/cli.js', platform: 'node', logLevel: 'warn', checks: { emptyImportMeta: false } });
await bundle.write({ file: 'dist/bundle.cjs', format: 'cjs', codeSplitting: false, sourcemap: true });
await bundle.close();

// One real run (a bundled task on stdin) compiles what a run needs; its cache is written after it.
rmSync('dist/bundle.cjs.cache', { force: true });
const run = spawnSync(process.execPath, ['bin/qs-validate.js', '-q', '-'], {
  input: readFileSync('../../fixtures/tasks/valid/script.yaml'),
  env: { ...process.env, QUICKLOOP_WRITE_CODE_CACHE: '1', NO_COLOR: '1' },
  stdio: ['pipe', 'ignore', 'inherit'],
});
if (run.status !== 0) {
  console.error(`bundle: the warm-up run exited ${run.status}; qs-validate still works, without a code cache`);
  rmSync('dist/bundle.cjs.cache', { force: true });
}
