// The worker fleet's cost per attempt: the same instant replay attempts through a real redis-server
// and two local `qs worker`s, against one `qs run --workers 2`. Each timing is divided by the number
// of attempts, so the overhead printed is per attempt. Every iteration writes its tasks anew: a plan
// enqueued again would be collected from Redis without running.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, runShell } from '../helpers.mjs';

const QS = `node ${ROOT}packages/qs/bin/qs.js`;
const MAP = `--docs-map https://docs.greeter.test/=${ROOT}fixtures/docs-site`;
const TASKS = 2;
const REPEAT = 4;
const ATTEMPTS = TASKS * REPEAT;
const task = (n, round) => `# round ${round}\nname: instant-${n}\ngoal: Nothing.\ndocs:\n  path:\n    - https://docs.greeter.test/install.html\nreplay:\n  - "true"\nsuccess:\n  script: "true"\n`;

async function setup() {
  const { startRedis } = await import(pathToFileURL(`${ROOT}packages/testkit/dist/index.js`).href);
  const redis = await startRedis();
  const dir = mkdtempSync(join(tmpdir(), 'ql-bench-queue-'));
  const workers = [1, 2].map(() => {
    const child = spawn(process.execPath, [`${ROOT}packages/qs/bin/qs.js`, 'worker', '--queue', redis.url, '-q'], { stdio: ['ignore', 'ignore', 'inherit'] });
    return { child, exited: new Promise((resolve) => child.once('close', resolve)) };
  });
  return { redis, dir, workers, round: 0 };
}

async function sweep(state, how) {
  state.round += 1;
  const tasks = join(state.dir, String(state.round));
  mkdirSync(tasks);
  for (let n = 1; n <= TASKS; n += 1) writeFileSync(join(tasks, `t${n}.yaml`), task(n, state.round));
  const t0 = performance.now();
  await runShell(`${QS} run -q ${tasks} --repeat ${REPEAT} ${how} ${MAP} > /dev/null`);
  return { ms: (performance.now() - t0) / ATTEMPTS };
}

export default [
  {
    name: `qs run --queue, ${ATTEMPTS} instant attempts on two local workers (per attempt, bwrap)`,
    iterations: 3,
    target: { max_ms: 30, overhead: true },
    setup,
    baseline: { name: 'in-process --workers 2', run: (state) => sweep(state, '--workers 2') },
    candidate: { name: '--queue, two qs workers', run: (state) => sweep(state, `--queue ${state.redis.url}`) },
    teardown: async (state) => {
      for (const w of state.workers) w.child.kill('SIGINT');
      await Promise.all(state.workers.map((w) => w.exited));
      await state.redis.stop();
      rmSync(state.dir, { recursive: true, force: true });
    },
  },
];
