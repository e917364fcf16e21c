// qs-validate cold start (Node start-up included) on one task and on 100, against `node -e 0`.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run } from '../helpers.mjs';

const TASK = `${ROOT}fixtures/tasks/valid/script.yaml`;
// the bin file itself, as a global install runs it (pnpm's .bin shell shim adds its own start-up)
const QSV = `${ROOT}packages/qs-validate/bin/qs-validate.js`;
const nodeStart = { name: 'node -e 0', run: () => run(['node', '-e', '0']) };

export default [
  {
    name: 'qs-validate cold start, 1 task',
    iterations: 15,
    target: { max_ms: 150 },
    baseline: nodeStart,
    candidate: { name: 'qs-validate 1 task', run: () => run(['node', QSV, '-q', TASK]) },
  },
  {
    name: 'qs-validate cold start, 100 tasks',
    iterations: 10,
    target: { max_ms: 400 },
    setup() {
      const dir = mkdtempSync(join(tmpdir(), 'ql-bench-'));
      const text = readFileSync(TASK, 'utf8');
      for (let i = 0; i < 100; i++) writeFileSync(join(dir, `t${i}.yaml`), text.replace(/^name: .*$/m, `name: bench-task-${i}`));
      return { dir };
    },
    baseline: nodeStart,
    candidate: { name: 'qs-validate 100 tasks', run: ({ dir }) => run(['node', QSV, '-q', dir]) },
    teardown: ({ dir }) => rmSync(dir, { recursive: true, force: true }),
  },
];
