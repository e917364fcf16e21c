// invokeCli's own cost per model call (argv, stdin, process group, deadline timer, parsing) over a bare spawn of an instant CLI.
import { spawn } from 'node:child_process';
import { ROOT } from '../helpers.mjs';

const { invokeCli } = await import(`${ROOT}packages/models/dist/index.js`);
const PROMPT = 'You are the judge. '.repeat(500);

/** The baseline: what any runner must do at least — spawn, write stdin, collect stdout, wait. */
function bareSpawn() {
  return new Promise((resolve, reject) => {
    const child = spawn('cat', [], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('close', () => resolve(out));
    child.stdin.end(PROMPT);
  });
}

export default {
  name: 'invokeCli overhead per call (instant CLI: cat)',
  iterations: 40,
  target: { max_ms: 5, overhead: true },
  baseline: { name: 'child_process.spawn', run: bareSpawn },
  candidate: {
    name: 'invokeCli',
    run: async () => {
      const r = await invokeCli({ argv: ['cat'], prompt: PROMPT, cwd: ROOT, timeoutMs: 10_000 });
      if (r.text !== PROMPT) throw new Error(`invokeCli returned ${r.text.length} chars`);
    },
  },
};
