// loop-run and loop-gate start-up: `--help`, wall clock including Node's own start-up, against a bare
// `node -e ''` in the same run. A pipeline or a Makefile starts them once per step.
import { ROOT, run } from '../helpers.mjs';

const startup = (name) => ({
  name: `${name} --help (Node start-up included)`,
  iterations: 20,
  target: { max_ms: 120 },
  baseline: { name: "node -e ''", run: () => run(['node', '-e', '']) },
  // The bin file itself, executed as a global install's link is (its `#!/bin/sh` launcher, which starts
  // Node without NODE_EXTRA_CA_CERTS). `node bin/x.js` skips the launcher, and pnpm's .bin shell shim
  // would add its own start-up.
  candidate: { name: `${name} --help`, run: () => run([`${ROOT}packages/${name}/bin/${name}.js`, '--help']) },
});

export default [startup('loop-run'), startup('loop-gate')];
