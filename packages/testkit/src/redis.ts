// A real redis-server for tests and benchmarks: loopback, a free port, no persistence, its own
// folder, stopped and removed by stop().
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServer {
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** Where redis-server is, or null: a test that needs it says plainly why it did not run. */
export function redisServerPath(): string | null {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  return found.status === 0 && path !== '' ? path : null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function launch(bin: string, port: number, dir: string): Promise<ChildProcess | null> {
  return new Promise((resolve) => {
    const child = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'notice'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    const onData = (c: Buffer): void => {
      log += c.toString();
      if (log.includes('Ready to accept connections')) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve(child);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.resume();
    // Another process took the port between the probe and the bind: the caller tries another.
    child.once('exit', () => resolve(null));
  });
}

export async function startRedis(): Promise<RedisServer> {
  const bin = redisServerPath();
  if (bin === null) throw new Error('redis-server is not installed (apt-get install redis-server)');
  const dir = mkdtempSync(join(tmpdir(), 'ql-redis-'));
  for (let tries = 0; tries < 5; tries += 1) {
    const port = await freePort();
    const child = await launch(bin, port, dir);
    if (child === null) continue;
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    return {
      url: `redis://127.0.0.1:${port}/0`,
      port,
      pid: child.pid as number,
      stop: async () => {
        child.kill('SIGKILL');
        await exited;
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error('redis-server did not start on a free port in 5 tries');
}
