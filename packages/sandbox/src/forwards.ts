// Harness services shown on the sandbox's loopback: a Unix socket of the harness answers at a port inside, and nothing else of the host does.
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import net from 'node:net';
import { UsageError } from '@quickloop/cli-kit';
import { INSIDE_PROXY_PORT } from './backends/bwrap.js';

export interface Forward {
  /** What it is, for sandbox.ready and people (`model-api`). */
  name: string;
  /** The port on the sandbox's loopback (under `local`, the host's loopback port is chosen instead). */
  port: number;
  /** The harness's Unix socket every connection to the port is piped to. */
  socketPath: string;
}

/** A forward as the sandbox describes it: where it answers for the commands. */
export interface ForwardInForce {
  name: string;
  /** The port commands dial on 127.0.0.1. */
  port: number;
}

/** Ports the enforced network layer already uses inside: a forward there would shadow it. */
const TAKEN = new Set([INSIDE_PROXY_PORT, 53, 80, 443]);

/** Refuses forwards that would collide with the layer's own listeners, a loopback registry, or one another. */
export function checkForwards(forwards: readonly Forward[], mirrorPorts: readonly number[]): void {
  const seen = new Set<number>();
  for (const f of forwards) {
    if (!Number.isInteger(f.port) || f.port < 1 || f.port > 65535) throw new UsageError(`forward ${f.name}: port ${f.port} is not a TCP port`);
    if (TAKEN.has(f.port)) throw new UsageError(`forward ${f.name}: port ${f.port} is the sandbox's own (proxy, DNS or the recorders of 80 and 443)`);
    if (mirrorPorts.includes(f.port)) throw new UsageError(`forward ${f.name}: port ${f.port} is a loopback registry's`);
    if (seen.has(f.port)) throw new UsageError(`forward ${f.name}: port ${f.port} is forwarded twice`);
    seen.add(f.port);
  }
}

/**
 * Relays each connection that arrives on `listen` (a Unix socket path, or a loopback TCP port when
 * `listen` is a number, 0 for a free one) to the forward's own socket. Under bwrap the relay socket
 * sits in the sandbox's socket folder, which the network layer can reach whoever the harness is.
 */
export async function startForwardRelay(forward: Forward, listen: string | number): Promise<{ port: number; close(): Promise<void> }> {
  const open = new Set<net.Socket>();
  const server = net.createServer((inside) => {
    open.add(inside);
    inside.once('close', () => open.delete(inside));
    const upstream = net.connect({ path: forward.socketPath });
    open.add(upstream);
    upstream.once('close', () => open.delete(upstream));
    upstream.once('connect', () => inside.pipe(upstream).pipe(inside));
    upstream.once('error', () => inside.destroy());
    inside.once('error', () => upstream.destroy());
  });
  if (typeof listen === 'string') {
    rmSync(listen, { force: true });
    server.listen(listen);
  } else server.listen(listen, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : forward.port,
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
