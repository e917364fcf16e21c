// QS_PORT: stable per task (from the task's port base) and free when the check starts.
import { createServer } from 'node:net';

const SPAN = 20;

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** The first free port in [base, base+20); the base itself when all are taken (the check then says so). */
export async function pickPort(base: number): Promise<number> {
  for (let p = base; p < base + SPAN && p <= 65535; p += 1) {
    if (await isFree(p)) return p;
  }
  return base;
}
