import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEgressProxy, type EgressProxy } from './proxy.js';
import type { EgressEvent } from './types.js';

// A real upstream on loopback, reached through a real proxy by a real client; `localhost` is the
// allowed name, so no DNS beyond /etc/hosts is needed.
let upstream: http.Server;
let upstreamPort: number;
let proxy: EgressProxy;
const events: EgressEvent[] = [];

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => res.end(`upstream saw ${req.method} ${req.url} ${body}`));
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  upstreamPort = (upstream.address() as net.AddressInfo).port;
  proxy = await startEgressProxy({
    policy: { explicit: ['localhost'], docs_hosts: ['docs.example.com'], registries: ['registry.example.org'], registries_source: 'default' },
    onEgress: (e) => events.push(e),
  });
});

afterAll(async () => {
  await proxy.close();
  upstream.close();
});

function viaProxy(url: string, method = 'GET', body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: proxy.port, method, path: url, headers: { host: new URL(url).host } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends CONNECT and returns the proxy's status line, plus the socket when the tunnel is open. */
function connect(target: string): Promise<{ status: string; socket: net.Socket; rest: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(proxy.port ?? 0, '127.0.0.1', () => socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    let head = '';
    const onData = (c: Buffer): void => {
      head += c.toString();
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      const rest = head.slice(end + 4);
      if (/ 200 /.test(head.split('\r\n')[0] ?? '')) resolve({ status: head.split('\r\n')[0] ?? '', socket, rest });
      else {
        socket.once('end', () => resolve({ status: head.split('\r\n')[0] ?? '', socket, rest: rest }));
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
  it('forwards an allowed absolute-URI request and records it with its path', async () => {
    const r = await viaProxy(`http://localhost:${upstreamPort}/hello?x=1`, 'POST', 'data');
    expect(r).toEqual({ status: 200, text: 'upstream saw POST /hello?x=1 data' });
    expect(last()).toEqual({ type: 'egress.allowed', host: 'localhost', port: upstreamPort, method: 'POST', path: '/hello?x=1', reason: 'explicit', rule: 'localhost' });
  });

  it('tunnels an allowed CONNECT both ways', async () => {
    const { status, socket } = await connect(`localhost:${upstreamPort}`);
    expect(status).toMatch(/^HTTP\/1\.1 200/);
    expect(last()).toMatchObject({ type: 'egress.allowed', host: 'localhost', port: upstreamPort, method: 'CONNECT', reason: 'explicit' });
    socket.write('GET /tunnel HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    let text = '';
    socket.on('data', (c) => (text += c));
    await once(socket, 'end');
    expect(text).toContain('upstream saw GET /tunnel');
    socket.destroy();
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

  it('refuses a host on no list, and a raw IP', async () => {
    const c = await connect('elsewhere.test:443');
    expect(c.status).toMatch(/403/);
    expect(c.rest).toMatch(/elsewhere\.test is not on the allowlist/);
    expect(last()).toMatchObject({ type: 'egress.blocked', host: 'elsewhere.test', reason: 'not_allowlisted' });
    c.socket.destroy();
    const ip = await viaProxy('http://192.0.2.10/');
    expect(ip.status).toBe(403);
    expect(last()).toMatchObject({ type: 'egress.blocked', host: '192.0.2.10', port: 80, reason: 'ip_literal' });
    const v6 = await connect('[2001:db8::1]:443');
    expect(v6.status).toMatch(/403/);
    expect(last()).toMatchObject({ host: '2001:db8::1', reason: 'ip_literal' });
    v6.socket.destroy();
  });

  it('refuses a CONNECT to a port that cannot exist, rather than tunnelling to 443', async () => {
    for (const target of ['registry.example.org:99999', 'registry.example.org:0']) {
      const c = await connect(target);
      expect(c.status).toMatch(/400/);
      expect(last()).toMatchObject({ type: 'egress.blocked', host: 'registry.example.org', port: 0, reason: 'bad_request', message: `CONNECT ${target}: the port must be 1-65535` });
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

  it('answers 502 and records egress.error when an allowed host cannot be reached', async () => {
    const closed = net.createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as net.AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    const c = await connect(`localhost:${port}`);
    expect(c.status).toMatch(/502/);
    expect(events.at(-2)).toMatchObject({ type: 'egress.allowed', host: 'localhost', port });
    expect(last()).toMatchObject({ type: 'egress.error', host: 'localhost', port, method: 'CONNECT' });
    expect((last() as { error: string }).error).toMatch(/ECONNREFUSED/);
    c.socket.destroy();
    const r = await viaProxy(`http://localhost:${port}/x`);
    expect(r.status).toBe(502);
    expect(last()).toMatchObject({ type: 'egress.error', host: 'localhost', port, method: 'GET', path: '/x' });
  });
});
