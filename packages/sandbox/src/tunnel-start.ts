// What a client sends first through a CONNECT tunnel: a TLS ClientHello (and the server name it asks
// for) or anything else. The proxy decides a tunnel by the host it was opened to, and a front end
// shared by many sites routes by the name inside: the server name of TLS, the Host of plain HTTP.

/** A ClientHello bigger than this (post-quantum key shares make one about 2 KiB) is not taken. */
export const MAX_HELLO_BYTES = 64 * 1024;

export type TunnelStart =
  /** Not enough bytes yet to say. */
  | { kind: 'more' }
  /** A TLS ClientHello: the server name it asks for (none when it sends no SNI), and whether it hides the real one (ECH). */
  | { kind: 'tls'; serverName: string | undefined; encrypted: boolean }
  /** Starts as TLS, but is no ClientHello this can read (or one past MAX_HELLO_BYTES). */
  | { kind: 'bad_tls'; why: string }
  /** Not TLS: plain bytes, which the proxy reads as HTTP. */
  | { kind: 'plain' };

const HANDSHAKE = 0x16;
const CLIENT_HELLO = 0x01;
const SERVER_NAME = 0x0000;
const ENCRYPTED_CLIENT_HELLO = 0xfe0d;

/**
 * Reads the start of a tunnel. A handshake message may span several TLS records: their bodies are
 * joined until the ClientHello is whole.
 */
export function tunnelStart(bytes: Buffer): TunnelStart {
  if (bytes.length === 0) return { kind: 'more' };
  if (bytes[0] !== HANDSHAKE) return { kind: 'plain' };
  const parts: Buffer[] = [];
  let have = 0;
  let at = 0;
  for (;;) {
    if (bytes.length < at + 5) return bytes.length > MAX_HELLO_BYTES ? { kind: 'bad_tls', why: 'a ClientHello too large to read' } : { kind: 'more' };
    if (bytes[at] !== HANDSHAKE) return { kind: 'bad_tls', why: 'a record that is not a handshake before the ClientHello ended' };
    const length = bytes.readUInt16BE(at + 3);
    if (bytes.length < at + 5 + length) return at + 5 + length > MAX_HELLO_BYTES ? { kind: 'bad_tls', why: 'a ClientHello too large to read' } : { kind: 'more' };
    parts.push(bytes.subarray(at + 5, at + 5 + length));
    have += length;
    at += 5 + length;
    if (have >= 4) {
      const message = Buffer.concat(parts);
      if (message[0] !== CLIENT_HELLO) return { kind: 'bad_tls', why: 'a handshake that is not a ClientHello' };
      const size = message.readUIntBE(1, 3);
      if (4 + size > MAX_HELLO_BYTES) return { kind: 'bad_tls', why: 'a ClientHello too large to read' };
      if (message.length >= 4 + size) return clientHello(message.subarray(4, 4 + size));
    }
  }
}

function clientHello(body: Buffer): TunnelStart {
  const bad = (why: string): TunnelStart => ({ kind: 'bad_tls', why });
  let at = 2 + 32; // legacy version, random
  const skip = (lengthBytes: 1 | 2): boolean => {
    if (body.length < at + lengthBytes) return false;
    at += lengthBytes + body.readUIntBE(at, lengthBytes);
    return at <= body.length;
  };
  if (!skip(1) || !skip(2) || !skip(1)) return bad('a ClientHello cut short'); // session id, cipher suites, compression
  if (at === body.length) return { kind: 'tls', serverName: undefined, encrypted: false };
  if (body.length < at + 2) return bad('a ClientHello cut short');
  const end = at + 2 + body.readUInt16BE(at);
  if (end > body.length) return bad('a ClientHello cut short');
  at += 2;
  let serverName: string | undefined;
  let encrypted = false;
  while (at + 4 <= end) {
    const type = body.readUInt16BE(at);
    const length = body.readUInt16BE(at + 2);
    const data = body.subarray(at + 4, at + 4 + length);
    at += 4 + length;
    if (at > end) return bad('a ClientHello cut short');
    if (type === ENCRYPTED_CLIENT_HELLO) encrypted = true;
    if (type !== SERVER_NAME) continue;
    if (serverName !== undefined) return bad('a ClientHello with two server_name extensions');
    // server_name_list: one host_name entry (type 0) is all RFC 6066 allows.
    if (data.length < 5 || data.readUInt16BE(0) !== data.length - 2 || data[2] !== 0 || data.readUInt16BE(3) !== data.length - 5) return bad('a server_name this cannot read');
    serverName = data.subarray(5).toString('latin1');
  }
  if (at !== end) return bad('a ClientHello cut short');
  return { kind: 'tls', serverName, encrypted };
}
