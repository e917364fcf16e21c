// loop-run's own cost per model call (scrub, consent, state and run-log writes, events, gate logic) over bare spawns of the same instant CLIs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from '../helpers.mjs';

const { run } = await import(`${ROOT}packages/loop-run/dist/index.js`);
const { memoryIo } = await import(`${ROOT}packages/cli-kit/dist/index.js`);

// Instant model CLIs: `sh` reads the prompt and answers at once. The judge always asks for a revision
// with an issue naming its own pid, so no two rounds look alike and no-progress never cuts the run short.
const HOST = ['sh', '-c', 'cat > /dev/null; printf "# Draft\\n\\nA haiku about loops\\nround and round the gate goes\\n"'];
const JUDGE = ['sh', '-c', 'cat > /dev/null; printf "\\`\\`\\`json\\n{\\"verdict\\":\\"revise\\",\\"blocking_issues\\":[\\"issue $$\\"],\\"confidence\\":0.5,\\"notes\\":\\"\\"}\\n\\`\\`\\`\\n"'];
const PASS = ['sh', '-c', 'cat > /dev/null; printf "\\`\\`\\`json\\n{\\"verdict\\":\\"pass\\",\\"blocking_issues\\":[],\\"confidence\\":0.9,\\"notes\\":\\"\\"}\\n\\`\\`\\`\\n"'];

function spec(dir) {
  const judge = (id, invoke) => ({ id, role: 'judge', cli: 'sh', invoke, timeout_sec: 60, scope: ['plan', 'delivery'], local: true });
  const gate = (source, criteria) => ({ when: 'after', members: [source], verdict_policy: 'revise_until_clean', verdict_source: source, criteria, max_revisions: 3 });
  // No programmatic criterion: a check is a process of its own, not part of a model call's cost.
  const criteria = [{ id: 'quality', type: 'judge', rubric: 'Three lines about loops.' }];
  const council = [judge('plan-judge', PASS), judge('judge-1', JUDGE)];
  return {
    $schema: 'https://github.com/ksimback/looper/schema/loop.resolved.v1.json',
    compiled_at: '2026-07-05T06:02:07+00:00',
    source: join(dir, 'loop.yaml'),
    version: 1,
    meta: { name: 'bench-loop' },
    goal: { statement: 'Write a haiku about loops.', definition_of_done: 'Three lines.', context_sources: [{ file: 'notes.md' }], verification: criteria },
    host: { cli: 'sh', invoke: HOST, timeout_sec: 60 },
    council,
    gates: { plan_gate: gate('plan-judge', ['quality']), delivery_gate: gate('judge-1', ['quality']) },
    loop_control: { max_iterations: 3, budget: { wall_clock_min: 30 }, no_progress: { max_stalled_iterations: 2, signals: [], action: 'stop' } },
    execution: { mode: 'external_runner', isolation: 'current_workspace', side_effects: { requires_approval: true, duplicate_action_check: true } },
    observability: { state_file: 'state.json', run_log: 'run-log.md', checkpoint_granularity: 'gate' },
    privacy: { egress: [] },
    workspace: { dir: './loop-workspace', layout: [] },
    criteria_by_id: Object.fromEntries(criteria.map((c) => [c.id, c])),
    council_by_id: Object.fromEntries(council.map((m) => [m.id, m])),
  };
}

/** One whole loop in-process (start-up excluded): plan, plan gate, 3 iterations of draft + 4 judge rounds + 3 revisions. */
async function loopOnce(state) {
  rmSync(join(state.dir, 'loop-workspace'), { recursive: true, force: true });
  const io = memoryIo({ stdin: '', env: { ...process.env, NO_COLOR: '1' } });
  io.now = () => new Date(); // the real clock: a stepping test clock would spend the wall-clock budget
  const t0 = performance.now();
  const code = await run({ spec: state.specPath, retries: 0, retryDelayMs: 0, consent: [], level: 'quiet' }, io);
  const ms = performance.now() - t0;
  const events = io.out().trim().split('\n').map((l) => JSON.parse(l));
  const failed = events.at(-1);
  if (code !== 1 || failed.type !== 'loop.failed' || failed.failure !== 'max_iterations_reached') throw new Error(`loop-run exited ${code}: ${JSON.stringify(failed)}`);
  return { ms, calls: events.filter((e) => e.type === 'model.call').length };
}

/** The baseline: the same CLIs spawned one after another, prompt on stdin, answer collected. */
function bareCall(argv, prompt) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('close', () => resolve(out));
    child.stdin.end(prompt);
  });
}

export default {
  name: 'loop-run overhead per model call (instant fake CLIs)',
  iterations: 10,
  target: { max_ms: 15, overhead: true },
  async setup() {
    const dir = mkdtempSync(join(tmpdir(), 'ql-bench-loop-run-'));
    writeFileSync(join(dir, 'notes.md'), 'Loops go round.\n');
    const specPath = join(dir, 'loop.resolved.json');
    writeFileSync(specPath, `${JSON.stringify(spec(dir), null, 2)}\n`);
    const state = { dir, specPath, prompt: 'Revise the artifact. '.repeat(100) };
    state.calls = (await loopOnce(state)).calls;
    // 1 plan + 1 plan verdict + 3 × (1 draft + 4 verdicts + 3 revisions)
    if (state.calls !== 26) throw new Error(`expected 26 model calls per loop, saw ${state.calls}`);
    return state;
  },
  baseline: {
    name: 'bare spawns of the same CLIs, per call',
    run: async (state) => {
      const t0 = performance.now();
      for (let i = 0; i < state.calls; i++) await bareCall(i % 2 ? JUDGE : HOST, state.prompt);
      return { ms: (performance.now() - t0) / state.calls };
    },
  },
  candidate: {
    name: 'loop-run, per call',
    run: async (state) => {
      const r = await loopOnce(state);
      return { ms: r.ms / r.calls };
    },
  },
  teardown: ({ dir }) => rmSync(dir, { recursive: true, force: true }),
};
