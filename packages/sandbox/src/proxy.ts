// The egress proxy: the shell's only way out. CONNECT tunnels and absolute-URI requests, each decided and recorded.
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { normalizeHost } from './hosts.js';
import { decide } from './policy.js';
import type { EgressEvent, EgressPolicy } from './types.js';

export interface ProxyOptions {
  policy: EgressPolicy;
  /** A Unix socket path (bind-mounted into a sandbox), or a loopback TCP port when absent. */
  socketPath?: string;
  onEgress?: (event: EgressEvent) => void;
}

export interface EgressProxy {
  /** Where it listens: the socket path, or `127.0.0.1:PORT`. */
  readonly address: string;
  /** The loopback port when it listens on TCP. */
  readonly port: number | undefined;
  /** Stops listening, cuts every open tunnel, and resolves once the last decision was reported. */
  close(): Promise<void>;
}

// Hop-by-hop headers and the proxy's own must not be forwarded upstream (RFC 9110 §7.6.1).
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

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

export async function startEgressProxy(options: ProxyOptions): Promise<EgressProxy> {
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

  const server = http.createServer({ requestTimeout: 0 });
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
    const decision = decide(options.policy, host);
    if (!decision.allow) {
      report({ type: 'egress.blocked', ...base, reason: decision.reason, message: decision.message });
      refuse(client, 403, decision.message);
      return;
    }
    report({ type: 'egress.allowed', ...base, reason: decision.reason, rule: decision.rule });
    const upstream = net.connect({ host, port });
    track(upstream);
    let connected = false;
    upstream.setTimeout(IDLE_MS, () => upstream.destroy());
    upstream.once('connect', () => {
      connected = true;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once('error', (error) => {
      if (connected) {
        client.destroy();
        return;
      }
      report({ type: 'egress.error', ...base, error: oneLine(error) });
      refuse(client, 502, `could not reach ${host}:${port}: ${oneLine(error)}`);
    });
    client.once('close', () => upstream.destroy());
  });

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const method = req.method ?? 'GET';
    let url: URL | undefined;
    try {
      if (req.url && /^[a-z][a-z0-9+.-]*:\/\//i.test(req.url)) url = new URL(req.url);
    } catch {
      url = undefined;
    }
    const secure = url?.protocol === 'https:';
    const host = url && (url.protocol === 'http:' || secure) ? normalizeHost(url.hostname) : '(relative-url)';
    const port = url?.port ? Number(url.port) : secure ? 443 : 80;
    const path = url ? `${url.pathname}${url.search}` : (req.url ?? '');
    const base = { host, port, method, path };
    const decision = decide(options.policy, host);
    const deny = (status: number, text: string): void => {
      req.resume();
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      res.end(`${text}\n`);
    };
    if (!decision.allow) {
      report({ type: 'egress.blocked', ...base, reason: decision.reason, message: decision.message });
      deny(403, decision.message);
      return;
    }
    report({ type: 'egress.allowed', ...base, reason: decision.reason, rule: decision.rule });
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_HEADERS.has(name) && value !== undefined) headers[name] = value;
    headers.connection = 'close';
    const upstream = (secure ? https : http).request({ host, port, method, path, headers }, (up) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(up.headers)) if (!HOP_HEADERS.has(name) && value !== undefined) out[name] = value;
      res.writeHead(up.statusCode ?? 502, up.statusMessage, out);
      up.pipe(res);
    });
    upstream.setTimeout(IDLE_MS, () => upstream.destroy(new Error('upstream idle timeout')));
    upstream.on('socket', track);
    upstream.on('error', (error) => {
      report({ type: 'egress.error', ...base, error: oneLine(error) });
      deny(502, `could not reach ${host}:${port}: ${oneLine(error)}`);
    });
    req.pipe(upstream);
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
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
        server.closeAllConnections();
      }).then(() => {
        if (options.socketPath) rmSync(options.socketPath, { force: true });
      });
      return closing;
    },
  };
}
