import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { memoryIo, PipeClosedError } from '@quickloop/cli-kit';
import { removeLayout } from '@quickloop/sandbox';
import { parseDocsMap } from '@quickloop/docs';
import { run, type AgentOptions } from './run.js';
import { ndjson, parseOut, taskLoaded, type TaskSpec } from './testing/task-event.js';

const SITE = fileURLToPath(new URL('../../../fixtures/docs-site', import.meta.url));
const made: string[] = [];

afterEach(() => {
  for (const root of made.splice(0)) removeLayout({ root });
});

const options = (o: Partial<AgentOptions> = {}): AgentOptions => ({
  agent: 'replay',
  docs: { maps: [parseDocsMap(`https://docs.greeter.test/=${SITE}`, '/')], rateLimit: 0 },
  backend: 'bwrap',
  allowUnenforced: false,
  keep: false,
  allowRegistries: [],
  level: 'quiet',
  ...o,
});

async function agent(input: string, o: Partial<AgentOptions> = {}, env: Record<string, string> = {}) {
  const io = memoryIo({ stdin: input, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', ...env } });
  const code = await run(options(o), io);
  const events = parseOut(io.out());
  for (const e of events) if (e.type === 'sandbox.ready' && e.stage === 'qs-agent') made.push(String(e.root));
  return { code, events, err: io.err(), out: io.out() };
}

const one = (spec: TaskSpec) => agent(ndjson([taskLoaded('r1', spec)]));

describe('qs-agent --agent replay', () => {
  it('provisions a sandbox when none is in the stream, reads the route and replays the commands', async () => {
    const { code, events } = await one({ replay: ['echo Hello, Ada!', 'echo two'] });
    expect(code).toBe(0);
    expect(events.map((e) => e.type)).toEqual([
      'task.loaded',
      'sandbox.ready',
      'agent.started',
      'tool.call',
      'docs.read',
      'tool.call',
      'docs.read',
      'tool.call',
      'tool.result',
      'tool.call',
      'tool.result',
      'sandbox.usage',
      'agent.completed',
    ]);
    expect(events[1]).toMatchObject({ stage: 'qs-agent', backend: 'bwrap', enforced: true, keep: false });
    const calls = events.filter((e) => e.type === 'tool.call' && e.tool === 'bash');
    const results = events.filter((e) => e.type === 'tool.result');
    expect(results.map((r) => r.parent_id)).toEqual(calls.map((c) => c.id));
    expect(results[0]).toMatchObject({ exit_code: 0, output: 'Hello, Ada!\n', timed_out: false, truncated: false });
    expect(events.filter((e) => e.type === 'docs.read').map((e) => [e.url, e.from, e.status])).toEqual([
      ['https://docs.greeter.test/install.html', 'map', 200],
      ['https://docs.greeter.test/quickstart.html', 'map', 200],
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'agent.completed', agent: 'replay', stop_reason: 'completed', commands: 2 });
  });

  it('stops at the first failing command and says which', async () => {
    const { events } = await one({ replay: ['echo one', 'exit 7', 'echo never'] });
    const results = events.filter((e) => e.type === 'tool.result');
    expect(results.map((r) => r.exit_code)).toEqual([0, 7]);
    expect(events.at(-1)).toMatchObject({ stop_reason: 'command_failed', detail: 'replay step 2 exited 7: exit 7', commands: 2 });
  });

  it('times a command out with exit 124 and truncates long output head+tail', async () => {
    const { events } = await one({ replay: ['seq 1 5000', 'sleep 30'], budgets: { max_command_seconds: 1, max_output_chars: 200 } });
    const [long, slow] = events.filter((e) => e.type === 'tool.result');
    expect(long).toMatchObject({ exit_code: 0, truncated: true });
    expect(String(long?.output)).toMatch(/^1\n2\n/);
    expect(String(long?.output)).toMatch(/4999\n5000\n$/);
    expect(long?.original_chars).toBeGreaterThan(20000);
    expect(slow).toMatchObject({ exit_code: 124, timed_out: true });
    // Killed at max_command_seconds: out of budget (budget_exhausted downstream), not a failed command.
    expect(events.at(-1)).toMatchObject({ stop_reason: 'timeout', detail: 'replay step 2 timed out after 1s (max_command_seconds): sleep 30' });
  });

  it('does not run a command bash cannot be given: a tool error for the agent, agent.completed all the same', async () => {
    const { code, events } = await one({ replay: ['echo one', 'echo a\0b', 'echo three'] });
    expect(code).toBe(0);
    const results = events.filter((e) => e.type === 'tool.result');
    expect(results.map((r) => r.exit_code)).toEqual([0, 126]);
    expect(String(results[1]?.output)).toContain('this command was not run: it contains a NUL byte');
    expect(events.at(-1)).toMatchObject({ type: 'agent.completed', stop_reason: 'error', detail: expect.stringMatching(/^replay step 2 \(replay\[1\]\) was not run: it contains a NUL byte/) });
  });

  it('refuses a setup command bash cannot be given before making any sandbox: run.failed, exit 3', async () => {
    const { code, events, err } = await one({ setup: ['echo a\ud800'], replay: ['true'] });
    expect(code).toBe(3);
    expect(events.map((e) => e.type)).toEqual(['task.loaded', 'run.failed']);
    expect(err).toContain('task.loaded setup[0] cannot be run by bash: it contains a lone UTF-16 surrogate');
  });

  it('kills what the replay left running when it ends, and names it in agent.completed', async () => {
    const m = `qs-left-${process.pid}`;
    const { events } = await one({ replay: [`setsid -f bash -c 'exec -a ${m} sleep 300' >/dev/null 2>&1; echo started`] });
    // Named as it was at close: `bash -c exec -a …` until the daemon's exec, then `qs-left-… 300`.
    expect(events.at(-1)).toMatchObject({ type: 'agent.completed', stop_reason: 'completed', left_running: [expect.stringContaining(m)] });
    const alive = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).some((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith(m);
      } catch {
        return false;
      }
    });
    expect(alive).toBe(false);
    // A run that leaves nothing behind has no left_running at all.
    const clean = await one({ replay: ['echo done'] });
    expect(clean.events.at(-1)).not.toHaveProperty('left_running');
  });

  it('skips an agent-only task without running anything', async () => {
    const { events } = await one({ replay: null });
    expect(events.filter((e) => e.type === 'tool.call')).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: 'agent.completed', stop_reason: 'skipped', commands: 0 });
  });

  it('records a docs page that cannot be read and still replays', async () => {
    const { events } = await one({ docs: ['https://docs.greeter.test/gone.html'], replay: ['true'] });
    expect(events.find((e) => e.type === 'docs.error')).toMatchObject({ url: 'https://docs.greeter.test/gone.html', from: 'map', status: 404 });
    expect(events.at(-1)).toMatchObject({ stop_reason: 'completed' });
  });

  it('never lets an API key or the host home into the sandbox', async () => {
    const { events } = await agent(ndjson([taskLoaded('r1', { replay: ['env; echo HOME=$HOME'] })]), {}, { ANTHROPIC_API_KEY: 'sk-ant-secret-123', OPENAI_API_KEY: 'sk-secret-456' });
    const out = String(events.find((e) => e.type === 'tool.result')?.output);
    expect(out).not.toContain('secret');
    expect(out).not.toContain('API_KEY');
    const ready = events.find((e) => e.type === 'sandbox.ready');
    expect(out).toContain(`HOME=${String(ready?.home)}`);
  });

  it("gives a sandbox it makes itself this machine's configured registry, as qs-sandbox does", async () => {
    const spec = { replay: ['npm config get registry'], registries: ['npm-mirror.test:443'] };
    const { events } = await agent(ndjson([taskLoaded('r1', spec)]), {}, { NPM_CONFIG_REGISTRY: 'https://npm-mirror.test/r' });
    expect(String(events.find((e) => e.type === 'tool.result')?.output)).toBe('https://npm-mirror.test/r/\n');
  });

  it('records what the enforced sandbox refused, each sandbox.denied a child of its command, before its result', async () => {
    const m = `qs-denied-${process.pid}`;
    const { code, events } = await one({ setup: [`mkdir /usr/local/${m} || true`], replay: [`cat /root/.${m}; echo x > /etc/${m}; true`] });
    expect(code).toBe(0);
    const setup = events.find((e) => e.type === 'setup.started');
    const call = events.find((e) => e.type === 'tool.call' && e.tool === 'bash');
    const denied = events.filter((e) => e.type === 'sandbox.denied');
    expect(denied).toEqual([
      expect.objectContaining({ run_id: 'r1', stage: 'qs-agent', parent_id: setup?.id, path: `/usr/local/${m}`, operation: 'write', reason: 'read_only', detected_from: 'stderr' }),
      expect.objectContaining({ run_id: 'r1', stage: 'qs-agent', parent_id: call?.id, path: `/root/.${m}`, operation: 'read', reason: 'hidden' }),
      expect.objectContaining({ run_id: 'r1', stage: 'qs-agent', parent_id: call?.id, path: `/etc/${m}`, operation: 'write', reason: 'read_only' }),
    ]);
    const types = events.map((e) => e.type);
    expect(types.slice(types.indexOf('setup.started'), types.indexOf('setup.completed') + 1)).toEqual(['setup.started', 'sandbox.denied', 'setup.completed']);
    const at = events.indexOf(call as (typeof events)[number]);
    expect(types.slice(at, at + 4)).toEqual(['tool.call', 'sandbox.denied', 'sandbox.denied', 'tool.result']);
  });

  it('runs setup in a sandbox it provisions, and does not start the agent when setup fails', async () => {
    const { events } = await one({ setup: ['echo prepared > ready.txt', 'exit 4'], replay: ['cat ready.txt'] });
    expect(events.map((e) => e.type)).toEqual(['task.loaded', 'sandbox.ready', 'setup.started', 'setup.completed', 'setup.started', 'setup.completed', 'setup.failed', 'sandbox.usage']);
    expect(events.at(-2)).toMatchObject({ index: 1, exit_code: 4 });
  });

  it('forwards what it does not own unchanged and in order, and works in a sandbox from the stream', async () => {
    const first = await one({ replay: ['echo made-here > mark.txt'] });
    const ready = first.events.find((e) => e.type === 'sandbox.ready') as Record<string, unknown>;
    const foreign = '{"v":1,"type":"custom.thing","ts":"2026-01-01T00:00:00.000Z","run_id":"r2","stage":"elsewhere","x":  [1, 2]}';
    const input = `${JSON.stringify(taskLoaded('r2', { replay: ['cat mark.txt'] }))}\n${foreign}\n${JSON.stringify({ ...ready, run_id: 'r2', stage: 'qs-sandbox' })}\n`;
    const second = await agent(input);
    const lines = second.out.split('\n');
    expect(lines[1]).toBe(foreign);
    expect(second.events.filter((e) => e.type === 'sandbox.ready')).toHaveLength(1);
    expect(second.events.find((e) => e.type === 'tool.result')).toMatchObject({ exit_code: 0, output: 'made-here\n' });
  });

  it('runs each task of a multi-task stream in order, each with its own sandbox', async () => {
    const { events } = await agent(ndjson([taskLoaded('a', { replay: ['echo a'] }), taskLoaded('b', { replay: ['echo b'] })]));
    expect(events.filter((e) => e.type === 'agent.completed').map((e) => e.run_id)).toEqual(['a', 'b']);
    const idx = (t: string, r: string) => events.findIndex((e) => e.type === t && e.run_id === r);
    expect(idx('agent.completed', 'a')).toBeLessThan(idx('task.loaded', 'b'));
    const roots = events.filter((e) => e.type === 'sandbox.ready').map((e) => e.root);
    expect(new Set(roots).size).toBe(2);
  });

  it('removes a workspace it made when the reader downstream goes away', async () => {
    const io = memoryIo({ stdin: ndjson([taskLoaded('r1', { replay: ['true'] })]), env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    let root = '';
    io.stdout.on('data', (chunk: Buffer) => {
      root ||= /"root":"([^"]+)"/.exec(chunk.toString())?.[1] ?? '';
      if (root) io.stdout.destroy();
    });
    await expect(run(options(), io)).rejects.toThrow(PipeClosedError);
    expect(root).toMatch(/quickloop-/);
    expect(existsSync(root)).toBe(false);
  });

  it('ends a run with run.failed and exits 3 when its sandbox.ready names a workspace that is not there', async () => {
    const ready = { v: 1, type: 'sandbox.ready', ts: '2026-01-01T00:00:00.000Z', run_id: 'r1', stage: 'qs-sandbox', root: '/nonexistent/quickloop-x', workspace: '/nonexistent/quickloop-x/workspace', home: '/nonexistent/quickloop-x/home', tmp: '/nonexistent/quickloop-x/tmp', backend: 'bwrap', enforced: true, reason: 'asked for', policy: { explicit: [], docs_hosts: [], registries: [], registries_source: 'default' }, keep: false };
    const { code, events, err } = await agent(ndjson([taskLoaded('r1'), ready]));
    expect(code).toBe(3);
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', failed_stage: 'qs-agent' });
    expect(err).toContain('cannot re-open the sandbox at /nonexistent/quickloop-x/workspace');
  });

  it('stops with 3 and the line number on a line that is not an event', async () => {
    const io = memoryIo({ stdin: `${JSON.stringify(taskLoaded('r1', { replay: null }))}\nnot json\n` });
    await expect(run(options(), io)).rejects.toThrow(/^stdin:2: not JSON/);
  });

  it('refuses an unknown agent as a usage error', async () => {
    await expect(run(options({ agent: 'nope' }), memoryIo())).rejects.toThrow("unknown agent 'nope'");
  });

  it('refuses the local backend without --allow-unenforced, and says UNENFORCED with it', async () => {
    await expect(one({ replay: ['true'] }).then(() => agent(ndjson([taskLoaded('r1')]), { backend: 'local' }))).rejects.toThrow(/allow-unenforced/);
    const { events } = await agent(ndjson([taskLoaded('r1')]), { backend: 'local', allowUnenforced: true });
    expect(events.find((e) => e.type === 'sandbox.ready')).toMatchObject({ backend: 'local', enforced: false });
  });
});

