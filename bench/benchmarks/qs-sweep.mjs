// The acceptance sweep (packages/qs/src/agree.test.ts: the bundled greeter example, a docs gap
// and a refused host, 3 tasks x 4 attempts, replayed in bwrap) with --workers 2 against --workers 1:
// each attempt is its own process and sandbox, so two workers should nearly halve the wall time.
import { ROOT, runShell } from '../helpers.mjs';

const QS = `node ${ROOT}packages/qs/bin/qs.js`;
const MAP = `--docs-map https://docs.greeter.test/=${ROOT}fixtures/docs-site`;
const TASKS = ['examples/greeter.yaml', 'pipeline/docs-gap.yaml', 'pipeline/harness-error.yaml'].map((t) => `${ROOT}fixtures/${t}`).join(' ');
// A docs gap among the results: qs run exits 1 (the run itself went as it should).
const SWEEP_EXIT = 1;
const sweep = (workers) => runShell(`${QS} run -q --no-config ${TASKS} --repeat 4 --workers ${workers} ${MAP} > /dev/null`, { ok: [SWEEP_EXIT] });

export default [
  {
    name: 'qs run, 3 tasks x 4 attempts (wall, bwrap)',
    iterations: 5,
    // 1.7x faster with two workers.
    target: { max_ratio: 1 / 1.7 },
    baseline: { name: '--workers 1', run: () => sweep(1) },
    candidate: { name: '--workers 2', run: () => sweep(2) },
  },
];
