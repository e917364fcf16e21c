// The enforced (bubblewrap) sandbox: time to ready (workspace, policy, proxy listening) against making
// a plain temp folder, and per-command overhead against a plain `bash -c true`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from '../helpers.mjs';

const lib = () => import(`${ROOT}packages/sandbox/dist/index.js`);
const policy = { explicit: [], docs_hosts: ['docs.example.test'], registries: [], registries_source: 'default' };
const bashTrue = () =>
  new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', 'true'], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', resolve);
  });

export default [
  {
    name: 'sandbox ready (bwrap: workspace, policy, proxy listening)',
    iterations: 15,
    target: { max_ms: 200 },
    async setup() {
      const { openSandbox, removeLayout } = await lib();
      return { openSandbox, removeLayout, base: mkdtempSync(join(tmpdir(), 'ql-bench-sbx-')) };
    },
    baseline: {
      name: 'mkdtemp + rm',
      run: ({ base }) => rmSync(mkdtempSync(join(base, 'plain-')), { recursive: true }),
    },
    candidate: {
      name: 'openSandbox',
      run: async ({ openSandbox, removeLayout, base }) => {
        const t0 = performance.now();
        const sandbox = await openSandbox({ policy, backend: 'bwrap', baseDir: base, installHosts: false });
        const ms = performance.now() - t0;
        const described = sandbox.describe();
        await sandbox.close();
        removeLayout(described.root);
        return { ms };
      },
    },
    teardown: ({ base }) => rmSync(base, { recursive: true, force: true }),
  },
  {
    name: 'per-command overhead in the bwrap sandbox',
    iterations: 30,
    target: { max_ms: 25, overhead: true },
    async setup() {
      const { openSandbox, removeLayout } = await lib();
      const base = mkdtempSync(join(tmpdir(), 'ql-bench-sbx-'));
      const sandbox = await openSandbox({ policy, backend: 'bwrap', baseDir: base, installHosts: false });
      return { sandbox, removeLayout, base };
    },
    baseline: { name: 'bash -c true', run: () => bashTrue() },
    candidate: {
      name: 'sandbox.exec("true")',
      run: async ({ sandbox }) => {
        const result = await sandbox.exec('true', { timeoutMs: 10_000 });
        if (result.exitCode !== 0) throw new Error(`exec true exited ${result.exitCode}: ${result.output}`);
      },
    },
    async teardown({ sandbox, removeLayout, base }) {
      const root = sandbox.describe().root;
      await sandbox.close();
      removeLayout(root);
      rmSync(base, { recursive: true, force: true });
    },
  },
];
