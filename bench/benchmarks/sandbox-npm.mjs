// Enforcement must not cost the user time: `npm install` of the vite quickstart's dependencies in the
// bwrap sandbox (through the egress proxy, as every run goes) against the same install run directly
// on the host, each with its own warm npm cache, in the same run. The registry is whatever npm is
// configured with here (asked at run time).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, run } from '../helpers.mjs';

const PACKAGE = JSON.stringify({ name: 'vite-quickstart', private: true, version: '0.0.0', devDependencies: { vite: '7.3.8' } });
const INSTALL = 'npm install --no-audit --no-fund --loglevel=error';

function registryEndpoint() {
  const url = new URL(execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim());
  return `${url.hostname}:${url.port || (url.protocol === 'http:' ? 80 : 443)}`;
}

export default [
  {
    name: 'npm install (vite) in the bwrap sandbox, warm cache',
    iterations: 5,
    target: { max_ratio: 1.15 },
    async setup() {
      const { openSandbox, removeLayout } = await import(`${ROOT}packages/sandbox/dist/index.js`);
      const base = mkdtempSync(join(tmpdir(), 'ql-bench-npm-'));
      const policy = { explicit: [], docs_hosts: [], registries: [registryEndpoint()], registries_source: 'npm' };
      const sandbox = await openSandbox({ policy, backend: 'bwrap', baseDir: base, installHosts: false });
      const hostCache = join(base, 'host-cache');
      mkdirSync(hostCache);
      const state = { sandbox, removeLayout, base, hostCache, n: 0 };
      // Warm both caches with one install each.
      await inSandbox(state);
      await onHost(state);
      return state;
    },
    baseline: { name: 'npm install on the host', run: (s) => onHost(s) },
    candidate: { name: 'npm install in the sandbox', run: (s) => inSandbox(s) },
    async teardown({ sandbox, removeLayout, base }) {
      const root = sandbox.describe().root;
      await sandbox.close();
      removeLayout(root);
      rmSync(base, { recursive: true, force: true });
    },
  },
];

async function inSandbox(state) {
  const dir = `p${(state.n += 1)}`;
  const r = await state.sandbox.exec(`mkdir ${dir} && cd ${dir} && printf '%s' '${PACKAGE}' > package.json && ${INSTALL} && cd .. && rm -rf ${dir}`, { timeoutMs: 300_000 });
  if (r.exitCode !== 0) throw new Error(`npm install in the sandbox exited ${r.exitCode}: ${r.output.slice(-400)}`);
}

async function onHost(state) {
  const dir = join(state.base, `host-${(state.n += 1)}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), PACKAGE);
  await run(['bash', '-c', INSTALL], { cwd: dir, env: { npm_config_cache: state.hostCache } });
  rmSync(dir, { recursive: true, force: true });
}
