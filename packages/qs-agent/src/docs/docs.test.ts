// read_docs as the agent meets it: through the toolbelt, and through the replay agent in a real qs-validate | qs-agent | qs-check pipeline.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htmlToMarkdown } from '@quickloop/docs';
import { createEmitter, EventWriter, validatorFor } from '@quickloop/events';
import { serveDocs, type DocsServer } from '../testing/docs-server.js';
import { createToolbelt, type Executor } from '../toolbelt.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SITE = join(ROOT, 'fixtures', 'docs-site');
const BIN = join(ROOT, 'node_modules', '.bin');
const REFERENCE = readFileSync(join(SITE, 'guide', 'reference.html'), 'utf8');

let server: DocsServer;
let work: string;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'qs-agent-docs-'));
  server = await serveDocs(SITE, { redirects: { '/ref': [301, '/guide/reference.html'] } });
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

/** The bash half is never called here: read_docs runs in qs-agent, outside the sandbox. */
const noShell: Executor = {
  exec: () => Promise.reject(new Error('read_docs must not run a command')),
};

function belt(extra: Partial<Parameters<typeof createToolbelt>[0]> = {}) {
  let out = '';
  const sink = new Writable({ write: (c, _e, done) => ((out += String(c)), done()) });
  const writer = new EventWriter(sink);
  const emitter = createEmitter({ stage: 'qs-agent', writer, now: () => new Date('2026-01-01T00:00:00Z') });
  let n = 0;
  const tools = createToolbelt({
    runId: 'r1',
    emitter,
    newId: () => `id-${++n}`,
    executor: noShell,
    maxCommandSeconds: 5,
    maxOutputChars: 1000,
    docsAllow: ['127.0.0.1'],
    docsRoute: [`${server.url}/ref`],
    docs: { maps: [], rateLimit: 0 },
    signal: new AbortController().signal,
    ...extra,
  });
  // The writer batches lines until the next turn of the loop; a flush makes them readable now.
  const flushed = async () => (await writer.flush(), events());
  const events = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown> & { type: string });
  return { tools, events: flushed };
}

describe('read_docs through the toolbelt', () => {
  it('gives the model Markdown with absolute links after a 301, and records the call, the hop and the hash', async () => {
    const { tools, events } = belt();
    const r = await tools.readDocs(`${server.url}/ref`);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.text).toContain(`[the install page](${server.url}/install.html)`);
    expect(r.text).toContain('| `--name` | world | Who is greeted |');
    expect(r.text).toContain('```sh\nnpm install greeter');
    const [call, read] = await events();
    expect(call).toMatchObject({ type: 'tool.call', tool: 'read_docs', url: `${server.url}/ref`, id: 'id-1' });
    expect(read).toMatchObject({
      type: 'docs.read',
      parent_id: 'id-1',
      url: `${server.url}/ref`,
      resolved_to: `${server.url}/guide/reference.html`,
      from: 'fetch',
      status: 200,
      page: 1,
      pages: 1,
      truncated: false,
      hops: [{ url: `${server.url}/ref`, status: 301, to: `${server.url}/guide/reference.html`, kind: 'http' }],
      sha256: createHash('sha256').update(r.markdown).digest('hex'),
    });
    for (const e of await events()) expect(validatorFor(e.type)?.(e), `${e.type} matches its schema`).toBe(true);
  });

  it('refuses a robots-disallowed page and records why; a page asked by part says which part', async () => {
    const { tools, events } = belt({ docs: { maps: [], rateLimit: 0, ignoreRobots: false } });
    const refused = await tools.readDocs(`${server.url}/private/notes.html`);
    expect(refused).toMatchObject({ ok: false, reason: 'robots' });
    expect((await events())[1]).toMatchObject({ type: 'docs.error', reason: 'robots', from: 'policy', url: `${server.url}/private/notes.html` });
    expect(server.requests).not.toContain('/private/notes.html');
    const none = await tools.readDocs(`${server.url}/install.html`, 3);
    expect(none).toMatchObject({ ok: false, reason: 'no_such_page', error: `page 3 does not exist: ${server.url}/install.html has 1 page` });
    expect((await events())[2]).toMatchObject({ type: 'tool.call', page: 3 });
  });

  it('never records a credential, and --probe-affordances emits one event', async () => {
    const { tools, events } = belt({ docs: { maps: [], rateLimit: 0, affordances: 'none' } });
    await tools.readDocs(`http://ada:hunter2@127.0.0.1:${server.port}/install.html`);
    await tools.probeAffordances(`${server.url}/`);
    expect(JSON.stringify(await events())).not.toContain('hunter2');
    expect((await events()).at(-1)).toMatchObject({ type: 'docs.affordances', affordances: 'none', probes: [{ kind: 'llms.txt', present: true }, { kind: 'llms-full.txt', present: false }, { kind: 'md', url: `${server.url}/index.html.md`, present: false }] });
    for (const e of await events()) expect(validatorFor(e.type)?.(e), `${e.type} matches its schema`).toBe(true);
  });
});

function sh(script: string): Promise<{ code: number; events: Array<Record<string, unknown> & { type: string }>; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -o pipefail; ${script}`], { cwd: work, env: { PATH: `${BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: work, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, stderr: err, events: out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown> & { type: string }) }));
  });
}

describe('the replay agent in a real pipeline', () => {
  it('reads the route from a docs site on 127.0.0.1: a 301, a meta refresh and a robots refusal, all recorded', async () => {
    const task = join(work, 'docs-route.yaml');
    const route = ['/ref', '/guide/old-reference.html', '/private/notes.html'].map((p) => `${server.url}${p}`);
    writeFileSync(task, `name: docs-route\ngoal: Read the reference, then make out.txt.\ndocs:\n  allow: [127.0.0.1]\n  path: [${route.join(', ')}]\nreplay: [touch out.txt]\nsuccess: {script: 'test -f out.txt || qs_fail "no out.txt"'}\n`);
    const r = await sh(`qs-validate -q ${task} | qs-agent -q --rate-limit 0 | qs-check -q`);
    expect(r.code, r.stderr).toBe(0);
    const reads = r.events.filter((e) => e.type === 'docs.read' || e.type === 'docs.error');
    const final = `${server.url}/guide/reference.html`;
    const markdown = htmlToMarkdown(REFERENCE, final);
    expect(markdown).toContain(`[the details](${server.url}/guide/quickstart-details.html#run)`);
    const hash = createHash('sha256').update(markdown).digest('hex');
    expect(reads).toMatchObject([
      { type: 'docs.read', url: route[0], resolved_to: final, hops: [{ status: 301, kind: 'http' }], sha256: hash },
      { type: 'docs.read', url: route[1], resolved_to: final, hops: [{ status: 200, kind: 'meta' }], sha256: hash },
      { type: 'docs.error', url: route[2], reason: 'robots', from: 'policy' },
    ]);
    expect(r.events.find((e) => e.type === 'run.completed')).toMatchObject({ classification: 'passed' });
  });
});
