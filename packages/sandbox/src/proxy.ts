// The egress proxy: the shell's only way out. CONNECT tunnels and absolute-URI requests, each decided by host and port, resolved once, checked and recorded.
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { lookup as dnsLookup } from 'node:dns/promises';
import { addressClass, formatEndpoint, isIP, normalizeHost } from './hosts.js';
import { decide, isConfiguredRegistry } from './policy.js';
import { tunnelStart, type TunnelStart } from './tunnel-start.js';
import type { EgressEvent, EgressPolicy } from './types.js';

/** Every address of a name, as `dns.lookup(host, { all: true })` gives them. */
export type LookupAll = (host: string) => Promise<readonly { address: string; family: number }[]>;

const systemLookup: LookupAll = (host) => dnsLookup(host, { all: true, verbatim: true });

export interface ProxyOptions {
  policy: EgressPolicy;
  /** A Unix socket path (bind-mounted into a sandbox), or a loopback TCP port when absent. */
  socketPath?: string;
  onEgress?: (event: EgressEvent) => void;
  /** How names are resolved (default node's dns.lookup); tests give a local table instead of real DNS. */
  lookup?: LookupAll;
}

export interface EgressProxy {
  /** Where it listens: the socket path, or `127.0.0.1:PORT`. */
  readonly address: string;
  /** The loopback port when it listens on TCP. */
  readonly port: number | undefined;
  /** Stops listening, cuts every open tunnel, and resolves once the last decision was reported. */
  close(): Promise<void>;
}

// Hop-by-hop headers and the proxy's own must not be forwarded upstream (RFC 9110 §7.6.1); `host`
// is replaced by the host the proxy decided on, so a client cannot name a different one.
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);

/** Tunnels idle this long are cut, as the prior art did, so a forgotten connection cannot pin a stage. */
const IDLE_MS = 120_000;

const oneLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0] || 'connection failed';

/** `port` is NaN when the target names one that cannot exist: it is refused, never replaced by a default. */
function splitHostPort(target: string, defaultPort: number): { host: string; port: number } {
  const m = /^\[([^\]]*)\](?::(\d+))?$/.exec(target) ?? /^([^:]*)(?::(\d+))?$/.exec(target);
  if (!m) return { host: '', port: defaultPort };
  const port = m[2] === undefined ? defaultPort : Number(m[2]);
  return { host: normalizeHost(m[1] ?? ''), port: Number.isInteger(port) && port >= 1 && port <= 65535 ? port : Number.NaN };
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 403: 'Forbidden', 502: 'Bad Gateway' };

function refuse(socket: Duplex, status: number, text: string): void {
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

type Target =
  | { ok: true; addresses: string[] }
  | { ok: false; blocked: true; message: string }
  | { ok: false; blocked: false; error: string };

/**
 * The addresses an allowed host:port is reached at. The name is resolved once, here, and the
 * connection goes to an address this checked, so a second lookup can never answer differently
 * (DNS rebinding). Any non-public address refuses the whole name unless host:port is exactly a
 * configured registry endpoint: one bad answer among good ones is still a way in.
 */
async function resolveTarget(policy: EgressPolicy, lookup: LookupAll, host: string, port: number): Promise<Target> {
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = (await lookup(host)).map((a) => a.address);
    } catch (error) {
      return { ok: false, blocked: false, error: oneLine(error) };
    }
    if (addresses.length === 0) return { ok: false, blocked: false, error: `no address for ${host}` };
  }
  if (isConfiguredRegistry(policy, host, port)) return { ok: true, addresses };
  for (const address of addresses) {
    const why = addressClass(address);
    if (why !== undefined) {
      const what = address === host ? host : `${host} resolves to ${address}`;
      return { ok: false, blocked: true, message: `${what}, a ${why} address: only a registry configured at exactly ${formatEndpoint(host, port)} may be reached there` };
    }
  }
  return { ok: true, addresses };
}

/**
 * Waits for what a client sends first through its tunnel (`head`: what came with the CONNECT), at
 * most IDLE_MS and MAX_HELLO_BYTES, then hands it over unread by anyone else.
 */
