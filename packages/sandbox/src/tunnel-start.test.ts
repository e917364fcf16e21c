import { once } from 'node:events';
import net from 'node:net';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { MAX_HELLO_BYTES, tunnelStart } from './tunnel-start.js';

/** The first flight a real TLS client sends for `servername` (undefined: no SNI), as a server on loopback receives it. */
async function clientHello(servername: string | undefined): Promise<Buffer> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const got = new Promise<Buffer>((resolve) => {
    server.once('connection', (s) => {
      let bytes = Buffer.alloc(0);
      s.on('data', (c: Buffer) => {
        bytes = Buffer.concat([bytes, c]);
        const r = tunnelStart(bytes);
        if (r.kind !== 'more' || bytes.length > 5 + bytes.readUInt16BE(3)) {
          resolve(bytes);
          s.destroy();
        }
      });
    });
  });
  const client = tls.connect({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port, rejectUnauthorized: false, ...(servername !== undefined ? { servername } : {}) });
  client.on('error', () => undefined);
  const bytes = await got;
  client.destroy();
  server.close();
  return bytes;
}

/** The same handshake message cut into TLS records of at most `size` bytes each. */
function reframe(hello: Buffer, size: number): Buffer {
  const body = hello.subarray(5, 5 + hello.readUInt16BE(3));
  const records: Buffer[] = [];
  for (let at = 0; at < body.length; at += size) {
    const part = body.subarray(at, at + size);
    const header = Buffer.from([0x16, 0x03, 0x01, 0, 0]);
    header.writeUInt16BE(part.length, 3);
    records.push(header, part);
  }
  return Buffer.concat(records);
}

describe('the start of a tunnel', () => {
  it("reads the server name of a real client's ClientHello, whole or a byte at a time, in one record or many", async () => {
    const hello = await clientHello('registry.example');
    expect(tunnelStart(hello)).toEqual({ kind: 'tls', serverName: 'registry.example', encrypted: false });
    for (let n = 0; n < hello.length - 1; n++) expect(tunnelStart(hello.subarray(0, n)).kind).toBe('more');
    for (const size of [1, 7, 100]) expect(tunnelStart(reframe(hello, size))).toEqual({ kind: 'tls', serverName: 'registry.example', encrypted: false });
    expect(await clientHello(undefined).then(tunnelStart)).toEqual({ kind: 'tls', serverName: undefined, encrypted: false });
  });

  it('tells plain bytes from TLS by the first byte, and refuses what starts as TLS but is no ClientHello it can read', async () => {
    expect(tunnelStart(Buffer.from('GET / HTTP/1.1\r\n'))).toEqual({ kind: 'plain' });
    expect(tunnelStart(Buffer.from('SSH-2.0-x\r\n'))).toEqual({ kind: 'plain' });
    expect(tunnelStart(Buffer.alloc(0))).toEqual({ kind: 'more' });
    const hello = await clientHello('a.example');
    // A ServerHello where a ClientHello belongs, an alert record in the middle, a length past the end.
    const notHello = Buffer.from(hello);
    notHello[5] = 0x02;
    expect(tunnelStart(notHello)).toMatchObject({ kind: 'bad_tls' });
    const cut = reframe(hello, 50);
    cut[55] = 0x15;
    expect(tunnelStart(cut)).toMatchObject({ kind: 'bad_tls' });
    const long = Buffer.from(hello);
    long.writeUIntBE(hello.length, 6, 3);
    expect(tunnelStart(long)).toMatchObject({ kind: 'more' });
    const huge = Buffer.from([0x16, 3, 1, 0xff, 0xff]);
    expect(tunnelStart(Buffer.concat([huge, Buffer.alloc(MAX_HELLO_BYTES)]))).toMatchObject({ kind: 'bad_tls' });
  });

  it('says when a ClientHello carries an encrypted one (ECH), whose outer name is not the server it asks for', async () => {
    const hello = await clientHello('public.example');
    // Append an encrypted_client_hello extension (0xfe0d) with a few bytes of payload.
    const record = hello.subarray(0, 5 + hello.readUInt16BE(3));
    const ech = Buffer.from([0xfe, 0x0d, 0x00, 0x03, 1, 2, 3]);
    const body = Buffer.concat([record.subarray(9), ech]);
    // Extensions length sits after version, random, session id, cipher suites and compression.
    let at = 34;
    at += 1 + body[at]!;
    at += 2 + body.readUInt16BE(at);
    at += 1 + body[at]!;
    body.writeUInt16BE(body.readUInt16BE(at) + ech.length, at);
    const message = Buffer.concat([Buffer.from([0x01, 0, 0, 0]), body]);
    message.writeUIntBE(body.length, 1, 3);
    const out = Buffer.concat([Buffer.from([0x16, 3, 1, 0, 0]), message]);
    out.writeUInt16BE(message.length, 3);
    expect(tunnelStart(out)).toEqual({ kind: 'tls', serverName: 'public.example', encrypted: true });
  });
});
