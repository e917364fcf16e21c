import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsQuestion, refusedAnswer, startDirectCatcher } from './direct.js';
import { policy } from './test-helpers.js';
import type { EgressEvent } from './types.js';

/** A DNS query as a resolver sends it: id, RD, one question. */
function query(name: string, qtype = 1, id = 0x1234): Buffer {
  const labels = name.split('.').flatMap((l) => [Buffer.from([l.length]), Buffer.from(l)]);
  const tail = Buffer.alloc(5);
  tail.writeUInt16BE(qtype, 1);
  tail.writeUInt16BE(1, 3);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header[2] = 0x01;
  header.writeUInt16BE(1, 4);
  return Buffer.concat([header, ...labels, tail]);
}

describe('DNS messages', () => {
  it('reads the question name', () => {
    const q = query('Docs.Example.com');
    expect(dnsQuestion(q)).toEqual({ name: 'Docs.Example.com', end: q.length });
  });

  it('rejects what is not a well-formed query', () => {
    expect(dnsQuestion(Buffer.alloc(5))).toBeUndefined();
    const q = query('example.com');
    expect(dnsQuestion(q.subarray(0, q.length - 3))).toBeUndefined();
    const bad = Buffer.from(q);
    bad[12] = 200;
    expect(dnsQuestion(bad)).toBeUndefined();
  });

  it('answers REFUSED with the same id and question', () => {
    const q = query('example.com', 28, 0xbeef);
    const a = refusedAnswer(q, q.length);
    expect(a.readUInt16BE(0)).toBe(0xbeef);
    expect(a[2]).toBe(0x81);
    expect(a[3]).toBe(0x05);
    expect(a.readUInt16BE(4)).toBe(1);
    expect(a.subarray(12)).toEqual(q.subarray(12));
  });
});

describe('direct catcher', () => {
  let dir: string;
  let catcher: { close(): Promise<void> };
  const events: EgressEvent[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'qs-direct-test-'));
    catcher = await startDirectCatcher({
      policy: policy({ docs_hosts: ['docs.example.com'] }),
      tcpSocketPath: join(dir, 'direct.sock'),
      dnsSocketPath: join(dir, 'dns.sock'),
      report: (e) => events.push(e),
    });
  });
  afterAll(async () => {
    await catcher.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const send = async (path: string, data: Buffer | string): Promise<Buffer> => {
    const socket = net.connect(path);
    await once(socket, 'connect');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.end(data);
    await once(socket, 'close');
    return Buffer.concat(chunks);
  };

  it('records a dial socat caught, in canonical address form', async () => {
    await send(join(dir, 'direct.sock'), '[2001:0db8:0000:0000:0000:0000:0000:0001] 443\n');
    await send(join(dir, 'direct.sock'), '192.0.2.9 80\n');
    expect(events.splice(0)).toEqual([
      { type: 'egress.blocked', host: '2001:db8::1', port: 443, method: 'TCP', reason: 'bypassed_proxy', message: '2001:db8::1:443: only the egress proxy reaches the network: this tool ignored HTTP(S)_PROXY' },
      expect.objectContaining({ host: '192.0.2.9', port: 80, method: 'TCP' }),
    ]);
  });

  it('records a lookup once per attempt (A and AAAA, retries) and refuses it', async () => {
    const answers = [];
    for (const qtype of [1, 28, 1, 28]) answers.push(await send(join(dir, 'dns.sock'), query('pkg.example.org', qtype)));
    expect(answers.map((a) => a[3])).toEqual([5, 5, 5, 5]);
    await send(join(dir, 'dns.sock'), query('docs.example.com'));
    expect(events.splice(0)).toEqual([
      expect.objectContaining({ host: 'pkg.example.org', port: 53, method: 'DNS', reason: 'bypassed_proxy' }),
      expect.objectContaining({ host: 'docs.example.com', port: 53, method: 'DNS', reason: 'docs_host', message: 'docs.example.com is a documentation host: use read_docs to read it' }),
    ]);
  });

  it('drops a malformed query without an event', async () => {
    expect((await send(join(dir, 'dns.sock'), Buffer.from('junk'))).length).toBe(0);
    expect(events).toEqual([]);
  });
});
