// Registries on the host's own loopback (a company mirror on localhost:4873): inside the sandbox the
// same address and port lead to it, and only those; every connection is recorded.
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import net from 'node:net';
import { addressClass, formatEndpoint, parseEndpoint } from './hosts.js';
import type { EgressEvent, EgressPolicy } from './types.js';

export interface Mirror {
  /** The host as configured (`localhost`, `127.0.0.1`). */
  host: string;
  port: number;
}

/**
 * Configured registry endpoints whose host is the machine itself. Package managers dial these
 * directly (NO_PROXY lists localhost), so the proxy would never see them: the sandbox's loopback
 * forwards exactly these ports to the host's.
 */
export function loopbackRegistries(policy: EgressPolicy): Mirror[] {
  const found: Mirror[] = [];
  for (const entry of policy.registries) {
    const e = parseEndpoint(entry);
    if (!e || e.port === undefined) continue;
    const loopback = e.host === 'localhost' || addressClass(e.host) === 'loopback';
    if (loopback && !found.some((m) => m.port === e.port)) found.push({ host: e.host, port: e.port });
  }
  return found;
}

/** One Unix socket per mirror: each connection is piped to the host's loopback port and recorded. */
export async function startMirrors(mirrors: readonly Mirror[], socketPath: (m: Mirror) => string, report: (e: EgressEvent) => void): Promise<{ close(): Promise<void> }> {
  const servers: net.Server[] = [];
  const open = new Set<net.Socket>();
  for (const mirror of mirrors) {
    const server = net.createServer((inside) => {
      open.add(inside);
      inside.once('close', () => open.delete(inside));
      const target = mirror.host === '::1' ? '::1' : '127.0.0.1';
      const upstream = net.connect({ host: target, port: mirror.port, noDelay: true });
      open.add(upstream);
      upstream.once('close', () => open.delete(upstream));
      upstream.once('connect', () => {
        report({ type: 'egress.allowed', host: mirror.host, port: mirror.port, method: 'TCP', reason: 'registry', rule: formatEndpoint(mirror.host, mirror.port) });
        inside.pipe(upstream).pipe(inside);
      });
      upstream.once('error', (error) => {
        report({ type: 'egress.error', host: mirror.host, port: mirror.port, method: 'TCP', error: error.message.split('\n')[0] || 'connection failed' });
        inside.destroy();
      });
      inside.once('error', () => upstream.destroy());
    });
    const path = socketPath(mirror);
    rmSync(path, { force: true });
    server.listen(path);
    await once(server, 'listening');
    servers.push(server);
  }
  return {
    close: async () => {
      for (const s of open) s.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
