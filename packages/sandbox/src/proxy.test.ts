import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEgressProxy, type EgressProxy, type LookupAll } from './proxy.js';
import type { EgressEvent } from './types.js';

// A real upstream on loopback, reached through a real proxy by a real client. Names resolve through
// a table given to the proxy, so no real DNS is asked; the address checks are the production ones.
let upstream: http.Server;
let upstreamPort: number;
let proxy: EgressProxy;
const events: EgressEvent[] = [];
const asked: string[] = [];

const TABLE: Record<string, string[]> = {
  'web.test': ['127.0.0.1'],
  'mirror.test': ['127.0.0.1'],
  'mixed.test': ['8.8.8.8', '10.1.2.3'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'meta.test': ['169.254.169.254'],
  'github.com': ['127.0.0.1'],
};
const lookup: LookupAll = async (host) => {
  asked.push(host);
  const list = TABLE[host];
  if (!list) throw new Error(`getaddrinfo ENOTFOUND ${host}`);
  return list.map((address) => ({ address, family: net.isIP(address) }));
};

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => res.end(`upstream saw ${req.method} ${req.url} host=${req.headers.host} ${body}`));
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  upstreamPort = (upstream.address() as net.AddressInfo).port;
  proxy = await startEgressProxy({
    policy: {
      explicit: ['web.test', 'mixed.test', 'mapped.test', 'meta.test', '0.0.1'],
      docs_hosts: ['docs.example.com'],
      registries: [`mirror.test:${upstreamPort}`, `127.0.0.1:${upstreamPort}`],
      install_hosts: ['github.com'],
      registries_source: 'default',
    },
    onEgress: (e) => events.push(e),
    lookup,
  });
});

afterAll(async () => {
  await proxy.close();
  upstream.close();
});

function viaProxy(url: string, method = 'GET', body?: string, host = new URL(url).host): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: proxy.port, method, path: url, headers: { host } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends CONNECT and returns the proxy's status line, plus the socket when the tunnel is open. */
function connect(target: string, port = proxy.port ?? 0): Promise<{ status: string; socket: net.Socket; rest: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    let head = '';
    const onData = (c: Buffer): void => {
      head += c.toString();
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      const rest = head.slice(end + 4);
      if (/ 200 /.test(head.split('\r\n')[0] ?? '')) resolve({ status: head.split('\r\n')[0] ?? '', socket, rest });
      else {
        socket.on('data', (more: Buffer) => (head += more.toString()));
        socket.once('close', () => resolve({ status: head.split('\r\n')[0] ?? '', socket, rest: head.slice(end + 4) }));
      }
    };
    socket.on('data', onData);
    socket.on('error', reject);
  });
}

const last = (): EgressEvent | undefined => events.at(-1);

