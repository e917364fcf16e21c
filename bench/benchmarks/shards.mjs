// Three shards of a sweep run side by side and merged, against one process with --workers 3 on the
// same 18 attempts (3 tasks x 6, the replay pipeline, bwrap): what sharding costs on one machine is
// two more qs start-ups, two more task validations and the merge, a fixed cost (about 2 s on a
// loaded 2-core machine) that a sweep worth sharding amortises: 1.06x at these 18 attempts, 1.30x at 9.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, runShell } from '../helpers.mjs';

const QS = `node ${ROOT}packages/qs/bin/qs.js`;
const MAP = `--docs-map https://docs.greeter.test/=${ROOT}fixtures/docs-site`;
const task = (n) => `name: shard-${n}\ngoal: Write a file.\ndocs:\n  path:\n    - https://docs.greeter.test/install.html\nreplay:\n  - echo ${n} > out.txt\nsuccess:\n  script: grep -q ${n} out.txt\n`;

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'ql-bench-shards-'));
  const tasks = join(dir, 'tasks');
  mkdirSync(tasks);
  for (const n of [1, 2, 3]) writeFileSync(join(tasks, `t${n}.yaml`), task(n));
  return { dir, tasks, round: 0 };
}
const sweep = `--repeat 6 -q ${MAP}`;

export default [
  {
    name: 'qs run --shard 1/3, 2/3, 3/3 side by side + qs merge, 18 attempts (wall, bwrap)',
    iterations: 3,
    // Within 1.2x of one process running the same attempts three at a time.
    target: { max_ratio: 1.2 },
    setup,
    baseline: {
      name: 'one qs run --workers 3',
      run: (s) => {
        s.round += 1;
        return runShell(`${QS} run ${s.tasks} --workers 3 --out ${s.dir}/one-${s.round} ${sweep} > /dev/null`);
      },
    },
    candidate: {
      name: '3 shards + merge',
      run: (s) => {
        s.round += 1;
        const out = `${s.dir}/sharded-${s.round}`;
        const shards = [1, 2, 3].map((i) => `${QS} run ${s.tasks} --shard ${i}/3 --out ${out}-${i} ${sweep} > /dev/null &`).join('\n');
        return runShell(`${shards}\nfail=0; for j in $(jobs -p); do wait $j || fail=1; done; [ $fail = 0 ] && ${QS} merge ${out}-1 ${out}-2 ${out}-3 --out ${out} -q`);
      },
    },
    teardown: ({ dir }) => rmSync(dir, { recursive: true, force: true }),
  },
];
