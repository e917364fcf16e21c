// `loop compile` of a typical spec, wall clock including Node start-up, against a bare `node -e ''`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run } from '../helpers.mjs';

export default {
  name: 'loop compile, typical spec (Node start-up included)',
  iterations: 15,
  target: { max_ms: 150 },
  setup() {
    return { out: mkdtempSync(join(tmpdir(), 'ql-bench-compile-')) };
  },
  baseline: { name: "node -e ''", run: () => run(['node', '-e', '']) },
  candidate: {
    name: 'loop compile',
    // The bin file itself, as a global install links it: pnpm's .bin shell shim would add its own start-up.
    run: ({ out }) => run(['node', `${ROOT}packages/loop/bin/loop.js`, 'compile', `${ROOT}fixtures/loops/valid/typical/loop.yaml`, '--out', out, '--quiet']),
  },
  teardown: ({ out }) => rmSync(out, { recursive: true, force: true }),
};
