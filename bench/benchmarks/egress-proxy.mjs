// The egress proxy on a large download: 200 MB from a loopback HTTP server, fetched by curl through
// the proxy (an absolute-URI request, and a CONNECT tunnel) against the same download made directly.
// The upstream runs in its own process, as a real one would, so the proxy's event loop is its own.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { ROOT, run } from '../helpers.mjs';

const SIZE = 200 * 1024 * 1024;
const SERVER = `
const http = require('node:http');
const chunk = Buffer.alloc(1 << 20, 120);
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-length': ${SIZE} });
  let left = ${SIZE} / chunk.length;
  const more = () => { while (left > 0) { left--; if (!res.write(chunk)) return res.once('drain', more); } res.end(); };
  more();
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

async function setup() {
  const { startEgressProxy } = await import(`${ROOT}packages/sandbox/dist/index.js`);
  const server = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = await once(server.stdout, 'data');
  const port = Number(String(line).trim());
  const proxy = await startEgressProxy({ policy: { explicit: [], docs_hosts: [], registries: [`127.0.0.1:${port}`], registries_source: 'default' } });
  return { server, port, proxy, url: `http://127.0.0.1:${port}/big` };
}

/** socat as a bare TCP relay: what any user-space hop costs at loopback speed, with no decision at all. */
async function withSocat() {
  const state = await setup();
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

export default [
  {
    name: 'egress proxy: 200 MB plain-HTTP download (absolute URI) within 1.1x of direct',
    iterations: 7,
    target: { max_ratio: 1.1 },
    setup,
    baseline: { name: 'curl direct', run: ({ url }) => curl([url]) },
    candidate: { name: 'curl via the proxy', run: ({ url, proxy }) => curl(['-x', `http://${proxy.address}`, url]) },
    teardown,
  },
  {
    name: 'egress proxy: 200 MB through a CONNECT tunnel within 1.1x of direct',
    iterations: 7,
    target: { max_ratio: 1.1 },
    setup,
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