type Started = Exclude<TunnelStart, { kind: 'more' }>;

function firstBytes(client: Duplex, head: Buffer, done: (start: Started, bytes: Buffer) => void): void {
  let bytes = head;
  let settled = false;
  const timer = setTimeout(() => client.destroy(), IDLE_MS);
  const settle = (start: Started): void => {
    settled = true;
    clearTimeout(timer);
    client.off('data', onData);
    client.off('close', onClose);
    client.off('end', onEnd);
    client.pause();
    done(start, bytes);
  };
  const onData = (chunk: Buffer): void => {
    bytes = Buffer.concat([bytes, chunk]);
    const start = tunnelStart(bytes);
    if (start.kind !== 'more') settle(start);
  };
  const onClose = (): void => clearTimeout(timer);
  // A client that ends its side before saying anything has nothing for the tunnel to carry.
  const onEnd = (): void => {
    if (!settled) client.destroy();
  };
  const start = tunnelStart(bytes);
  if (start.kind !== 'more') {
    settle(start);
    return;
  }
  client.on('data', onData);
  client.once('close', onClose);
  client.once('end', onEnd);
  if (!settled) client.resume();
}

/**
 * Why a TLS tunnel may not go on, or undefined when it may: the server name it asks for must be the
 * host the tunnel was opened to. A front end shared by many sites routes by that name, so any other
 * one reaches another site at an allowed host's address; an encrypted ClientHello hides it.
 */
export function tunnelRefusal(policy: EgressPolicy, host: string, port: number, start: Exclude<Started, { kind: 'plain' }>): { host: string; reason: 'docs_host' | 'not_allowlisted' | 'ip_literal' | 'bad_request'; message: string } | undefined {
  const opened = formatEndpoint(host, port);
  if (start.kind === 'bad_tls') return { host, reason: 'bad_request', message: `CONNECT ${opened}: the tunnel began as TLS but carried ${start.why}` };
  if (start.encrypted) return { host, reason: 'not_allowlisted', message: `CONNECT ${opened}: an encrypted ClientHello (ECH) hides the server it asks for; a tunnel reaches only the host it was opened to` };
  if (start.serverName === undefined) return undefined;
  const named = normalizeHost(start.serverName);
  if (named === host) return undefined;
  if (named === '') return { host, reason: 'bad_request', message: `CONNECT ${opened}: the TLS server name it carried is no host name` };
  const decision = decide(policy, named, port);
  if (!decision.allow && decision.reason === 'docs_host') return { host: named, reason: 'docs_host', message: decision.message };
  return { host: named, reason: 'not_allowlisted', message: `CONNECT ${opened}: the TLS inside asks for ${named}; a tunnel reaches only the host it was opened to` };
}

/** Connects to the first address that answers, in the resolver's order. */
function dial(addresses: readonly string[], port: number, done: (error: Error | undefined, socket?: net.Socket) => void): void {
  const attempt = (i: number, lastError?: Error): void => {
    const address = addresses[i];
    if (address === undefined) {
      done(lastError ?? new Error('no address to connect to'));
      return;
    }
    const socket = net.connect({ host: address, port, noDelay: true });
    const onError = (error: Error): void => {
      socket.destroy();
      attempt(i + 1, error);
    };
    socket.once('error', onError);
    socket.once('connect', () => {
      socket.off('error', onError);
      done(undefined, socket);
    });
  };
  attempt(0);
}

