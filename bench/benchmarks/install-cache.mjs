// The shared install cache (`qs run --install-cache`): a repeat's `npm install` in a fresh bwrap
// sandbox (a new home, as every attempt gets) seeded from the store, against the same install cold.
// The store was filled once, in setup, by harvesting an earlier attempt's home the way qs-check does
// (its blobs, and the packuments it asked for, fetched again by the harness).
// The registry is whatever npm is configured with here (asked at run time).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, runShell } from '../helpers.mjs';

const PACKAGE = JSON.stringify({ name: 'express-quickstart', private: true, version: '0.0.0', dependencies: { express: '4.21.2' } });
const INSTALL = 'npm install --no-audit --no-fund --loglevel=error';
const TASK = 'name: npm-quickstart\ngoal: Install express.\ndocs:\n  path:\n    - https://docs.greeter.test/install.html\nreplay:\n  - npm init -y > /dev/null && npm install express@4.21.2 --no-audit --no-fund --loglevel=error\nsuccess:\n  script: test -f node_modules/express/package.json\n';

function registryEndpoint() {
  const url = new URL(execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim());
  return `${url.hostname}:${url.port || (url.protocol === 'http:' ? 80 : 443)}`;
}

/** One attempt: a new sandbox (seeded from the store or not; with the project's lockfile or not), the install, the sandbox gone. */
async function attempt(s, seeded, lock = false) {
  const sandbox = await s.openSandbox({ policy: s.policy, backend: 'bwrap', baseDir: s.base, installHosts: false });
  const { home, root, workspace } = sandbox.describe();
  try {
    if (seeded) await s.seedInstallCache(s.store, home);
    // Written from inside, as the sandbox's user (a root harness's files would be read-only to npm there).
    const files = `printf '%s' '${PACKAGE}' > package.json${lock ? ` && echo ${Buffer.from(s.lockfile).toString('base64')} | base64 -d > package-lock.json` : ''}`;
    const r = await sandbox.exec(`${files} && ${INSTALL}`, { timeoutMs: 300_000 });
    if (r.exitCode !== 0) throw new Error(`npm install exited ${r.exitCode}: ${r.output.slice(-400)}`);
    if (s.harvest) {
      s.harvestInstallCache(s.store, home);
      // As qs-check does: the packuments this install asked for, fetched by the harness itself.
      await s.fetchInstallMetadata(s.store, s.wantedMetadata(home, s.registry), s.registry);
      s.lockfile = readFileSync(join(workspace, 'package-lock.json'), 'utf8');
    }
  } finally {
    await sandbox.close();
    s.removeLayout({ root });
  }
}

/** The store as a sweep's first attempt leaves it: that attempt ran cold and was harvested. */
async function filledStore() {
  const { openSandbox, removeLayout, seedInstallCache, harvestInstallCache, fetchInstallMetadata, wantedMetadata, npmRegistry } = await import(`${ROOT}packages/sandbox/dist/index.js`);
  const base = mkdtempSync(join(tmpdir(), 'ql-bench-install-cache-'));
  const policy = { explicit: [], docs_hosts: [], registries: [registryEndpoint()], registries_source: 'npm' };
  const s = { openSandbox, removeLayout, seedInstallCache, harvestInstallCache, fetchInstallMetadata, wantedMetadata, registry: npmRegistry(process.cwd()), base, policy, store: join(base, 'store'), harvest: true };
  await attempt(s, false);
  s.harvest = false;
  return s;
}

export default [
  {
    name: 'npm install (express) in a fresh bwrap sandbox: seeded from the install cache vs cold',
    iterations: 5,
    target: { max_ratio: 0.5 },
    setup: filledStore,
    baseline: { name: 'cold (a new home, an empty npm cache)', run: (s) => attempt(s, false) },
    candidate: { name: 'seeded from the install cache', run: (s) => attempt(s, true) },
    async teardown({ base }) {
      rmSync(base, { recursive: true, force: true });
    },
  },
  {
    // A quickstart that ships its lockfile: npm needs no metadata, so every download is a blob the store has.
    name: 'npm install (express, with its package-lock.json) in a fresh bwrap sandbox: seeded vs cold',
    iterations: 5,
    target: { max_ratio: 0.5 },
    setup: filledStore,
    baseline: { name: 'cold (a new home, an empty npm cache)', run: (s) => attempt(s, false, true) },
    candidate: { name: 'seeded from the install cache', run: (s) => attempt(s, true, true) },
    async teardown({ base }) {
      rmSync(base, { recursive: true, force: true });
    },
  },
  {
    // The issue's own measure: a whole sweep, `qs run --repeat 5`, with a shared cache that starts
    // empty (attempt 1 is cold and fills it, harvest and packument fetches included) against none.
    name: 'qs run --repeat 5 of a task that runs npm install (express): --install-cache (empty at start) vs none (wall, bwrap)',
    iterations: 2,
    target: { max_ratio: 0.5 },
    setup() {
      const dir = mkdtempSync(join(tmpdir(), 'ql-bench-install-sweep-'));
      writeFileSync(join(dir, 'npm-quickstart.yaml'), TASK);
      return { dir };
    },
    baseline: { name: 'no cache', run: ({ dir }) => sweep(dir, false) },
    candidate: { name: '--install-cache', run: ({ dir }) => sweep(dir, true) },
    teardown: ({ dir }) => rmSync(dir, { recursive: true, force: true }),
  },
  {
    // The same sweep with the store as the sweep before it left it (a team's nightly run, a CI cache
    // restored): no attempt is cold. Within the packuments' 15 minutes, as the runs here are.
    name: 'qs run --repeat 5 of a task that runs npm install (express): --install-cache kept from an earlier sweep vs none (wall, bwrap)',
    iterations: 2,
    target: { max_ratio: 0.5 },
    async setup() {
      const dir = mkdtempSync(join(tmpdir(), 'ql-bench-install-kept-'));
      writeFileSync(join(dir, 'npm-quickstart.yaml'), TASK);
      const store = join(dir, 'store');
      await runShell(`${sweepCommand(dir, 1)} --install-cache "${store}" > /dev/null`);
      return { dir, store };
    },
    baseline: { name: 'no cache', run: ({ dir }) => sweep(dir, false) },
    candidate: { name: '--install-cache (kept)', run: ({ dir, store }) => runShell(`${sweepCommand(dir, 5)} --install-cache "${store}" > /dev/null`) },
    teardown: ({ dir }) => rmSync(dir, { recursive: true, force: true }),
  },
];

const sweepCommand = (dir, repeat) => `node ${ROOT}packages/qs/bin/qs.js run -q ${dir}/npm-quickstart.yaml --repeat ${repeat} --docs-map https://docs.greeter.test/=${ROOT}fixtures/docs-site`;

function sweep(dir, cached) {
  const qs = sweepCommand(dir, 5);
  // A fresh store each time: the first attempt of the sweep is as cold as without.
  return runShell(cached ? `c=$(mktemp -d "${dir}/cache-XXXXXX") && ${qs} --install-cache "$c" > /dev/null; rc=$?; rm -rf "$c"; exit $rc` : `${qs} > /dev/null`);
}
