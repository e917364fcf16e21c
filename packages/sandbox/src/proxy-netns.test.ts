// The web ports of an allowed host need an upstream at a public address on 443 and 80: a private
// network namespace (unshare -rn) gets one on its loopback, so nothing on the host is touched. The
// proxy inside is the built library with the production address checks.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const DIST = fileURLToPath(new URL('../dist/proxy.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'qs-proxy-netns-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CHILD = `
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { startEgressProxy } from ${JSON.stringify(DIST)};

const PUBLIC = '8.8.8.8';
const serve = async (host, port) => {
  const s = http.createServer((req, res) => res.end(host + ':' + port + ' ' + req.url + ' host=' + req.headers.host));
  s.listen(port, host);
  await once(s, 'listening');
  return s;
};
const servers = [await serve(PUBLIC, 443), await serve(PUBLIC, 80), await serve(PUBLIC, 8443), await serve('127.0.0.1', 80), await serve('127.0.0.1', 443)];
let lookups = 0;
// Answers a public address, then loopback: a rebinding name. The proxy must ask once per connection
// and connect to what it checked.
const lookup = async () => [{ address: lookups++ % 2 === 0 ? PUBLIC : '127.0.0.1', family: 4 }];
const events = [];
const proxy = await startEgressProxy({ policy: { explicit: ['web.test'], docs_hosts: [], registries: [], registries_source: 'default' }, onEgress: (e) => events.push(e), lookup });

const get = (url, hostHeader) => new Promise((resolve, reject) => {
  http.get({ host: '127.0.0.1', port: proxy.port, path: url, headers: { host: hostHeader ?? new URL(url).host } }, (res) => {
    let text = '';
    res.on('data', (c) => (text += c));
    res.on('end', () => resolve(res.statusCode + ' ' + text.trim()));
  }).on('error', reject);
});
const tunnel = (target) => new Promise((resolve, reject) => {
  const s = net.connect(proxy.port, '127.0.0.1', () => s.write('CONNECT ' + target + ' HTTP/1.1\\r\\n\\r\\n'));
  let text = '';
  let sent = false;
  s.on('data', (c) => {
    text += c;
    if (!sent && /^HTTP\\/1\\.1 200/.test(text) && text.includes('\\r\\n\\r\\n')) {
      sent = true;
      text = '';
      s.write('GET /t HTTP/1.1\\r\\nHost: ignored.test\\r\\nConnection: close\\r\\n\\r\\n');
    }
  });
  s.on('end', () => resolve((text.split('\\r\\n')[0].startsWith('HTTP/1.1 200') ? text.split('\\r\\n\\r\\n').pop() : text.split('\\r\\n')[0]).trim()));
  s.on('error', reject);
});

const out = {
  http80: await get('http://web.test/a'),
  http80again: await get('http://web.test/b', 'localhost'),
  connect443: await tunnel('web.test:443'),
  connect443again: await tunnel('web.test:443'),
  connect80: await tunnel('web.test:80'),
  connect8443: await tunnel('web.test:8443'),
  http8443: await get('http://web.test:8443/c'),
  lookups,
};
await proxy.close();
for (const s of servers) s.close();
out.events = events;
process.stdout.write(JSON.stringify(out));
`;

it('reaches an allowed host on 443 and 80 at the address it checked, refuses 8443, and never looks a name up twice', () => {
  const file = join(dir, 'child.mjs');
  writeFileSync(file, CHILD);
  const r = spawnSync('unshare', ['-rn', 'sh', '-c', `ip link set lo up && ip addr add 8.8.8.8/32 dev lo && exec "${process.execPath}" "${file}"`], { encoding: 'utf8', timeout: 60_000 });
  expect(r.stderr).toBe('');
  const out = JSON.parse(r.stdout) as Record<string, unknown> & { events: Record<string, unknown>[] };
  expect(out.http80).toBe('200 8.8.8.8:80 /a host=web.test');
  // The next answer for the same name is loopback: refused, not connected to the earlier address.
  expect(out.http80again).toBe('403 web.test resolves to 127.0.0.1, a loopback address: only a registry configured at exactly web.test:80 may be reached there');
  // Plain HTTP in a tunnel is read by the proxy: it goes to the address the tunnel was checked at,
  // with the tunnel's host as its Host, never the client's.
  expect(out.connect443).toBe('8.8.8.8:443 /t host=web.test:443');
  expect(out.connect443again).toBe('HTTP/1.1 403 Forbidden');
  expect(out.connect80).toBe('8.8.8.8:80 /t host=web.test');
  expect(out.connect8443).toBe('HTTP/1.1 403 Forbidden');
  expect(out.http8443).toBe('403 web.test:8443: web.test is allowed only on port 80, 443, not 8443');
  // One lookup per connection the policy allowed; those it refused were never looked up.
  expect(out.lookups).toBe(5);
  expect(out.events.map((e) => `${e.type} ${e.method} ${e.port} ${e.reason ?? ''}`)).toEqual([
    'egress.allowed GET 80 explicit',
    'egress.blocked GET 80 private_address',
    'egress.allowed CONNECT 443 explicit',
    'egress.allowed GET 443 explicit',
    'egress.blocked CONNECT 443 private_address',
    'egress.allowed CONNECT 80 explicit',
    'egress.allowed GET 80 explicit',
    'egress.blocked CONNECT 8443 not_allowlisted',
    'egress.blocked GET 8443 not_allowlisted',
  ]);
});