export async function startEgressProxy(options: ProxyOptions): Promise<EgressProxy> {
  const lookup = options.lookup ?? systemLookup;
  const policy = options.policy;
  const report = (event: EgressEvent): void => {
    try {
      options.onEgress?.(event);
    } catch {
      // A listener that throws must not take a tunnel down with it; the stage sees its own error elsewhere.
    }
  };
  const sockets = new Set<Duplex>();
  const track = (s: Duplex): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  };
  // Lookups in flight: close() waits for them, so every decision is reported before it resolves.
  const pending = new Set<Promise<unknown>>();
  let closed = false;
  const resolving = (host: string, port: number): Promise<Target> => {
    const p = resolveTarget(policy, lookup, host, port);
    pending.add(p);
    void p.finally(() => pending.delete(p));
    return p;
  };

  const server = http.createServer({ requestTimeout: 0, noDelay: true });
  /** Tunnels that carry plain HTTP, read by this server: the host and port each was opened to. */
  const tunnels = new WeakMap<object, { host: string; port: number; addresses: readonly string[] }>();
  server.on('connection', track);
  server.on('clientError', (_err, socket) => refuse(socket, 400, 'bad request'));

  server.on('connect', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    const { host, port } = splitHostPort(req.url ?? '', 443);
    if (Number.isNaN(port)) {
      const message = `CONNECT ${req.url ?? ''}: the port must be 1-65535`;
      report({ type: 'egress.blocked', host: host || '(none)', port: 0, method: 'CONNECT', reason: 'bad_request', message });
      refuse(client, 400, message);
      return;
    }
    const base = { host: host || '(none)', port, method: 'CONNECT' };
    const decision = decide(policy, host, port);
    if (!decision.allow) {
      report({ type: 'egress.blocked', ...base, reason: decision.reason, message: decision.message });
      refuse(client, 403, decision.message);
      return;
    }
    void resolving(host, port).then((target) => {
      if (!target.ok && target.blocked) {
        report({ type: 'egress.blocked', ...base, reason: 'private_address', message: target.message });
        refuse(client, 403, target.message);
        return;
      }
      report({ type: 'egress.allowed', ...base, reason: decision.reason, rule: decision.rule });
      if (!target.ok) {
        report({ type: 'egress.error', ...base, error: target.error });
        refuse(client, 502, `could not reach ${host}:${port}: ${target.error}`);
        return;
      }
      if (client.destroyed || closed) {
        client.destroy();
        return;
      }
      dial(target.addresses, port, (error, upstream) => {
        if (error || !upstream) {
          report({ type: 'egress.error', ...base, error: oneLine(error) });
          refuse(client, 502, `could not reach ${host}:${port}: ${oneLine(error)}`);
          return;
        }
        track(upstream);
        if (client.destroyed || closed) {
          client.destroy();
          upstream.destroy();
          return;
        }
        upstream.setTimeout(IDLE_MS, () => upstream.destroy());
        const endUpstream = (): void => {
          upstream.destroy();
        };
        const endClient = (): void => {
          client.destroy();
        };
        client.once('close', endUpstream);
        upstream.once('close', endClient);
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        // Nothing goes either way until the client's first bytes say what the tunnel carries.
        firstBytes(client, head, (start, bytes) => {
          if (start.kind === 'plain') {
            // Plain HTTP is read here, as a request to the tunnel's host: each is decided, recorded
            // and sent with the Host the proxy decided on, as an absolute-URI request would be.
            client.off('close', endUpstream);
            upstream.off('close', endClient);
            upstream.destroy();
            tunnels.set(client, { host, port, addresses: target.addresses });
            client.unshift(bytes);
            server.emit('connection', client);
            client.resume();
            return;
          }
          const refused = tunnelRefusal(policy, host, port, start);
          if (refused !== undefined) {
            report({ type: 'egress.blocked', host: refused.host, port, method: 'CONNECT', reason: refused.reason, message: refused.message });
            client.destroy();
            upstream.destroy();
            return;
          }
          if (bytes.length > 0) upstream.write(bytes);
          upstream.pipe(client);
          client.pipe(upstream);
        });
      });
    });
  });

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const method = req.method ?? 'GET';
    let url: URL | undefined;
    // A request that came through a tunnel opened as CONNECT host:port, in the origin form.
    const tunnel = tunnels.get(req.socket);
    try {
      if (req.url && /^[a-z][a-z0-9+.-]*:\/\//i.test(req.url)) url = new URL(req.url);
      else if (tunnel !== undefined && req.url?.startsWith('/')) url = new URL(`http://${formatEndpoint(tunnel.host, tunnel.port)}${req.url}`);
    } catch {
      url = undefined;
    }
    const secure = url?.protocol === 'https:';
    const host = url && (url.protocol === 'http:' || secure) ? normalizeHost(url.hostname) : '(relative-url)';
    const port = url?.port ? Number(url.port) : secure ? 443 : 80;
    const path = url ? `${url.pathname}${url.search}` : (req.url ?? '');
    const base = { host, port, method, path };
    const deny = (status: number, text: string): void => {
      req.resume();
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      res.end(`${text}\n`);
    };
    const decision = decide(policy, host, port);
    if (!decision.allow) {
      report({ type: 'egress.blocked', ...base, reason: decision.reason, message: decision.message });
      deny(403, decision.message);
      return;
    }
    req.pause();
    // A request in a tunnel goes to the addresses checked when the tunnel was opened: the name is
    // not looked up again, as for the tunnel itself.
    const checked: Promise<Target> = tunnel !== undefined && tunnel.host === host && tunnel.port === port && !secure ? Promise.resolve({ ok: true, addresses: [...tunnel.addresses] }) : resolving(host, port);
    void checked.then((target) => {
      if (!target.ok && target.blocked) {
        report({ type: 'egress.blocked', ...base, reason: 'private_address', message: target.message });
        deny(403, target.message);
        return;
      }
      report({ type: 'egress.allowed', ...base, reason: decision.reason, rule: decision.rule });
      if (!target.ok) {
        report({ type: 'egress.error', ...base, error: target.error });
        deny(502, `could not reach ${host}:${port}: ${target.error}`);
        return;
      }
      if (closed) {
        res.destroy();
        return;
      }
      const headers: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(req.headers)) if (!HOP_HEADERS.has(name) && value !== undefined) headers[name] = value;
      headers.host = port === (secure ? 443 : 80) ? formatEndpoint(host, port).replace(/:\d+$/, '') : formatEndpoint(host, port);
      headers.connection = 'close';
      // A body the client sent chunked goes upstream chunked. Node frames a piped body on its own
      // only for methods that usually carry one: a GET's body went out raw, without a length, so an
      // upstream that serves pipelined requests read it as a second request with a Host of its own.
      if (req.headers['transfer-encoding'] !== undefined) headers['transfer-encoding'] = 'chunked';
      const address = target.addresses[0]!;
      const upstream = (secure ? https : http).request(
        { host: address, port, method, path, headers, agent: false, setHost: false, ...(secure && isIP(host) === 0 ? { servername: host } : {}) },
        (up) => {
          const out: http.OutgoingHttpHeaders = {};
          for (const [name, value] of Object.entries(up.headers)) if (!HOP_HEADERS.has(name) && value !== undefined) out[name] = value;
          res.writeHead(up.statusCode ?? 502, up.statusMessage, out);
          up.pipe(res);
        },
      );
      upstream.setTimeout(IDLE_MS, () => upstream.destroy(new Error('upstream idle timeout')));
      upstream.on('socket', track);
      upstream.on('error', (error) => {
        report({ type: 'egress.error', ...base, error: oneLine(error) });
        deny(502, `could not reach ${host}:${port}: ${oneLine(error)}`);
      });
      req.pipe(upstream);
    });
  });

  if (options.socketPath) {
    rmSync(options.socketPath, { force: true });
    server.listen(options.socketPath);
  } else {
    server.listen(0, '127.0.0.1');
  }
  await once(server, 'listening');
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : undefined;
  let closing: Promise<void> | undefined;
  return {
    address: options.socketPath ?? `127.0.0.1:${port}`,
    port,
    close: () => {
      closed = true;
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        void Promise.allSettled([...pending]).then(() => {
          for (const s of sockets) s.destroy();
          server.closeAllConnections();
        });
      }).then(() => {
        if (options.socketPath) rmSync(options.socketPath, { force: true });
      });
      return closing;
    },
  };
}
