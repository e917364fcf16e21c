// The content scrub over a 40k-file loop folder, 6 calls as in one short run (host and member glob sets alternating).
// The baseline is Looper's own reference runner in the same run when LOOPER_DIR names a checkout of it (and python3
// runs); otherwise a scrubber that walks the whole folder on every call, as loop-run did before.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from '../helpers.mjs';

const { Scrubber, DEFAULT_GLOBS, isRedacted } = await import(`${ROOT}packages/loop-engine/dist/index.js`);

const DIRS = 200;
const PER_DIR = 200;
const CALLS = 6;
const MEMBER_GLOBS = [...DEFAULT_GLOBS, 'private/**'];
const globsFor = (i) => (i % 2 ? MEMBER_GLOBS : [...DEFAULT_GLOBS, 'private/**', 'inputs/*.csv']);
const runner = process.env.LOOPER_DIR ? join(process.env.LOOPER_DIR, 'templates', 'run-loop.py') : '';
const python = runner && existsSync(runner) && spawnSync('python3', ['--version']).status === 0;

// Six scrubs inside one Runner, timed inside Python so interpreter start-up is not counted.
const PY = `
import importlib.util, json, sys, time
spec = importlib.util.spec_from_file_location("run_loop", sys.argv[1])
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
from pathlib import Path
r = m.Runner(Path(sys.argv[2]))
text = open(sys.argv[3]).read()
g = json.loads(sys.argv[4])
t0 = time.perf_counter()
for i in range(${CALLS}):
    r.scrub_flagged_content(text, g[i % 2])
print(json.dumps({"ms": (time.perf_counter() - t0) * 1000}))
`;

/** The previous loop-run scrub: a full walk per call (what a run paid on every prompt). */
function walkEveryCall(loopDir, text, globs) {
  const found = [];
  const walk = (dir, rel) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!['.git', '__pycache__', 'node_modules', '.venv'].includes(e.name)) walk(join(dir, e.name), childRel);
      } else if (isRedacted(childRel, globs) && statSync(join(dir, e.name)).size <= 1_000_000) found.push([childRel, readFileSync(join(dir, e.name), 'utf8')]);
    }
  };
  walk(loopDir, '');
  let out = text;
  for (const [rel, content] of found) out = out.split(content).join(`[redacted:${rel}]`);
  return out;
}

export default {
  name: `redaction scrub, ${CALLS} calls over a ${(DIRS * PER_DIR) / 1000}k-file loop folder`,
  iterations: 5,
  target: { max_ratio: 1.0 },
  setup() {
    const dir = mkdtempSync(join(tmpdir(), 'ql-bench-scrub-'));
    for (let d = 0; d < DIRS; d++) {
      const sub = join(dir, 'loop-workspace', 'repo', `pkg${d}`);
      mkdirSync(sub, { recursive: true });
      for (let f = 0; f < PER_DIR; f++) writeFileSync(join(sub, `file${f}.ts`), `export const v${f} = ${f};\n`);
    }
    mkdirSync(join(dir, 'secrets'));
    writeFileSync(join(dir, '.env'), 'API_KEY=sk-bench-0123456789abcdef\nDB_PASSWORD=correct-horse-battery\n');
    writeFileSync(join(dir, 'secrets', 'token.txt'), 'ghp_benchbenchbenchbench0123456789\n');
    writeFileSync(join(dir, 'loop-workspace', 'repo', 'pkg7', 'tls.key'), '-----BEGIN KEY-----\nMIIBbenchbenchbench\n-----END KEY-----\n');
    const spec = {
      goal: { statement: 'bench', definition_of_done: 'bench' },
      host: { invoke: ['true'] },
      loop_control: { max_iterations: 1 },
      workspace: { dir: './loop-workspace' },
      observability: { state_file: 'state.json', run_log: 'run-log.md' },
    };
    writeFileSync(join(dir, 'loop.resolved.json'), JSON.stringify(spec));
    const text = `Revise the artifact.\n${'Some prose about the quickstart and its commands. '.repeat(400)}\nleaked: DB_PASSWORD=correct-horse-battery\n`;
    writeFileSync(join(dir, 'prompt.txt'), text);
    return { dir, text };
  },
  baseline: python
    ? {
        name: "Looper's reference runner (python3, its cached walk), same run",
        run: ({ dir }) => {
          const r = spawnSync('python3', ['-c', PY, runner, join(dir, 'loop.resolved.json'), join(dir, 'prompt.txt'), JSON.stringify([globsFor(0), globsFor(1)])], { encoding: 'utf8' });
          if (r.status !== 0) throw new Error(`Looper's runner failed: ${r.stderr.trim().split('\n').pop()}`);
          return { ms: JSON.parse(r.stdout.trim().split('\n').pop()).ms };
        },
      }
    : {
        name: 'a scrub that walks the whole folder on every call (loop-run before; LOOPER_DIR unset)',
        run: ({ dir, text }) => {
          const t0 = performance.now();
          for (let i = 0; i < CALLS; i++) walkEveryCall(dir, text, globsFor(i));
          return { ms: performance.now() - t0 };
        },
      },
  candidate: {
    name: 'loop-gate Scrubber (one walk per run, then only what changed)',
    run: ({ dir, text }) => {
      const t0 = performance.now();
      const s = new Scrubber(dir, () => undefined);
      for (let i = 0; i < CALLS; i++) s.scrub(text, globsFor(i));
      return { ms: performance.now() - t0 };
    },
  },
  teardown: ({ dir }) => rmSync(dir, { recursive: true, force: true }),
};
