// The install cache's own downloads: where credentials given in a URL go when the server redirects
// (an absolute Location never carries them on; a relative one keeps the scheme, host and port).
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { getBuffer } from './http-get.js';
import { tempFolders, testCertificates } from './test-helpers.js';

const { temp, cleanup } = tempFolders('qs-http-get-');
const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
  cleanup();
});

/** A CA and a certificate for 127.0.0.1 it signed, made here. */
const certs = (): { ca: string; key: Buffer; cert: Buffer } => testCertificates(temp());

/** One port that speaks both https and plain http (told apart by the first byte), so a redirect can change only the scheme. */
async function bothOnOnePort(handler: (req: IncomingMessage, res: ServerResponse, scheme: string) => void): Promise<{ port: number; ca: string }> {
  const { key, cert, ca } = certs();
  const http = createHttpServer((req, res) => handler(req, res, 'http'));
  const https = createHttpsServer({ key, cert }, (req, res) => handler(req, res, 'https'));
  const listen = async (server: Server): Promise<number> => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };
  const [httpPort, httpsPort] = [await listen(http), await listen(https)];
  // The front port passes each connection on, whole, to the server its first byte names (0x16: a TLS handshake).
  const sockets = new Set<Socket>();
  const front: Server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.once('data', (first) => {
      const back = connect(first[0] === 0x16 ? httpsPort : httpPort, '127.0.0.1', () => {
        back.write(first);
        socket.pipe(back).pipe(socket);
      });
      back.on('error', () => socket.destroy());
      sockets.add(back);
    });
  });
  const port = await listen(front);
  closers.push(() => {
    for (const s of sockets) s.destroy();
    http.closeAllConnections();
    https.closeAllConnections();
    for (const s of [front, http, https]) s.close();
  });
  return { port, ca };
}

describe('credentials in a URL, across redirects', () => {
  it('go to the same scheme, host and port only: never to plain http after https, even on the same host and port', async () => {
    const seen: string[] = [];
    let port = 0;
    const both = await bothOnOnePort((req, res, scheme) => {
      seen.push(`${scheme} ${req.url} ${req.headers.authorization ?? 'no credentials'}`);
      if (req.url === '/same') res.writeHead(302, { location: '/landed' }).end();
      else if (req.url === '/down') res.writeHead(302, { location: `http://127.0.0.1:${port}/landed` }).end();
      else res.end('ok');
    });
    port = both.port;
    const trusted = both.ca;
    const basic = `Basic ${Buffer.from('me:secret').toString('base64')}`;
    await getBuffer(`https://me:secret@127.0.0.1:${port}/same`, { headers: {}, maxBytes: 1000, redirects: 5, ca: trusted });
    await getBuffer(`https://me:secret@127.0.0.1:${port}/down`, { headers: {}, maxBytes: 1000, redirects: 5, ca: trusted });
    expect(seen).toEqual([`https /same ${basic}`, `https /landed ${basic}`, `https /down ${basic}`, 'http /landed no credentials']);
  });
});
