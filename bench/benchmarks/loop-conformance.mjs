// Looper's own runner conformance suite (conformance/check_runner.py, 10 scenarios), the whole suite's
// wall clock against loop-run, and against Looper's reference runner (templates/run-loop.py) in the
// same run. Needs a Looper checkout: LOOPER_DIR=/path/to/looper pnpm bench conformance (python3 with
// PyYAML, which Looper's compiler needs to build the fixtures).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, run } from '../helpers.mjs';

const looper = process.env.LOOPER_DIR;
const suite = (runner) => run(['python3', join(looper, 'conformance', 'check_runner.py'), runner]);

export default {
  name: "Looper's conformance suite, 10 scenarios (loop-run vs Looper's reference runner)",
  // Each suite is about 5 s of many short processes; the machine's noise is about ±5% a suite, so seven pairs.
  iterations: 7,
  target: { max_ratio: 1.0 },
  setup() {
    if (!looper || !existsSync(join(looper, 'conformance', 'check_runner.py'))) {
      throw new Error('set LOOPER_DIR to a checkout of Looper (ksimback/looper) to run this benchmark');
    }
    return {};
  },
  baseline: { name: 'templates/run-loop.py', run: () => suite(join(looper, 'templates', 'run-loop.py')) },
  // The bin file itself (executable, with its shebang), as the suite runs any runner that is not a .py.
  candidate: { name: 'loop-run', run: () => suite(`${ROOT}packages/loop-run/bin/loop-run.js`) },
};
