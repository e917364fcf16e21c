// Forwards: a harness Unix socket answering at one loopback port inside, and nothing else of the host; docs hosts through the proxy on request.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bwrapUnavailable } from './backends/bwrap.js';
import { checkForwards } from './forwards.js';
import { removeLayout } from './layout.js';
import { openSandbox } from './open.js';
import { policy } from './test-helpers.js';
import type { EgressEvent, OpenOptions, Sandbox } from './types.js';

let dir: string;
let socketPath: string;
let service: Server;
const open: Sandbox[] = [];
const events: EgressEvent[] = [];

beforeAll(async () => {
  const problem = bwrapUnavailable();
  if (problem) throw new Error(`the enforced backend cannot run here: ${problem}`);
  dir = mkdtempSync(join(tmpdir(), 'qs-forwards-'));
  socketPath = join(dir, 'svc.sock');
  service = createServer((req, res) => res.end(`svc saw ${req.method} ${req.url}`));
  await new Promise<void>((resolve) => service.listen(socketPath, () => resolve()));
});
afterAll(async () => {
  await new Promise<void>((resolve) => service.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  events.length = 0;
  for (const sb of open.splice(0)) {
    await sb.close();
    removeLayout(sb.describe());
  }
});

async function sandbox(more: Partial<OpenOptions> = {}): Promise<Sandbox> {
  const sb = await openSandbox({ policy: policy(), backend: 'bwrap', onEgress: (e) => events.push(e), ...more });
  open.push(sb);
  return sb;
}

describe('forwards', () => {
  it('answers at the port inside from the harness socket, says so, and shows neither the socket nor any other port', async () => {
    const sb = await sandbox({ forwards: [{ name: 'svc', port: 3129, socketPath }] });
    expect(sb.describe().forwards).toEqual([{ name: 'svc', port: 3129 }]);
    const r = await sb.exec(`curl -s http://127.0.0.1:3129/v1/x; echo; test -e ${socketPath} && echo visible || echo absent; curl -s -m 5 http://127.0.0.1:3130/ || echo refused $?`);
    expect(r.output).toBe('svc saw GET /v1/x\nabsent\nrefused 7\n');
  });

  it('is absent from a sandbox opened without it', async () => {
    const sb = await sandbox();
    expect(sb.describe().forwards).toBeUndefined();
    const r = await sb.exec('curl -s -m 5 http://127.0.0.1:3129/ || echo refused $?');
    expect(r.output).toBe('refused 7\n');
  });

  it('under local, answers on a free port of the host loopback', async () => {
    const sb = await openSandbox({ policy: policy(), backend: 'local', allowUnenforced: true, forwards: [{ name: 'svc', port: 3129, socketPath }] });
    open.push(sb);
    const port = sb.describe().forwards?.[0]?.port;
    expect(port).toBeGreaterThan(0);
    const r = await sb.exec(`curl -s http://127.0.0.1:${port}/local`);
    expect(r.output).toBe('svc saw GET /local');
  });

  it('refuses a port the sandbox uses itself, a loopback registry port, or one port twice', () => {
    const f = (port: number) => ({ name: 'svc', port, socketPath });
    expect(() => checkForwards([f(3128)], [])).toThrow(/sandbox's own/);
    expect(() => checkForwards([f(443)], [])).toThrow(/sandbox's own/);
    expect(() => checkForwards([f(4873)], [4873])).toThrow(/loopback registry/);
    expect(() => checkForwards([f(4000), f(4000)], [])).toThrow(/twice/);
    expect(() => checkForwards([f(0)], [])).toThrow(/not a TCP port/);
  });
});

describe('a sandbox that cannot come up', () => {
  /** This process's support folders (the owner file names the pid first). */
  const ownSupport = (): string[] =>
    readdirSync(tmpdir())
      .filter((n) => n.startsWith('quickloop-proxy-'))
      .filter((n) => {
        try {
          return readFileSync(join(tmpdir(), n, 'owner'), 'utf8').startsWith(`${process.pid} `);
        } catch {
          return false;
        }
      });

  it.each(['bwrap', 'local'] as const)('leaves no workspace or support folder behind when a forward is refused (%s)', async (backend) => {
    const base = mkdtempSync(join(tmpdir(), 'qs-forwards-refused-'));
    try {
      const before = ownSupport();
      await expect(openSandbox({ policy: policy(), backend, allowUnenforced: true, baseDir: base, forwards: [{ name: 'svc', port: 3128, socketPath }] })).rejects.toThrow(/sandbox's own/);
      expect(readdirSync(base)).toEqual([]);
      expect(ownSupport()).toEqual(before);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('docsReachable', () => {
  const docs = policy({ docs_hosts: ['docs.example.test'] });
  const fetchDocs = 'curl -s -o /dev/null -m 10 http://docs.example.test/ ; true';

  it('blocks a docs host from the shell by default (a bypass of read_docs)', async () => {
    const sb = await sandbox({ policy: docs, installHosts: false });
    await sb.exec(fetchDocs);
    await sb.close();
    expect(events).toEqual([expect.objectContaining({ type: 'egress.blocked', host: 'docs.example.test', reason: 'docs_host' })]);
  });

  it('lets the docs hosts through for an agent that reads with its own tools, recorded, and describes the task policy unchanged', async () => {
    const sb = await sandbox({ policy: docs, installHosts: false, docsReachable: true });
    expect(sb.describe().policy).toEqual({ ...docs, install_hosts: [] });
    await sb.exec(fetchDocs);
    await sb.close();
    // Offline the name does not resolve: an allowed connection that failed upstream, not a refusal.
    expect(events.filter((e) => e.type === 'egress.blocked')).toEqual([]);
    expect(events.some((e) => (e.type === 'egress.allowed' || e.type === 'egress.error') && e.host === 'docs.example.test')).toBe(true);
  });
});
