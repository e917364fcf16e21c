// qs init: a task skeleton from a docs page, over a real loopback docs site.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { memoryIo } from '@quickloop/cli-kit';
import { cli } from './cli.js';
import { commandBlocks, linkedPages, taskName } from './commands/init.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SITE = join(ROOT, 'fixtures', 'docs-site');
let server: Server;
let base: string;
const work = mkdtempSync(join(tmpdir(), 'qs-init-'));

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    if (req.url === '/start') return void res.writeHead(301, { location: '/install.html' }).end();
    try {
      const body = readFileSync(join(SITE, (req.url ?? '/').replace(/^\/+/, '') || 'index.html'));
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(work, { recursive: true, force: true });
});

const env = { PATH: `${ROOT}node_modules/.bin:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: process.env.HOME ?? '/root', NO_COLOR: '1' };

describe('qs init', () => {
  it('writes a task that starts at the page (after its redirect), replays its shell blocks, and validates', async () => {
    const io = memoryIo({ cwd: work, env });
    expect(await cli(['init', `${base}/start`, '--name', 'greeter-install'], io)).toBe(0);
    const file = join(work, 'tasks', 'greeter-install.yaml');
    const text = readFileSync(file, 'utf8');
    const task = parse(text) as { name: string; docs: { path: string[] }; replay: string[]; success: { script: string } };
    expect(task.name).toBe('greeter-install');
    expect(task.docs.path).toEqual([`${base}/install.html`]);
    expect(task.replay).toHaveLength(2);
    expect(task.replay[0]).toMatch(/^mkdir -p greeter\ncat > greeter\/greet\.js <<'JS'\n/);
    expect(task.replay[1]).toBe('node greeter/greet.js Ada');
    expect(task.success.script).toContain('TODO');
    expect(text).toContain(`#   - ${base}/quickstart.html`);
    expect(io.err()).toContain('wrote tasks/greeter-install.yaml: 2 replay commands, 1 linked page');
    expect(io.err()).toMatch(/^ok {2}.*greeter-install\.yaml \(greeter-install, replay\+agent\)$/m);
    // Until its placeholders are filled in, the skeleton is said to measure nothing.
    expect(io.err()).toMatch(/warning .*greeter-install\.yaml:\d+:\d+: the goal and the success check are still a TODO placeholder; .*\[QS121\]/);
  });

  it('never overwrites without --force, and refuses what it cannot read', async () => {
    writeFileSync(join(work, 'mine.yaml'), 'keep me\n');
    await expect(cli(['init', `${base}/install.html`, '--out', 'mine.yaml'], memoryIo({ cwd: work, env }))).rejects.toThrow('qs init: mine.yaml exists (--force to overwrite it)');
    expect(readFileSync(join(work, 'mine.yaml'), 'utf8')).toBe('keep me\n');
    expect(await cli(['init', `${base}/install.html`, '--out', 'mine.yaml', '--force'], memoryIo({ cwd: work, env }))).toBe(0);
    expect(readFileSync(join(work, 'mine.yaml'), 'utf8')).toContain('name: local-install');
    await expect(cli(['init', 'file:///etc/passwd'], memoryIo({ cwd: work, env }))).rejects.toThrow('only http(s) docs pages can be read');
    await expect(cli(['init', `${base}/missing.html`, '--name', 'm'], memoryIo({ cwd: work, env }))).rejects.toThrow(`qs init: could not read ${base}/missing.html: HTTP 404`);
    await expect(cli(['init', 'not a url'], memoryIo({ cwd: work, env }))).rejects.toThrow("'not a url' is not a URL");
  });
});

describe('what qs init reads from a page', () => {
  it('takes shell blocks, drops prompts and printed output, skips other languages', () => {
    const md = [
      '```bash\nnpm install greeter\n```',
      '```console\n$ greeter --version\ngreeter 1.2.3\n$ greeter hello\nHello!\n```',
      '```js\nconsole.log(1)\n```',
      '```\n$ echo one\n$ echo two\n```',
      '```json\n{"a": 1}\n```',
    ].join('\n\n');
    expect(commandBlocks(md)).toEqual(['npm install greeter', 'greeter --version\ngreeter hello', 'echo one\necho two']);
  });

  it('lists linked pages of the site once, in order, without fragments, images or other hosts', () => {
    const self = new URL('https://docs.example.com/start');
    const md = '[a](https://docs.example.com/install#step) [b](https://docs.example.com/start) [c](https://other.test/x) [d](https://docs.example.com/install) [e](https://docs.example.com/logo.png) [f](https://docs.example.com/next "Next")';
    expect(linkedPages(md, self, ['docs.example.com'])).toEqual(['https://docs.example.com/install', 'https://docs.example.com/next']);
  });

  it('names the task from the project and the page', () => {
    expect(taskName(new URL('https://docs.greeter.test/quickstart.html'))).toBe('greeter-quickstart');
    expect(taskName(new URL('https://www.python-httpx.org/'))).toBe('python-httpx-quickstart');
    expect(taskName(new URL('https://vitejs.dev/guide/'))).toBe('vitejs-guide');
  });
});
