import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InputError, memoryIo, QsExit, UsageError } from '@quickloop/cli-kit';
import { cli } from './cli.js';
import { run, type SandboxStageOptions } from './run.js';
import { cleanup, editedTask, parseOut, stream, type OutEvent } from './testing.js';

const made: OutEvent[][] = [];
afterEach(() => {
  for (const events of made.splice(0)) cleanup(events);
});

const defaults: SandboxStageOptions = { backend: 'bwrap', allowUnenforced: false, allowRegistries: [], keep: false, level: 'quiet' };

async function stage(input: string, opts: Partial<SandboxStageOptions> = {}, env: Record<string, string | undefined> = { PATH: process.env.PATH }) {
  const io = memoryIo({ stdin: input, env });
  const code = await run({ ...defaults, ...opts }, io);
  const events = parseOut(io.out());
  made.push(events);
  return { code, events, io };
}

describe('qs-sandbox', () => {
  it('forwards every line unchanged and in order, and gives each task its own sandbox and setup', async () => {
    const input = stream('two-tasks.ndjson');
    const { code, io, events } = await stage(input);
    expect(code).toBe(QsExit.passed);
    const out = io.out().split('\n');
    const inLines = input.split('\n').filter(Boolean);
    // Upstream lines come out byte for byte, in their order, each task before its own sandbox.
    expect(out.filter((l) => inLines.includes(l))).toEqual(inLines);
    expect(events.map((e) => `${e.run_id} ${e.type}`)).toEqual([
      'run-a task.loaded',
      'run-a sandbox.ready',
      'run-a setup.started',
      'run-a setup.completed',
      'run-a sandbox.usage',
      'run-a diagnostic',
      'run-a x.custom_event',
      'run-b task.loaded',
      'run-b sandbox.ready',
      'run-b sandbox.usage',
    ]);
    const [a, b] = events.filter((e) => e.type === 'sandbox.ready');
    expect(a?.workspace).not.toBe(b?.workspace);
    expect(readFileSync(join(String(a?.workspace), 'a.txt'), 'utf8')).toBe('a\n');
  });

  it('a sandbox whose install-cache seed fails is a run.failed, and its folders are removed (nobody downstream was told of them)', async () => {
    const base = mkdtempSync(join(tmpdir(), 'qs-sandbox-seed-'));
    try {
      // A store entry whose file is a folder: the seed's copy fails.
      const store = join(base, 'store');
      const sha = createHash('sha256').update('x').digest('hex');
      mkdirSync(join(store, 'pip', 'files', sha), { recursive: true });
      mkdirSync(join(store, 'pip', 'entries'), { recursive: true });
      const key = 'https://files.test/x-1.0-py3-none-any.whl';
      const size = statSync(join(store, 'pip', 'files', sha)).size;
      writeFileSync(join(store, 'pip', 'entries', `${createHash('sha224').update(key).digest('hex')}.json`), JSON.stringify({ key, filename: 'x-1.0-py3-none-any.whl', sha256: sha, size, type: 'application/octet-stream', headers: { 'cache-control': 'max-age=31536000, immutable', date: new Date(0).toUTCString() } }));
      const boxes = join(base, 'boxes');
      mkdirSync(boxes);
      const { code, events } = await stage(stream('setup.ndjson'), { installCache: store, baseDir: boxes });
      expect(code).toBe(QsExit.noEvidence);
      expect(events.map((e) => e.type)).toEqual(['task.loaded', 'run.failed']);
      expect(String(events[1]?.error)).toMatch(/^cannot make a sandbox: /);
      expect(readdirSync(boxes)).toEqual([]);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('describes a task without setup (no session is made for it) as one with setup: backend, enforcement, reason, limits', async () => {
    const { events } = await stage(stream('two-tasks.ndjson'));
    const [withSetup, without] = events.filter((e) => e.type === 'sandbox.ready') as OutEvent[];
    const facts = (e: OutEvent | undefined) => ({ backend: e?.backend, enforced: e?.enforced, reason: e?.reason, limits: e?.limits });
    expect(facts(without)).toEqual(facts(withSetup));
    expect((without?.limits as unknown[]).length).toBeGreaterThan(3);
    for (const dir of ['workspace', 'home', 'tmp']) expect(existsSync(String(without?.[dir]))).toBe(true);
  });

  it('describes the sandbox: sibling home and tmp, backend, enforcement, policy and why', async () => {
    const { events } = await stage(stream('setup.ndjson'), { keep: true, allowRegistries: ['mirror.corp.test'] });
    const ready = events.find((e) => e.type === 'sandbox.ready') as OutEvent;
    expect(ready).toMatchObject({ stage: 'qs-sandbox', backend: 'bwrap', enforced: true, keep: true });
    expect(String(ready.reason)).toMatch(/bwrap/);
    const root = String(ready.root);
    expect(ready).toMatchObject({ workspace: join(root, 'workspace'), home: join(root, 'home'), tmp: join(root, 'tmp') });
    const policy = ready.policy as { docs_hosts: string[]; registries: string[]; install_hosts: string[] };
    expect(policy.docs_hosts).toEqual(['docs.greeter.test']);
    expect(policy.registries).toContain('mirror.corp.test:443');
    expect(policy.install_hosts).toContain('nodejs.org');
  });

  it('pairs setup.started and setup.completed by id, with exit code, output and duration', async () => {
    const { events } = await stage(stream('setup.ndjson'));
    const started = events.filter((e) => e.type === 'setup.started');
    const completed = events.filter((e) => e.type === 'setup.completed');
    expect(started.map((e) => e.command)).toEqual(['echo setup-ran > marker.txt', 'cat marker.txt']);
    expect(completed.map((e) => e.parent_id)).toEqual(started.map((e) => e.id));
    expect(completed[1]).toMatchObject({ index: 1, exit_code: 0, timed_out: false, output: 'setup-ran\n', truncated: false });
    expect(typeof completed[1]?.duration_ms).toBe('number');
  });

  it('stops at the first failing setup command and says so with setup.failed (exit 2: no evidence)', async () => {
    const { code, events } = await stage(stream('setup-fails.ndjson'));
    expect(code).toBe(QsExit.noEvidence);
    expect(events.map((e) => e.type)).toEqual(['task.loaded', 'sandbox.ready', 'setup.started', 'setup.completed', 'setup.started', 'setup.completed', 'setup.failed', 'sandbox.usage']);
    expect(events.at(-2)).toMatchObject({ index: 1, command: 'exit 7', exit_code: 7, detail: 'setup step 2 exited 7: exit 7' });
    expect(events.filter((e) => e.type === 'setup.started').map((e) => e.command)).toEqual(['echo first', 'exit 7']);
  });

  it('kills a setup command at the task\'s per-command timeout (124) and caps its output', async () => {
    const input = editedTask((e) => {
      e.task.setup = ['seq 1 100000', 'sleep 30'];
      e.task.budgets.max_command_seconds = 1;
      e.task.budgets.max_output_chars = 100;
    });
    const { events } = await stage(input);
    const completed = events.filter((e) => e.type === 'setup.completed');
    expect(completed[0]).toMatchObject({ exit_code: 0, truncated: true, original_chars: 588895 });
    expect(String(completed[0]?.output).startsWith('1\n2\n3\n')).toBe(true);
    expect(String(completed[0]?.output).endsWith('99999\n100000\n')).toBe(true);
    expect(completed[1]).toMatchObject({ exit_code: 124, timed_out: true });
    expect(events.at(-2)).toMatchObject({ type: 'setup.failed', detail: 'setup step 2 timed out: sleep 30' });
  });

  it('says on stderr what setup left running, killed with the stage', async () => {
    const m = `qs-setup-left-${process.pid}`;
    const input = editedTask((e) => {
      e.task.setup = [`bash -c 'exec -a ${m} sleep 300' >/dev/null 2>&1 & for i in $(seq 200); do ps -eo args | grep -q '^${m}' && break; sleep 0.02; done`];
    });
    const { code, io } = await stage(input, { level: 'normal' });
    expect(code).toBe(0);
    expect(io.err()).toContain(`setup left 1 process running, killed with this stage (nothing outlives its stage): ${m} 300`);
  });

  it('records egress decisions of setup commands under the run, before the command completes', async () => {
    const input = editedTask((e) => {
      e.task.setup = ['curl -sS http://docs.greeter.test/quickstart.html; curl -sS https://elsewhere.example.com/ || true'];
    });
    const { events } = await stage(input);
    const types = events.map((e) => e.type);
    expect(types).toEqual(['task.loaded', 'sandbox.ready', 'setup.started', 'egress.blocked', 'egress.blocked', 'setup.completed', 'sandbox.usage']);
    expect(events[3]).toMatchObject({ run_id: 'run-setup', stage: 'qs-sandbox', host: 'docs.greeter.test', reason: 'docs_host' });
    expect(events[4]).toMatchObject({ host: 'elsewhere.example.com', port: 443, method: 'CONNECT', reason: 'not_allowlisted' });
    expect(String(events[5]?.output)).toContain('use read_docs');
  });

  it('records a filesystem access the sandbox refused a setup command, as a child of its setup.started', async () => {
    const target = `/usr/local/qs-sandbox-denied-${process.pid}`;
    const input = editedTask((e) => {
      e.task.setup = [`mkdir '${target}' || true`];
    });
    const { events } = await stage(input);
    expect(events.map((e) => e.type)).toEqual(['task.loaded', 'sandbox.ready', 'setup.started', 'sandbox.denied', 'setup.completed', 'sandbox.usage']);
    expect(events[3]).toMatchObject({ run_id: 'run-setup', stage: 'qs-sandbox', parent_id: events[2]?.id, path: target, operation: 'write', reason: 'read_only', detected_from: 'stderr' });
  });

  it('never passes the host\'s keys or home into setup', async () => {
    const input = editedTask((e) => {
      e.task.setup = ['env; echo "home=$HOME"'];
    });
    const { events } = await stage(input, {}, { PATH: process.env.PATH, ANTHROPIC_API_KEY: 'sk-ant-test-secret', HOME: '/root' });
    const out = String(events.find((e) => e.type === 'setup.completed')?.output);
    expect(out).not.toContain('test-secret');
    expect(out).toContain(`home=${String(events.find((e) => e.type === 'sandbox.ready')?.home)}\n`);
  });

  it("points the sandbox's npm and pip at this machine's registries where the policy allows them, never with credentials", async () => {
    const home = mkdtempSync(join(tmpdir(), 'qs-sandbox-home-'));
    try {
      // This user's npm config: a scoped registry that needs a token, and one that does not.
      writeFileSync(join(home, '.npmrc'), '@corp:registry=https://npm-corp.test/\n//npm-corp.test/:_authToken=npm-secret-token\n@open:registry=https://npm-open.test/o/\n');
      const input = editedTask((e) => {
        e.policy.registries = ['npm-mirror.test:443', 'npm-corp.test:443', 'npm-open.test:443', 'pip-mirror.test:443'];
        e.task.setup = ['npm config get registry; npm config get @corp:registry; npm config get @open:registry; cat ~/.config/pip/pip.conf; npm config set fund false && echo set-ok; env | grep -i registry || echo no-registry-env'];
      });
      const env = { PATH: process.env.PATH, HOME: home, NPM_CONFIG_REGISTRY: 'https://npm-mirror.test/r', PIP_INDEX_URL: 'https://pip-mirror.test/simple', PIP_EXTRA_INDEX_URL: 'https://user:pip-secret@pip-private.test/simple' };
      const { events } = await stage(input, {}, env);
      const out = String(events.find((e) => e.type === 'setup.completed')?.output);
      expect(out).toContain('https://npm-mirror.test/r/\n');
      // The token stays out, so the registry it belongs to does too: npm there keeps its own default.
      expect(out).not.toContain('npm-corp.test');
      expect(out).toContain('https://npm-open.test/o/\n');
      expect(out).toContain('[global]\nindex-url = https://pip-mirror.test/simple/\n');
      expect(out).not.toContain('pip-private.test');
      expect(out).not.toContain('secret');
      // The files are the sandbox user's: a quickstart's `npm config set` works.
      expect(out).toContain('set-ok');
      expect(out).toContain('no-registry-env');

      // A registry the policy does not let the sandbox reach is not written (network.only, say).
      const only = editedTask((e) => {
        e.policy.registries = [];
        e.task.setup = ['npm config get registry; test -e ~/.config/pip/pip.conf && echo pip-conf || echo no-pip-conf'];
      });
      const second = await stage(only, {}, env);
      const out2 = String(second.events.find((e) => e.type === 'setup.completed')?.output);
      expect(out2).not.toContain('npm-mirror.test');
      expect(out2).toContain('no-pip-conf');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('runs under local only when unenforced runs are allowed, and says it is not enforced', async () => {
    await expect(stage(stream('setup.ndjson'), { backend: 'local' })).rejects.toThrow(UsageError);
    const { events } = await stage(stream('setup.ndjson'), { backend: 'local', allowUnenforced: true });
    expect(events.find((e) => e.type === 'sandbox.ready')).toMatchObject({ backend: 'local', enforced: false });
  });

  it('refuses the local backend before reading any input', async () => {
    const io = memoryIo({ stdin: 'not json at all\n' });
    await expect(cli(['--backend', 'local'], io)).rejects.toThrow(/--allow-unenforced/);
  });

  it('stops with stdin:LINE on a bad line, after forwarding what came before', async () => {
    const io = memoryIo({ stdin: `${stream('two-tasks.ndjson')}{"v":1,"type":"task.loaded"}\n` });
    const err = await run(defaults, io).catch((e: unknown) => e);
    // What was written goes out at the next turn of the event loop, as it does before a real stage exits.
    await new Promise((resolve) => setImmediate(resolve));
    const events = parseOut(io.out());
    made.push(events);
    expect(err).toBeInstanceOf(InputError);
    expect(String((err as Error).message)).toBe("stdin:5: not a quickloop event: missing field 'ts'");
    // Both tasks' sandboxes are in the stream, so a later stage can remove them.
    expect(events.filter((e) => e.type === 'sandbox.ready').map((e) => e.run_id)).toEqual(['run-a', 'run-b']);
  });

  it('rejects an --allow-registry that is not a host', async () => {
    await expect(cli(['--allow-registry', 'not a host'], memoryIo())).rejects.toThrow(UsageError);
    await expect(cli(['--allow-registry', 'https://a..b/'], memoryIo())).rejects.toThrow(/not a registry URL, host:port or host name/);
  });

  it('refuses a --base-dir that is not an existing folder, before reading any input', async () => {
    await expect(cli(['--base-dir', '/nonexistent/qs-base'], memoryIo({ stdin: 'not json\n' }))).rejects.toThrow(new UsageError('--base-dir /nonexistent/qs-base: no such folder'));
    await expect(cli(['--base-dir', '/etc/passwd'], memoryIo({ stdin: 'not json\n' }))).rejects.toThrow(new UsageError('--base-dir /etc/passwd: not a folder'));
  });

  it('takes the host and port of a registry URL given to --allow-registry', async () => {
    const io = memoryIo({ stdin: stream('setup.ndjson'), env: { PATH: process.env.PATH } });
    expect(await cli(['--allow-registry', 'https://Mirror.Corp.Test:8443/npm/', '-q'], io)).toBe(0);
    const events = parseOut(io.out());
    made.push(events);
    expect((events.find((e) => e.type === 'sandbox.ready')?.policy as { registries: string[] }).registries).toContain('mirror.corp.test:8443');
  });

  it('stops on interrupt: kills the running setup command, emits no setup.failed, exits 130', async () => {
    const input = editedTask((e) => {
      e.task.setup = ['sleep 300', 'echo never'];
    });
    const io = memoryIo({ stdin: input, env: { PATH: process.env.PATH } });
    const running = run(defaults, io);
    // Abort once the command is running, as SIGINT would.
    const started = setInterval(() => {
      if (io.out().includes('"setup.started"')) {
        clearInterval(started);
        io.abort(new Error('interrupted by SIGINT'));
      }
    }, 5);
    expect(await running).toBe(QsExit.interrupted);
    const events = parseOut(io.out());
    made.push(events);
    expect(events.map((e) => e.type)).toEqual(['task.loaded', 'sandbox.ready', 'setup.started', 'setup.completed', 'sandbox.usage']);
    expect(events.at(-2)).toMatchObject({ exit_code: 137, timed_out: false });
    expect(existsSync(String(events[1]?.workspace))).toBe(true);
  });
});
