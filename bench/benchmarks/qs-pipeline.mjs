// The replay pipeline on a trivial task, and a re-check of a kept workspace, against bare Node start-ups.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run, runShell } from '../helpers.mjs';

const bin = (name) => `node ${ROOT}packages/${name}/bin/${name}.js`;
const MAP = `--docs-map https://docs.greeter.test/=${ROOT}fixtures/docs-site`;
const TRIVIAL = `name: trivial\ngoal: Do nothing.\ndocs:\n  path:\n    - https://docs.greeter.test/install.html\nreplay:\n  - 'true'\nsuccess:\n  script: 'true'\n`;

function scratch() {
  const dir = mkdtempSync(join(tmpdir(), 'ql-bench-qs-'));
  writeFileSync(join(dir, 'trivial.yaml'), TRIVIAL);
  return { dir, task: join(dir, 'trivial.yaml') };
}

export default [
  {
    name: 'qs-validate | qs-sandbox | qs-agent | qs-check, trivial task (wall, bwrap)',
    iterations: 8,
    target: { max_ms: 1500 },
    setup: scratch,
    baseline: { name: 'four piped node -e', run: () => runShell("node -e '' | node -e '' | node -e '' | node -e ''") },
    candidate: {
      name: 'the four stages',
      run: ({ task }) => runShell(`set -o pipefail; ${bin('qs-validate')} -q ${task} | ${bin('qs-sandbox')} -q | ${bin('qs-agent')} -q ${MAP} | ${bin('qs-check')} -q > /dev/null`),
    },
    teardown: ({ dir }) => rmSync(dir, { recursive: true, force: true }),
  },
  {
    name: 'qs-check < saved.ndjson, re-check of a kept workspace',
    iterations: 10,
    target: { max_ms: 300 },
    async setup() {
      const s = scratch();
      s.saved = join(s.dir, 'run.ndjson');
      await runShell(`set -o pipefail; ${bin('qs-validate')} -q ${s.task} | ${bin('qs-sandbox')} -q --keep | ${bin('qs-agent')} -q ${MAP} > ${s.saved}`);
      return s;
    },
    baseline: { name: "node -e ''", run: () => run(['node', '-e', '']) },
    candidate: { name: 'qs-check', run: ({ saved }) => runShell(`${bin('qs-check')} -q < ${saved} > /dev/null`) },
    teardown: ({ dir, saved }) => {
      const root = /"root":"([^"]+)"/.exec(readFileSync(saved, 'utf8'))?.[1];
      if (root) rmSync(root, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    },
  },
];