describe('egress proxy', () => {
  it('forwards a request to a registry on its configured port, and records it with its path', async () => {
    const r = await viaProxy(`http://mirror.test:${upstreamPort}/hello?x=1`, 'POST', 'data');
    expect(r).toEqual({ status: 200, text: `upstream saw POST /hello?x=1 host=mirror.test:${upstreamPort} data` });
    expect(last()).toEqual({ type: 'egress.allowed', host: 'mirror.test', port: upstreamPort, method: 'POST', path: '/hello?x=1', reason: 'registry', rule: `mirror.test:${upstreamPort}` });
  });

  it('tunnels a CONNECT to a registry on its configured port both ways', async () => {
    const { status, socket } = await connect(`MIRROR.test.:${upstreamPort}`);
    expect(status).toMatch(/^HTTP\/1\.1 200/);
    expect(last()).toMatchObject({ type: 'egress.allowed', host: 'mirror.test', port: upstreamPort, method: 'CONNECT', reason: 'registry' });
    socket.write('GET /tunnel HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    let text = '';
    socket.on('data', (c) => (text += c));
    await once(socket, 'end');
    expect(text).toContain('upstream saw GET /tunnel');
    socket.destroy();
  });

  it('ends a tunnel whose client ends its side before sending anything, and the upstream connection with it', async () => {
    const connections = (): Promise<number> => new Promise((resolve, reject) => upstream.getConnections((e, n) => (e ? reject(e) : resolve(n))));
    const before = await connections();
    const { status, socket } = await connect(`mirror.test:${upstreamPort}`);
    expect(status).toMatch(/^HTTP\/1\.1 200/);
    expect(await connections()).toBe(before + 1);
    socket.end();
    await once(socket, 'close');
    for (let i = 0; i < 200 && (await connections()) > before; i++) await new Promise((r) => setTimeout(r, 5));
    expect(await connections()).toBe(before);
  });

  it('refuses a registry on any other port, and says which port it is allowed on', async () => {
    for (const port of [443, 80, upstreamPort + 1]) {
      const c = await connect(`mirror.test:${port}`);
      expect(c.status).toMatch(/403/);
      expect(c.rest).toContain(`only on port ${upstreamPort}, not ${port}`);
      expect(last()).toMatchObject({ type: 'egress.blocked', host: 'mirror.test', port, method: 'CONNECT', reason: 'not_allowlisted' });
      c.socket.destroy();
    }
    const r = await viaProxy(`http://mirror.test:${upstreamPort + 1}/x`);
    expect(r.status).toBe(403);
    expect(last()).toMatchObject({ type: 'egress.blocked', host: 'mirror.test', port: upstreamPort + 1, method: 'GET', path: '/x', reason: 'not_allowlisted' });
  });

  it('refuses an allowed host on any port but 443 and 80', async () => {
    for (const port of [8443, 22, upstreamPort]) {
      const c = await connect(`web.test:${port}`);
      expect(c.status).toMatch(/403/);
      expect(c.rest).toContain(`web.test is allowed only on port 80, 443, not ${port}`);
      expect(last()).toMatchObject({ type: 'egress.blocked', host: 'web.test', port, reason: 'not_allowlisted' });
      c.socket.destroy();
    }
    const r = await viaProxy('http://web.test:8443/');
    expect(r.status).toBe(403);
    expect(last()).toMatchObject({ type: 'egress.blocked', host: 'web.test', port: 8443, method: 'GET', reason: 'not_allowlisted' });
  });

  it('refuses an allowed name whose addresses are not public, unless it is a configured registry endpoint', async () => {
    const cases: [string, RegExp][] = [
      ['web.test:443', /web\.test resolves to 127\.0\.0\.1, a loopback address/],
      ['web.test:80', /loopback/],
      ['mixed.test:443', /mixed\.test resolves to 10\.1\.2\.3, a private address/],
      ['mapped.test:443', /::ffff:127\.0\.0\.1, a loopback \(IPv4 127\.0\.0\.1 inside IPv6\)/],
      ['meta.test:80', /169\.254\.169\.254, a link-local/],
      ['github.com:443', /loopback/],
    ];
    for (const [target, why] of cases) {
      const c = await connect(target);
      expect(c.status, target).toMatch(/403/);
      expect(c.rest, target).toMatch(why);
      expect(last(), target).toMatchObject({ type: 'egress.blocked', host: target.replace(/:\d+$/, ''), method: 'CONNECT', reason: 'private_address', message: expect.stringMatching(why) });
      c.socket.destroy();
    }
    const r = await viaProxy('http://web.test/');
    expect(r.status).toBe(403);
    expect(r.text).toMatch(/only a registry configured at exactly web\.test:80 may be reached there/);
    expect(last()).toMatchObject({ type: 'egress.blocked', host: 'web.test', port: 80, method: 'GET', path: '/', reason: 'private_address' });
    // The registry's own address, given as an IP literal endpoint, is reachable on its port only.
    const ip = await viaProxy(`http://127.0.0.1:${upstreamPort}/ip`);
    expect(ip.status).toBe(200);
    expect(last()).toMatchObject({ type: 'egress.allowed', host: '127.0.0.1', reason: 'registry' });
  });

  it('sends upstream the host it decided on, never the client\'s Host header', async () => {
    for (const smuggled of ['evil.test', 'web.test', `127.0.0.1:${upstreamPort}`, 'mirror.test']) {
      const r = await viaProxy(`http://mirror.test:${upstreamPort}/who`, 'GET', undefined, smuggled);
      expect(r.text, smuggled).toBe(`upstream saw GET /who host=mirror.test:${upstreamPort} `);
    }
    // A second Host header, or one spelt differently, is not forwarded either.
    const raw = await new Promise<string>((resolve, reject) => {
      const s = net.connect(proxy.port ?? 0, '127.0.0.1', () =>
        s.write(`GET http://mirror.test:${upstreamPort}/raw HTTP/1.1\r\nHOST: evil.test\r\nConnection: close\r\n\r\n`),
      );
      let text = '';
      s.on('data', (c) => (text += c));
      s.on('end', () => resolve(text));
      s.on('error', reject);
    });
    expect(raw).toContain(`host=mirror.test:${upstreamPort} `);
    expect(raw).not.toContain('evil.test');
  });

  it('matches install hosts exactly: a subdomain is refused and recorded', async () => {
    for (const target of ['gist.github.com:443', 'raw.github.com:443', 'x.github.com.:80']) {
      const c = await connect(target);
      expect(c.status, target).toMatch(/403/);
      expect(last()).toMatchObject({ type: 'egress.blocked', host: target.replace(/\.?:\d+$/, ''), reason: 'not_allowlisted' });
      c.socket.destroy();
    }
  });

  it('refuses a docs host with 403 and a one-line pointer to read_docs', async () => {
    const r = await viaProxy('http://docs.example.com/quickstart');
    expect(r.status).toBe(403);
    expect(r.text).toBe('docs.example.com is a documentation host: use read_docs to read it\n');
    expect(last()).toEqual({ type: 'egress.blocked', host: 'docs.example.com', port: 80, method: 'GET', path: '/quickstart', reason: 'docs_host', message: r.text.trim() });
    const c = await connect('DOCS.example.com.:443');
    expect(c.status).toMatch(/^HTTP\/1\.1 403/);
    expect(last()).toMatchObject({ type: 'egress.blocked', host: 'docs.example.com', port: 443, method: 'CONNECT', reason: 'docs_host' });
    c.socket.destroy();
  });

  it('refuses a host on no list, and raw IPs in any spelling, matching IP literals only exactly', async () => {
    const c = await connect('elsewhere.test:443');
    expect(c.status).toMatch(/403/);
    expect(c.rest).toMatch(/elsewhere\.test:443 is not on the allowlist/);
    expect(last()).toMatchObject({ type: 'egress.blocked', host: 'elsewhere.test', reason: 'not_allowlisted' });
    c.socket.destroy();
    const ip = await viaProxy('http://192.0.2.10/');
    expect(ip.status).toBe(403);
    expect(last()).toMatchObject({ type: 'egress.blocked', host: '192.0.2.10', port: 80, reason: 'ip_literal' });
    // `0.0.1` is on the explicit list: it must not cover 10.0.0.1.
    // Other spellings of the registry's 127.0.0.1 are that address, refused on a port it is not configured on.
    const spellings = [
      ['10.0.0.1:443', '10.0.0.1', 'ip_literal'],
      ['[2001:db8::1]:443', '2001:db8::1', 'ip_literal'],
      ['[::ffff:127.0.0.1]:443', '::ffff:7f00:1', 'ip_literal'],
      ['0x7f.1:443', '127.0.0.1', 'not_allowlisted'],
      ['2130706433:443', '127.0.0.1', 'not_allowlisted'],
    ] as const;
    for (const [target, host, reason] of spellings) {
      const v = await connect(target);
      expect(v.status, target).toMatch(/403/);
      expect(last(), target).toMatchObject({ type: 'egress.blocked', host, reason });
      v.socket.destroy();
    }
    expect(asked.filter((h) => /^[\d.x:]+$/.test(h))).toEqual([]);
  });

  it('refuses a CONNECT to a port that cannot exist, rather than tunnelling to 443', async () => {
    for (const target of ['mirror.test:99999', 'mirror.test:0']) {
      const c = await connect(target);
      expect(c.status).toMatch(/400/);
      expect(last()).toMatchObject({ type: 'egress.blocked', host: 'mirror.test', port: 0, reason: 'bad_request', message: `CONNECT ${target}: the port must be 1-65535` });
      c.socket.destroy();
    }
  });

  it('refuses a relative URL (a client that forgot it talks to a proxy)', async () => {
    const r = await new Promise<{ status: number }>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: proxy.port, path: '/plain' }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0 });
      }).on('error', reject);
    });
    expect(r.status).toBe(403);
    expect(last()).toMatchObject({ type: 'egress.blocked', host: '(relative-url)', reason: 'bad_request', path: '/plain' });
  });

  it('answers 502 and records egress.error when an allowed host cannot be reached or resolved', async () => {
    const closed = net.createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as net.AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    const p = await startEgressProxy({ policy: { explicit: ['gone.test'], docs_hosts: [], registries: [`mirror.test:${port}`], registries_source: 'default' }, onEgress: (e) => events.push(e), lookup });
    try {
      const c = await connect(`mirror.test:${port}`, p.port);
      expect(c.status).toMatch(/502/);
      expect(events.at(-2)).toMatchObject({ type: 'egress.allowed', host: 'mirror.test', port });
      expect(last()).toMatchObject({ type: 'egress.error', host: 'mirror.test', port, method: 'CONNECT' });
      expect((last() as { error: string }).error).toMatch(/ECONNREFUSED/);
      c.socket.destroy();
      const n = await connect('gone.test:443', p.port);
      expect(n.status).toMatch(/502/);
      expect(last()).toMatchObject({ type: 'egress.error', host: 'gone.test', port: 443, error: 'getaddrinfo ENOTFOUND gone.test' });
      n.socket.destroy();
    } finally {
      await p.close();
    }
  });

  it('reports a decision whose lookup was still running before close() resolves', async () => {
    let release: () => void = () => undefined;
    let started: () => void = () => undefined;
    const asking = new Promise<void>((r) => (started = r));
    const slow: LookupAll = () =>
      new Promise((resolve) => {
        release = () => resolve([]);
        started();
      });
    const seen: EgressEvent[] = [];
    const p = await startEgressProxy({ policy: { explicit: ['slow.test'], docs_hosts: [], registries: [], registries_source: 'default' }, onEgress: (e) => seen.push(e), lookup: slow });
    const socket = net.connect(p.port ?? 0, '127.0.0.1', () => socket.write('CONNECT slow.test:443 HTTP/1.1\r\n\r\n'));
    socket.on('error', () => undefined);
    await asking;
    const closing = p.close();
    release();
    await closing;
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatchObject({ type: 'egress.allowed', host: 'slow.test' });
    expect(seen[1]).toMatchObject({ type: 'egress.error', host: 'slow.test', error: 'no address for slow.test' });
    socket.destroy();
  });
});