describe('--allow-registry', () => {
  it('reaches the policy of a sandbox qs-agent makes itself: that endpoint is reachable through the proxy, its other ports are not', async () => {
    const { cli } = await import('./cli.js');
    const http = await import('node:http');
    const { once } = await import('node:events');
    const server = http.createServer((req, res) => res.end(`mirror saw ${req.url} host=${req.headers.host}`));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    try {
      // --noproxy '' sends even a loopback URL through HTTP_PROXY: the proxy, outside, decides it.
      const curl = (p: number): string => `curl -sS --noproxy '' -w ' %{http_code}\\n' http://127.0.0.1:${p}/pkg`;
      const input = ndjson([taskLoaded('r1', { replay: [curl(port), `${curl(port + 1)} || true`] })]);
      const io = memoryIo({ stdin: input, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1' } });
      const argv = ['--backend', 'bwrap', '--docs-map', `https://docs.greeter.test/=${SITE}`, '--allow-registry', `http://127.0.0.1:${port}/`, '-q'];
      expect(await cli(argv, io)).toBe(0);
      const events = parseOut(io.out());
      for (const e of events) if (e.type === 'sandbox.ready' && e.stage === 'qs-agent') made.push(String(e.root));
      const ready = events.find((e) => e.type === 'sandbox.ready') as { policy: { registries: string[] } };
      expect(ready.policy.registries).toContain(`127.0.0.1:${port}`);
      const results = events.filter((e) => e.type === 'tool.result').map((e) => String(e.output));
      expect(results[0]).toContain(`mirror saw /pkg host=127.0.0.1:${port} 200`);
      expect(results[1]).toMatch(/ 403/);
      expect(events).toContainEqual(expect.objectContaining({ type: 'egress.allowed', host: '127.0.0.1', port, reason: 'registry', rule: `127.0.0.1:${port}` }));
      expect(events).toContainEqual(expect.objectContaining({ type: 'egress.blocked', host: '127.0.0.1', port: port + 1, reason: 'not_allowlisted' }));
    } finally {
      server.close();
    }
  });

  it('refuses a value that names no registry, as qs-sandbox does', async () => {
    const { cli } = await import('./cli.js');
    await expect(cli(['--allow-registry', 'not a host'], memoryIo())).rejects.toThrow(/--allow-registry: 'not a host' is not a registry URL/);
  });
});
