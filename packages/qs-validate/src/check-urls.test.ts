// --check-urls against a real HTTP server on 127.0.0.1: each way a docs page can spoil a run, and silence without the flag.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryIo } from '@quickloop/cli-kit';
import { parseLine } from '@quickloop/events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOptions } from './cli.js';
import { run } from './run.js';

let server: Server;
let port: number;
let dir: string;
const hits: string[] = [];

const PAGES: Record<string, [number, string, Record<string, string>?]> = {
  '/robots.txt': [200, 'User-agent: *\nDisallow: /private\n\nUser-agent: otherbot\nDisallow: /\n'],
  '/ok': [200, '<html><head><title>t</title></head><body><h1>Install</h1><pre>pip install x</pre></body></html>'],
  '/private/page': [200, '<html><body><p>hidden</p></body></html>'],
  '/missing': [404, 'not here'],
  '/empty': [200, '<html><head><title>app</title><script>render()</script></head><body><div id="root"></div></body></html>'],
  '/refresh': [200, '<html><head><meta content="0; url=/ok" http-equiv="refresh"></head><body></body></html>'],
  '/hop': [302, '', { location: '/ok' }],
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'qs-validate-urls-'));
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/away') {
      // the same server under another name: off the task's docs hosts
      res.writeHead(301, { location: `http://localhost:${port}/ok` }).end();
      return;
    }
    const [status, body, headers] = PAGES[req.url ?? ''] ?? [404, 'no'];
    res.writeHead(status, { 'content-type': req.url === '/robots.txt' ? 'text/plain' : 'text/html', ...headers }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

function task(paths: string[]): string {
  const file = join(dir, 'urls.yaml');
  const route = paths.map((p) => `http://127.0.0.1:${port}${p}`).join(', ');
  writeFileSync(file, `name: urls\ngoal: Read the docs.\ndocs: {path: [${route}]}\nreplay: [touch out.txt]\nsuccess: {script: 'test -f out.txt || qs_fail "no out.txt"'}\n`);
  return file;
}

async function validate(args: string[]) {
  const io = memoryIo({ env: { NO_COLOR: '1', HOME: dir, npm_config_registry: 'https://npm.run.test/' }, cwd: dir });
  const code = await run({ ...(await parseOptions(args, io)), registryPaths: { root: dir, execPath: join(dir, 'no-node') } }, io);
  const events = io.out().split('\n').filter(Boolean).map((l, i) => parseLine(l, i + 1, 'stdout').event);
  return { code, err: io.err(), diagnostics: events.filter((e) => e.type === 'diagnostic') as unknown as { code: string; field?: string; message: string }[] };
}

describe('qs-validate --check-urls', () => {
  it('reads nothing over the network without the flag', async () => {
    hits.length = 0;
    const r = await validate([task(['/missing'])]);
    expect(r.code).toBe(0);
    expect(hits).toEqual([]);
  });

  it('warns about each page that would spoil a run, with a stable code and the route index', async () => {
    const r = await validate(['--check-urls', '--rate-limit', '0', task(['/ok', '/hop', '/missing', '/private/page', '/empty', '/away', '/refresh'])]);
    expect(r.code).toBe(0);
    const found = r.diagnostics.filter((d) => d.code !== 'QS201').map((d) => [d.code, d.field]);
    expect(found).toEqual([
      ['QS116', 'docs.path[2]'],
      ['QS118', 'docs.path[3]'],
      ['QS119', 'docs.path[4]'],
      ['QS117', 'docs.path[5]'],
      ['QS204', 'docs.path[6]'],
    ]);
    expect(r.err).toContain(`docs.path[2] http://127.0.0.1:${port}/missing could not be read: HTTP 404 [QS116]`);
    expect(r.err).toContain(`redirects to http://localhost:${port}/ok, which is not a docs host of the task`);
    expect(r.err).toContain(`redirects to http://127.0.0.1:${port}/ok (meta refresh)`);
    // robots.txt is read once for the origin, however many pages it covers
    expect(hits.filter((h) => h === '/robots.txt')).toHaveLength(1);
  });

  it('fails under --strict, and names a host nobody answers on', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const file = join(dir, 'dead.yaml');
    writeFileSync(file, `name: dead\ngoal: Read.\ndocs: {path: ['http://127.0.0.1:${deadPort}/x']}\nreplay: [touch o]\nsuccess: {script: 'test -f o || qs_fail "no o"'}\n`);
    const r = await validate(['--check-urls', '--rate-limit', '0', '--strict', file]);
    expect(r.code).toBe(3);
    expect(r.diagnostics.find((d) => d.code === 'QS116')?.message).toMatch(/could not be read: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
  });
});
