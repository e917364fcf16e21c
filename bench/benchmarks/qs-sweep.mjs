// A sweep of 3 tasks x 4 attempts (the replay pipeline, bwrap) with --workers 2 against --workers 1:
// each attempt is its own pipeline and sandbox, so two workers should nearly halve the wall time.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, runShell } from '../helpers.mjs';

const QS = `node ${ROOT}packages/qs/bin/qs.js`;
const MAP = `--docs-map https://docs.greeter.test/=${ROOT}fixtures/docs-site`;
const task = (n) => `name: sweep-${n}\ngoal: Write a file.\ndocs:\n  path:\n    - https://docs.greeter.test/install.html\nreplay:\n  - echo ${n} > out.txt\nsuccess:\n  script: grep -q ${n} out.txt\n`;

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'ql-bench-sweep-'));
  for (const n of [1, 2, 3]) writeFileSync(join(dir, `t${n}.yaml`), task(n));
  return { dir };
}
const sweep = (dir, workers) => runShell(`${QS} run -q ${dir} --repeat 4 --workers ${workers} ${MAP} > /dev/null`);

export default [
  {
    name: 'qs run, 3 tasks x 4 attempts (wall, bwrap)',
    iterations: 3,
    // 1.7x faster with two workers.
    target: { max_ratio: 1 / 1.7 },
    setup,
    baseline: { name: '--workers 1', run: ({ dir }) => sweep(dir, 1) },
    candidate: { name: '--workers 2', run: ({ dir }) => sweep(dir, 2) },
    teardown: ({ dir }) => rmSync(dir, { recursive: true, force: true }),
  },
];
