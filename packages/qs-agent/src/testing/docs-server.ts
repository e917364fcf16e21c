// A static docs site on loopback for tests and examples: serves a folder, 404s the rest, redirects on request.
import { createServer, type Server } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { AddressInfo } from 'node:net';

export interface DocsServer {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  url: string;
  port: number;
  /** Paths requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** `redirects` maps a path to a Location answered with 302 (or `[status, location]`); `statuses` a path to an error status answered instead of the file. */
export async function serveDocs(dir: string, options: { redirects?: Record<string, string | [number, string]>; statuses?: Record<string, number> } = {}): Promise<DocsServer> {
  const root = resolve(dir);
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push(path);
    const to = options.redirects?.[path];
    if (to) {
      const [status, location] = typeof to === 'string' ? [302, to] : to;
      res.writeHead(status, { location }).end();
      return;
    }
    const failWith = options.statuses?.[path];
    if (failWith !== undefined) {
      res.writeHead(failWith, { 'content-type': 'text/html; charset=utf-8' }).end(`<h1>${failWith}</h1>\n`);
      return;
    }
    void (async () => {
      let file = resolve(root, `.${decodeURIComponent(path)}`);
      if (file !== root && !file.startsWith(root + sep)) {
        res.writeHead(403).end('forbidden\n');
        return;
      }
      try {
        if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
        const body = await readFile(file);
        const type = file.endsWith('.html') ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8';
        res.writeHead(200, { 'content-type': type }).end(body);
      } catch {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      }
    })();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
