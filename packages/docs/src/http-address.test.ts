// The reader never connects to an address that is no docs site's (a cloud's metadata service), through
// Node's real fetch: written in the URL, or a name resolving there at connect time. Name resolution is
// the outer boundary, so `metadata.test` and `mixed.test` are answered here; every other name is
// resolved as usual.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const FAKE: Record<string, Array<{ address: string; family: number }>> = {
  'metadata.test': [{ address: '169.254.169.254', family: 4 }],
  'mixed.test': [
    { address: 'fe80::1', family: 6 },
    { address: '127.0.0.1', family: 4 },
  ],
};
const asked: string[] = [];

vi.mock('node:dns', async (original) => {
  const dns = await original<typeof import('node:dns')>();
  const lookup = (host: string, options: { all?: boolean }, callback: (e: Error | null, a: unknown, f?: number) => void): void => {
    asked.push(host);
    const fake = FAKE[host];
    if (fake === undefined) return void dns.lookup(host, options as never, callback as never);
    if (options.all) callback(null, fake);
    else callback(null, fake[0]!.address, fake[0]!.family);
  };
  return { ...dns, default: { ...dns, lookup }, lookup };
});

const { refusedAddress, request } = await import('./http.js');

let server: Server;
let port: number;
let hits = 0;
beforeAll(async () => {
  server = createServer((_req, res) => {
    hits += 1;
    res.writeHead(200, { 'content-type': 'text/plain' }).end('the docs');
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

describe('the addresses the docs reader never reaches', () => {
  it('names the metadata services and every link-local, unspecified or multicast address, and leaves loopback and private ones readable', () => {
    for (const a of ['169.254.169.254', '169.254.0.1', 'fe80::1', '[fd00:ec2::254]', 'fd00:ec2::23', 'fd20:ce::254', '100.100.100.200', '192.0.0.192', '168.63.129.16', '0.0.0.0', '::', '::ffff:169.254.169.254', '224.0.0.1', 'ff02::1']) expect(refusedAddress(a), a).toBeDefined();
    // The metadata addresses outside the link-local range, in every IPv6 form that carries an IPv4 address.
    for (const a of ['::ffff:100.100.100.200', '[::ffff:6464:64c8]', '::ffff:0:6464:64c8', '64:ff9b::6464:64c8', '64:ff9b::100.100.100.200', '::ffff:c000:c0', '2002:6464:64c8::1', '::ffff:a83f:8110']) expect(refusedAddress(a), a).toBe('a cloud metadata service');
    for (const a of ['127.0.0.1', '::1', '10.0.0.5', '192.168.1.2', '172.16.0.1', 'fd12::1', '100.64.0.1', '93.184.216.34', '2606:4700::1']) expect(refusedAddress(a), a).toBeUndefined();
    expect(refusedAddress('169.254.169.254')).toMatch(/link-local/);
  });

  it('refuses an address written in the URL before any connection', async () => {
    for (const url of ['http://169.254.169.254/latest/meta-data/iam/security-credentials/', 'http://[fd00:ec2::254]/latest/', 'http://[::ffff:a9fe:a9fe]/', 'http://0.0.0.0:80/', 'http://[::ffff:100.100.100.200]/latest/meta-data/', 'http://0xa9fea9fe/', 'http://2852039166/']) {
      const answer = await request(url, { userAgent: 'test', timeoutMs: 2000 });
      expect(answer, url).toMatchObject({ kind: 'network', error: expect.stringMatching(/: never a docs site$/) });
    }
  });

  it('resolves a name at connect time and refuses it when every address it has is refused; a name with a readable address reaches that one', async () => {
    const before = hits;
    const refused = await request(`http://metadata.test:${port}/computeMetadata/v1/`, { userAgent: 'test', timeoutMs: 5000 });
    expect(refused).toMatchObject({ kind: 'network', error: expect.stringContaining('metadata.test resolves to 169.254.169.254, link-local') });
    expect(asked).toContain('metadata.test');
    expect(hits).toBe(before);
    const mixed = await request(`http://mixed.test:${port}/`, { userAgent: 'test', timeoutMs: 5000 });
    expect(mixed).toMatchObject({ kind: 'answer', status: 200 });
    expect(hits).toBe(before + 1);
    const local = await request(`http://localhost:${port}/`, { userAgent: 'test', timeoutMs: 5000 });
    expect(local.kind === 'answer' && local.bytes.toString()).toBe('the docs');
  });
});
