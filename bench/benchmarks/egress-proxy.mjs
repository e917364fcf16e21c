// The egress proxy on a large download from a loopback HTTP server, fetched by curl through the proxy
// (an absolute-URI request, and a CONNECT tunnel) against the same download made directly. The
// upstream runs in its own process, as a real one would, so the proxy's event loop is its own.
// The targets are measured against a server paced at 1 Gbit/s (faster than a CI runner's link):
// what a user's download costs. Unpaced, loopback moves ~3 GB/s and any user-space relay (socat
// included) costs several times that; those rows are references, not targets.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { ROOT, run } from '../helpers.mjs';

const SIZE = 200 * 1024 * 1024;
/** 1 Gbit/s, in bytes per second. */
const PACE = 125_000_000;
const PACED_SIZE = 100 * 1024 * 1024;
const serverScript = (size, pace) => `
const http = require('node:http');
const chunk = Buffer.alloc(1 << 20, 120);
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-length': ${size} });
  let left = ${size} / chunk.length;
  const start = Date.now();
  let sent = 0;
  const more = () => {
    while (left > 0) {
      // Paced: never ahead of the schedule (${pace} bytes/s, 0 for as fast as loopback goes).
      const due = ${pace} > 0 ? start + (sent / ${pace}) * 1000 - Date.now() : 0;
      if (due > 1) return setTimeout(more, due);
      left--; sent += chunk.length;
      if (!res.write(chunk)) return res.once('drain', more);
    }
    res.end();
  };
  more();
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

async function setup(size = SIZE, pace = 0) {
  const { startEgressProxy } = await import(`${ROOT}packages/sandbox/dist/index.js`);
  const server = spawn(process.execPath, ['-e', serverScript(size, pace)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = await once(server.stdout, 'data');
  const port = Number(String(line).trim());
  const proxy = await startEgressProxy({ policy: { explicit: [], docs_hosts: [], registries: [`127.0.0.1:${port}`], registries_source: 'default' } });
  return { server, port, proxy, url: `http://127.0.0.1:${port}/big` };
}

/** socat as a bare TCP relay: what any user-space hop costs at loopback speed, with no decision at all. */
async function withSocat() {
  const state = await setup(SIZE, 0);
  const probe = net.createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const relayPort = probe.address().port;
  await new Promise((resolve) => probe.close(resolve));
  state.socat = spawn('socat', [`TCP-LISTEN:${relayPort},bind=127.0.0.1,reuseaddr,fork`, `TCP:127.0.0.1:${state.port}`], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise((resolve) => net.connect(relayPort, '127.0.0.1').once('connect', function () { this.destroy(); resolve(true); }).once('error', () => resolve(false)));
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  state.relayUrl = `http://127.0.0.1:${relayPort}/big`;
  return state;
}

const curl = (args) => run(['curl', '-sS', '--fail', '-o', '/dev/null', '--noproxy', '', ...args]);
const teardown = async ({ server, proxy, socat }) => {
  await proxy.close();
  server.kill();
  socat?.kill();
};

const paced = () => setup(PACED_SIZE, PACE);

export default [
  {
    name: 'egress proxy: 100 MB at 1 Gbit/s, plain HTTP (absolute URI), within 1.1x of direct',
    iterations: 5,
    target: { max_ratio: 1.1 },
    setup: paced,
    baseline: { name: 'curl direct', run: ({ url }) => curl([url]) },
    candidate: { name: 'curl via the proxy', run: ({ url, proxy }) => curl(['-x', `http://${proxy.address}`, url]) },
    teardown,
  },
  {
    name: 'egress proxy: 100 MB at 1 Gbit/s through a CONNECT tunnel, within 1.1x of direct',
    iterations: 5,
    target: { max_ratio: 1.1 },
    setup: paced,
    baseline: { name: 'curl direct', run: ({ url }) => curl([url]) },
    candidate: { name: 'curl via a CONNECT tunnel', run: ({ url, proxy }) => curl(['-p', '-x', `http://${proxy.address}`, url]) },
    teardown,
  },
  {
    name: 'reference: 200 MB unpaced (loopback speed), plain HTTP through the proxy',
    iterations: 7,
    setup: () => setup(),
    baseline: { name: 'curl direct', run: ({ url }) => curl([url]) },
    candidate: { name: 'curl via the proxy', run: ({ url, proxy }) => curl(['-x', `http://${proxy.address}`, url]) },
    teardown,
  },
  {
    name: 'reference: 200 MB unpaced (loopback speed) through a CONNECT tunnel',
    iterations: 7,
    setup: () => setup(),
    baseline: { name: 'curl direct', run: ({ url }) => curl([url]) },
    candidate: { name: 'curl via a CONNECT tunnel', run: ({ url, proxy }) => curl(['-p', '-x', `http://${proxy.address}`, url]) },
    teardown,
  },
  {
    // Not a target: the floor the two above are measured against. On a 2-core machine the server,
    // curl and any relay compete for the cores, so even this bare copy costs well over 1.1x.
    name: 'reference: 200 MB through socat, a bare TCP relay (no decision, no recording)',
    iterations: 7,
    setup: withSocat,
    baseline: { name: 'curl direct', run: ({ url }) => curl([url]) },
    candidate: { name: 'curl via socat', run: ({ relayUrl }) => curl([relayUrl]) },
    teardown,
  },
];
