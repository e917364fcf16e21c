import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { memoryIo } from '@quickloop/cli-kit';
import { run as agentRun, parseDocsMap } from '@quickloop/qs-agent';
import { ndjson, parseOut, serveDocs, taskLoaded, type TaskSpec } from '@quickloop/qs-agent/testing';
import { planSandbox, removeLayout } from '@quickloop/sandbox';
import { run, type CheckOptions } from './run.js';

const SITE = fileURLToPath(new URL('../../../fixtures/docs-site', import.meta.url));
const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1' };
const roots = new Set<string>();

afterEach(() => {
  for (const root of roots) if (existsSync(root)) removeLayout({ root });
  roots.clear();
});

async function agent(input: string, backend: 'bwrap' | 'local' = 'bwrap'): Promise<string> {
  const io = memoryIo({ stdin: input, env: ENV });
  await agentRun({ agent: 'replay', docs: { maps: [parseDocsMap(`https://docs.greeter.test/=${SITE}`, '/')], rateLimit: 0 }, backend, allowUnenforced: backend === 'local', keep: false, allowRegistries: [], level: 'quiet' }, io);
  for (const e of parseOut(io.out())) if (e.type === 'sandbox.ready') roots.add(String(e.root));
  return io.out();
}

async function check(input: string, o: Partial<CheckOptions> = {}, io = memoryIo({ stdin: input, env: ENV })) {
  const code = await run({ keep: false, level: 'quiet', ...o }, io);
  return { code, events: parseOut(io.out()), err: io.err() };
}

const verdict = (events: ReturnType<typeof parseOut>) => events.find((e) => e.type === 'run.completed');

async function through(spec: TaskSpec, o: Partial<CheckOptions> = {}) {
  return check(await agent(ndjson([taskLoaded('r1', spec)])), o);
}

const SESSION_HAS = (text: string) => `grep -qF '${text}' "$QS_SESSION_LOG" || { echo "session output:"; cat "$QS_SESSION_LOG"; echo "check failed: nothing the run printed matched: ${text}"; exit 1; }`;

describe('qs-check', () => {
  it("removes the workspace when downstream goes while the run's last events are forwarded (no terminal event can be said)", async () => {
    // A run that ends with run.failed: its agent stage never said it completed.
    const saved = (await agent(ndjson([taskLoaded('r1', { replay: ['echo hi'], script: 'true' })]))).split('\n').filter((l) => l !== '' && !l.includes('"agent.completed"')).join('\n');
    const root = [...roots][0]!;
    expect(existsSync(root)).toBe(true);
    const io = memoryIo({ stdin: `${saved}\n`, env: ENV });
    const { Writable } = await import('node:stream');
    // The reader goes while the run's last events are forwarded.
    let gone = false;
    io.stdout = new Writable({
      write(chunk: Buffer, _e, cb) {
        if (chunk.toString().includes('"sandbox.usage"')) gone = true;
        cb(gone ? Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }) : null);
      },
    }) as never;
    await expect(run({ keep: false, level: 'quiet' }, io)).rejects.toThrow();
    expect(existsSync(root)).toBe(false);
  });

  it('passes a run whose check passes, ends it with run.completed and removes the workspace', async () => {
    const { code, events } = await through({ replay: ['echo Hello, Ada!'], script: SESSION_HAS('Hello, Ada!') });
    expect(code).toBe(0);
    const types = events.map((e) => e.type);
    expect(types.slice(-4)).toEqual(['check.started', 'check.completed', 'sandbox.usage', 'run.completed']);
    expect(verdict(events)).toMatchObject({
      classification: 'passed',
      label: 'PASS',
      evidential: true,
      stop_reason: 'completed',
      backend: 'bwrap',
      enforced: true,
      check_exit_code: 0,
      docs_pages_read: ['https://docs.greeter.test/install.html', 'https://docs.greeter.test/quickstart.html'],
      suspect_page: null,
      docs_bypass_attempts: 0,
      workspace_kept: null,
    });
    for (const root of roots) expect(existsSync(root)).toBe(false);
  });

  it('is a docs gap when the check fails; its last line is the reason and the last page read is the suspect', async () => {
    const { code, events } = await through({ replay: ['echo Hello, Bob!'], script: SESSION_HAS('Hello, Ada!') });
    expect(code).toBe(1);
    expect(events.find((e) => e.type === 'check.completed')).toMatchObject({ passed: false, exit_code: 1, reason: 'check failed: nothing the run printed matched: Hello, Ada!' });
    expect(verdict(events)).toMatchObject({ classification: 'docs_gap', label: 'FAIL', suspect_page: 'https://docs.greeter.test/quickstart.html', detail: 'check failed: nothing the run printed matched: Hello, Ada!' });
  });

  it('gives expect_output only the output of successful commands, from the stream, outside the workspace', async () => {
    const script = `case "$QS_SESSION_LOG" in "$PWD"/*) echo "check failed: session log inside the workspace"; exit 1;; esac; cat "$QS_SESSION_LOG"; exit 1`;
    const { events } = await through({ replay: ['echo from-ok-1', 'echo planted > .qs-session.log; echo from-ok-2', 'echo from-failed; exit 1'], script });
    const output = String(events.find((e) => e.type === 'check.completed')?.output);
    expect(output).toBe('from-ok-1\nfrom-ok-2\n');
  });

  it('gives the check a QS_PORT from the task port base, and kills what it leaves running', async () => {
    const marker = 313 + Math.floor(Math.random() * 1000);
    const { events } = await through({ replay: ['true'], portBase: 24100, script: `echo port=$QS_PORT; setsid sleep ${marker} > /dev/null 2>&1 & exit 0` });
    const started = events.find((e) => e.type === 'check.started');
    expect(Number(started?.port)).toBeGreaterThanOrEqual(24100);
    expect(Number(started?.port)).toBeLessThan(24120);
    expect(events.find((e) => e.type === 'check.completed')?.output).toBe(`port=${String(started?.port)}\n`);
    const alive = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).some((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(`sleep\u0000${marker}`);
      } catch {
        return false;
      }
    });
    expect(alive).toBe(false);
  });

  it('skips a task with no replay commands without running the check (exit 2)', async () => {
    const { code, events } = await through({ replay: null, script: 'true' });
    expect(code).toBe(2);
    expect(events.some((e) => e.type === 'check.started')).toBe(false);
    expect(verdict(events)).toMatchObject({ classification: 'skipped', label: 'SKIP', evidential: false, check_exit_code: null });
  });

  it('is a harness error when setup failed (exit 2)', async () => {
    const { code, events } = await through({ setup: ['exit 9'], replay: ['true'] });
    expect(code).toBe(2);
    expect(verdict(events)).toMatchObject({ classification: 'harness_error', stop_reason: 'error', detail: 'setup step 1 exited 9: exit 9' });
    const blocked = await through({ setup: ['curl -sS --max-time 10 https://blocked.example.test/'], replay: ['true'] });
    expect(String(verdict(blocked.events)?.detail)).toMatch(/^setup step 1 exited 56: curl -sS --max-time 10 https:\/\/blocked\.example\.test\/; the sandbox refused a connection it needed \(.*blocked\.example\.test.*\)$/);
  });

  it('is budget_exhausted when max_seconds runs out (the check still runs)', async () => {
    const { code, events } = await through({ replay: ['sleep 1.2', 'true'], budgets: { max_seconds: 1 }, script: 'echo "check failed: not there"; exit 1' });
    expect(code).toBe(2);
    expect(events.some((e) => e.type === 'check.completed')).toBe(true);
    expect(verdict(events)).toMatchObject({ classification: 'budget_exhausted', stop_reason: 'timeout' });
  });

  it('is a harness error when a replay command failed on a blocked host, and counts a docs bypass attempt', async () => {
    const { code, events } = await through({
      replay: ['curl -s -o /dev/null https://docs.greeter.test/ || true', 'curl -sS --max-time 10 https://blocked.example.test/'],
      script: 'exit 1',
    });
    expect(code).toBe(2);
    expect(events.filter((e) => e.type === 'egress.blocked').map((e) => e.reason)).toEqual(['docs_host', 'not_allowlisted']);
    expect(verdict(events)).toMatchObject({ classification: 'harness_error', stop_reason: 'command_failed', docs_bypass_attempts: 1 });
    // The detail says why it is no evidence: the refused connection, in the proxy's words (the failed command's; a bypass that let it go on is not it).
    const blocked = events.find((e) => e.type === 'egress.blocked' && e.reason === 'not_allowlisted');
    expect(verdict(events)?.detail).toBe(`replay step 2 exited 56: curl -sS --max-time 10 https://blocked.example.test/; the sandbox refused a connection it needed (${String(blocked?.message)}): the task's network policy, not the docs, stopped it`);
    expect(String(blocked?.message)).toContain('blocked.example.test');
  });

  it('counts the check\'s own blocked egress before classifying: a harness error, not a docs gap', async () => {
    const { code, events } = await through({ replay: ['echo hi'], script: 'curl -sS --max-time 10 https://blocked.example.test/ || { echo "check failed: no answer"; exit 1; }' });
    expect(code).toBe(2);
    const types = events.map((e) => e.type);
    const block = events.findIndex((e) => e.type === 'egress.blocked');
    expect(events[block]).toMatchObject({ stage: 'qs-check', host: 'blocked.example.test', reason: 'not_allowlisted' });
    expect(block).toBeLessThan(types.indexOf('run.completed'));
    expect(verdict(events)).toMatchObject({ classification: 'harness_error', stop_reason: 'completed', check_exit_code: 1 });
  });

  it('records a write the enforced sandbox refused the check, as a child of check.started before check.completed', async () => {
    const target = `/etc/qs-check-denied-${process.pid}`;
    const { code, events } = await through({ replay: ['echo hi'], script: `touch '${target}' || echo "could not write, carrying on"` });
    expect(code).toBe(0);
    const started = events.find((e) => e.type === 'check.started');
    const types = events.map((e) => e.type);
    const at = types.indexOf('sandbox.denied');
    expect(events[at]).toMatchObject({ run_id: 'r1', stage: 'qs-check', parent_id: started?.id, path: target, operation: 'write', reason: 'read_only', detected_from: 'stderr' });
    expect(at).toBeGreaterThan(types.indexOf('check.started'));
    expect(at).toBeLessThan(types.indexOf('check.completed'));
    expect(verdict(events)).toMatchObject({ classification: 'passed' });
  });

  it('is a harness error, never a pass, when the check passed only because the sandbox limit killed what it ran', async () => {
    // The quickstart's app would print ERROR, but only after growing past the sandbox's memory: the
    // limit kills it first, grep sees nothing, and a check that asks for no error passes.
    const plan = await planSandbox({ policy: { explicit: [], docs_hosts: ['docs.greeter.test'], registries: [], registries_source: 'default' }, backend: 'bwrap', installHosts: false, limits: { memoryBytes: 128 * 1024 * 1024 } });
    const d = plan.describe();
    roots.add(d.root);
    const ready = { v: 1, type: 'sandbox.ready', ts: '2026-01-01T00:00:00.000Z', run_id: 'r1', stage: 'qs-sandbox', root: d.root, workspace: d.workspace, home: d.home, tmp: d.tmp, backend: d.backend, enforced: d.enforced, reason: d.reason, policy: d.policy, keep: false, limits: d.limits };
    const app = "printf 'data = b\"x\" * (512 * 1024 * 1024)\\nprint(\"ERROR: the greeting failed\")\\n' > app.py";
    const script = 'if python3 app.py | grep -q ERROR; then qs_fail "the app printed an error"; fi';
    const { code, events } = await check(await agent(ndjson([taskLoaded('r1', { replay: [app], script }), ready])));
    expect(events.find((e) => e.type === 'check.completed')).toMatchObject({ exit_code: 0 });
    expect(events.find((e) => e.type === 'sandbox.limit_hit' && e.stage === 'qs-check')).toMatchObject({ limit: 'memory', detected_from: 'counter', exit_code: 0 });
    expect(verdict(events)).toMatchObject({ classification: 'harness_error', label: 'INCONCLUSIVE', evidential: false });
    expect(String(verdict(events)?.detail)).toMatch(/^the success check ran into the sandbox's memory limit \(128 MiB/);
    expect(code).toBe(2);
  });

  it('is an infra error when an allowed host cannot be reached', async () => {
    const { code, events } = await through({ explicit: ['nowhere.invalid'], replay: ['curl -sS --max-time 10 https://nowhere.invalid/'], script: 'exit 1' });
    expect(code).toBe(2);
    expect(events.some((e) => e.type === 'egress.error')).toBe(true);
    expect(verdict(events)).toMatchObject({ classification: 'infra_error', stop_reason: 'command_failed' });
    expect(String(verdict(events)?.detail)).toMatch(/^replay step 1 exited \d+: curl -sS --max-time 10 https:\/\/nowhere\.invalid\/; a connection it needed failed \(.*nowhere\.invalid.*\), so the run says nothing about the docs$/);
  });

  it('is budget_exhausted, not a docs gap, when the check itself is killed at max_command_seconds: it gave no verdict', async () => {
    const { code, events } = await through({ replay: ['touch made'], budgets: { max_command_seconds: 2 }, script: 'test -f made && sleep 30' });
    expect(code).toBe(2);
    expect(events.find((e) => e.type === 'check.completed')).toMatchObject({ timed_out: true, passed: false });
    expect(verdict(events)).toMatchObject({ classification: 'budget_exhausted', evidential: false, stop_reason: 'completed', detail: 'check timed out after 2s (max_command_seconds), so it gave no verdict' });
  });

  it('is budget_exhausted, not a docs gap, when expect_output misses text printed where max_output_chars cut the output', async () => {
    // The helpers every compiled check starts with, qs_expect_output among them.
    const expect_ = `QS_PORT_BASE=23000\n${readFileSync(fileURLToPath(new URL('../../task/prelude.sh', import.meta.url)), 'utf8')}\n`;
    const printed = "seq 1 20000; echo 'Server ready on 8080'; seq 1 20000";
    const cut = await through({ replay: [printed, 'echo done'], budgets: { max_output_chars: 2000 }, script: `${expect_}qs_expect_output --contains 'Server ready on 8080'` });
    expect(cut.events.find((e) => e.type === 'tool.result')).toMatchObject({ exit_code: 0, truncated: true });
    expect(cut.code).toBe(2);
    const v = verdict(cut.events);
    expect(v).toMatchObject({ classification: 'budget_exhausted', evidential: false, stop_reason: 'completed' });
    expect(String(v?.detail)).toContain("check failed: nothing the run printed contains 'Server ready on 8080'");
    expect(String(v?.detail)).toMatch(/command 1 printed \d+ characters/);
    expect(String(v?.detail)).toContain('max_output_chars (2000)');
    // Nothing cut: the same miss is a docs gap.
    const whole = await through({ replay: ['echo other', 'echo done'], budgets: { max_output_chars: 2000 }, script: `${expect_}qs_expect_output --contains 'Server ready on 8080'` });
    expect(whole.code).toBe(1);
    expect(verdict(whole.events)).toMatchObject({ classification: 'docs_gap' });
  });

  it("reads a failed check's reason from its whole last line, even when max_output_chars cut the check's own output", async () => {
    const expect_ = `QS_PORT_BASE=23000\n${readFileSync(fileURLToPath(new URL('../../task/prelude.sh', import.meta.url)), 'utf8')}\n`;
    // 100 characters keep 50 of the tail: less than the helper's reason line, printed after the last 20 lines of the session.
    const { code, events } = await through({ replay: ["seq 1 1000; echo 'greeter listening on 3000'; seq 1 1000"], budgets: { max_output_chars: 100 }, script: `${expect_}qs_expect_output --contains 'greeter listening on 3000'` });
    const done = events.find((e) => e.type === 'check.completed');
    expect(done).toMatchObject({ passed: false, reason: "check failed: nothing the run printed contains 'greeter listening on 3000'" });
    expect(String(done?.output).length).toBeLessThan(200);
    expect(code).toBe(2);
    expect(verdict(events)).toMatchObject({ classification: 'budget_exhausted', evidential: false });
    expect(String(verdict(events)?.detail)).toMatch(/^check failed: nothing the run printed contains 'greeter listening on 3000'; but command 1 printed \d+ characters/);
  });

  describe('a docs route page that could not be read is not evidence about the docs', () => {
    const site = { server: undefined as Awaited<ReturnType<typeof serveDocs>> | undefined };
    const url = (path: string) => `${site.server?.url ?? ''}${path}`;
    beforeAll(async () => {
      site.server = await serveDocs(SITE, { redirects: { '/loop-a': '/loop-b', '/loop-b': '/loop-a' }, statuses: { '/down.html': 503 } });
    });
    afterAll(async () => {
      await site.server?.close();
    });

    it.each<[string, string, string, string]>([
      ['a 503 from the docs site is infrastructure', '/down.html', 'infra_error', 'HTTP 503 Service Unavailable'],
      ['a 404 (a stale or mistyped route) is the harness\'s', '/moved.html', 'harness_error', 'HTTP 404 Not Found'],
      ['a redirect loop is the harness\'s', '/loop-a', 'harness_error', 'a redirect loop'],
    ])('%s', async (_name, path, classification, error) => {
      const { code, events } = await through({ docs: [url('/install.html'), url(path)], replay: ['false'], script: 'test -f made || { echo "check failed: made is missing"; exit 1; }' });
      expect(events.find((e) => e.type === 'docs.error')).toMatchObject({ url: url(path) });
      expect(code).toBe(2);
      const v = verdict(events);
      expect(v).toMatchObject({ classification, evidential: false, stop_reason: 'command_failed', docs_pages_read: [url('/install.html')] });
      expect(String(v?.detail)).toContain(`docs route page ${url(path)} could not be read (`);
      expect(String(v?.detail)).toContain(error);
    });

    it('a run that passes without a route page stays a pass, and its detail says the page could not be read', async () => {
      const { code, events } = await through({ docs: [url('/install.html'), url('/moved.html')], replay: ['touch made'], script: 'test -f made || { echo "check failed: made is missing"; exit 1; }' });
      expect(code).toBe(0);
      const v = verdict(events);
      expect(v).toMatchObject({ classification: 'passed', evidential: true });
      expect(String(v?.detail)).toMatch(new RegExp(`^replayed 1 command; docs route page ${url('/moved.html').replace(/[.]/g, '\\.')} could not be read \\(HTTP 404 Not Found.*\\): the run passed without it$`));
    });

    it('a route page read on a second try was read; a page off the route that failed changes nothing', async () => {
      const lines = (await agent(ndjson([taskLoaded('r1', { docs: [url('/install.html')], replay: ['false'], script: 'exit 1' })]))).split('\n');
      // A model agent's own reads: the route page failed once, then answered; a guessed page 404'd.
      const at = lines.findIndex((l) => l.includes('"docs.read"'));
      const failed = { ...JSON.parse(lines[at] as string), type: 'docs.error', error: 'HTTP 503 Service Unavailable: x', status: 503, reason: 'http_status', from: 'fetch', hops: [] };
      for (const k of ['resolved_to', 'chars', 'original_chars', 'truncated', 'sha256', 'page', 'pages', 'robots_ignored']) delete failed[k];
      const guessed = { ...failed, url: url('/guessed.html'), error: 'HTTP 404 Not Found: x', status: 404 };
      lines.splice(at, 0, JSON.stringify(failed), JSON.stringify(guessed));
      const { code, events } = await check(lines.join('\n'));
      expect(code).toBe(1);
      expect(verdict(events)).toMatchObject({ classification: 'docs_gap' });
    });
  });

  it('judges each run of a multi-task stream before the next one starts; a docs gap anywhere is exit 1', async () => {
    const input = await agent(ndjson([taskLoaded('a', { replay: ['echo yes'], script: SESSION_HAS('yes') }), taskLoaded('b', { replay: ['echo no'], script: SESSION_HAS('yes') })]));
    const { code, events } = await check(input);
    expect(code).toBe(1);
    expect(events.filter((e) => e.type === 'run.completed').map((e) => [e.run_id, e.classification])).toEqual([
      ['a', 'passed'],
      ['b', 'docs_gap'],
    ]);
    const at = (t: string, r: string) => events.findIndex((e) => e.type === t && e.run_id === r);
    expect(at('run.completed', 'a')).toBeLessThan(at('task.loaded', 'b'));
  });

  it('forwards a run another stage already ended and gives it no second verdict (exit 2)', async () => {
    const failed = { v: 1, type: 'run.failed', ts: '2026-01-01T00:00:00.000Z', run_id: 'r1', stage: 'qs-agent', failed_stage: 'qs-agent', error: 'cannot make a sandbox: no bwrap' };
    const { code, events } = await check(ndjson([taskLoaded('r1'), failed]));
    expect(code).toBe(2);
    expect(events.map((e) => e.type)).toEqual(['task.loaded', 'run.failed']);
  });

  it('says UNENFORCED in the verdict and its summary line when the run had the local backend', async () => {
    const { code, events, err } = await check(await agent(ndjson([taskLoaded('r1')]), 'local'), { level: 'normal' });
    expect(code).toBe(0);
    expect(verdict(events)).toMatchObject({ classification: 'passed', backend: 'local', enforced: false });
    expect(err).toContain('PASS  task-r1: passed (UNENFORCED: local backend)');
  });

  it('says an empty input has nothing to check (exit 2: no evidence)', async () => {
    const { code, events, err } = await check('', { level: 'normal' });
    expect(code).toBe(2);
    expect(events).toEqual([]);
    expect(err).toContain('qs-check: no runs in the input: nothing to check (no evidence)');
  });

  it('says a stream without an agent is incomplete (exit 3)', async () => {
    const { code, events, err } = await check(ndjson([taskLoaded('r1')]));
    expect(code).toBe(3);
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', failed_stage: 'qs-check' });
    expect(err).toContain('incomplete stream: no sandbox.ready for task-r1');
  });

  it('names qs-agent as the stage that failed when its run started and the stream ends before agent.completed (exit 3)', async () => {
    // qs-agent killed mid-run: its events up to a command, then nothing.
    const full = (await agent(ndjson([taskLoaded('r1', { replay: ['echo hi'], script: 'true' })]))).split('\n').filter((l) => l !== '');
    const cut = full.slice(0, full.findIndex((l) => l.includes('"tool.call"')) + 1);
    expect(cut.some((l) => l.includes('"agent.started"'))).toBe(true);
    const { code, events, err } = await check(`${cut.join('\n')}\n`);
    expect(code).toBe(3);
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', failed_stage: 'qs-agent' });
    expect(err).toContain('incomplete stream: qs-agent started task-r1 and never finished it');
    // With no agent stage at all, the pipeline lacks one: that is the input's fault, said by qs-check.
    const bare = full.filter((l) => !/"stage":"qs-agent"/.test(l) || l.includes('"sandbox.ready"'));
    const none = await check(`${bare.join('\n')}\n`);
    expect(none.events.at(-1)).toMatchObject({ type: 'run.failed', failed_stage: 'qs-check' });
  });

  it('says a task that did not validate ran nothing, naming its first error (exit 3)', async () => {
    const diagnostic = { v: 1, type: 'diagnostic', ts: '2026-01-01T00:00:00.000Z', run_id: 'r1', stage: 'qs-validate', severity: 'error', code: 'QS033', message: "success.wait_http.url must be an http(s) URL, got '/'", path: 't.yaml', line: 14 };
    const { code, events, err } = await check(ndjson([diagnostic]));
    expect(code).toBe(3);
    expect(events.map((e) => e.type)).toEqual(['diagnostic', 'run.failed']);
    expect(err).toContain("qs-validate refused it, so nothing ran (t.yaml:14: success.wait_http.url must be an http(s) URL, got '/')");
  });

  it('re-runs the check on a kept workspace from the saved stream, replacing its own earlier events', async () => {
    const saved = await agent(ndjson([taskLoaded('r1', { replay: ['echo kept > file.txt'], script: 'grep -q kept file.txt' })]));
    const first = await check(saved, { keep: true });
    const root = String(first.events.find((e) => e.type === 'sandbox.ready')?.root);
    expect(verdict(first.events)).toMatchObject({ classification: 'passed', workspace_kept: root });
    expect(existsSync(root)).toBe(true);
    const again = await check(first.events.map((e) => JSON.stringify(e)).join('\n'), { keep: true });
    expect(again.code).toBe(0);
    expect(again.events.filter((e) => e.type === 'run.completed')).toHaveLength(1);
    expect(again.events.filter((e) => e.stage === 'qs-check').map((e) => e.type)).toEqual(['check.started', 'check.completed', 'sandbox.usage', 'run.completed']);
    const last = await check(saved);
    expect(verdict(last.events)).toMatchObject({ classification: 'passed', workspace_kept: null });
    expect(existsSync(root)).toBe(false);
    const gone = await check(saved);
    expect(gone.code).toBe(3);
    expect(gone.events.at(-1)).toMatchObject({ type: 'run.failed' });
    expect(String(gone.events.at(-1)?.error)).toContain('was it removed?');
  });

  it('reports interrupted and exits 130 when stopped during the check', async () => {
    const saved = await agent(ndjson([taskLoaded('r1', { replay: ['true'], script: 'echo started; sleep 30' })]));
    const io = memoryIo({ stdin: saved, env: ENV });
    const pending = run({ keep: false, level: 'quiet' }, io);
    const timer = setInterval(() => {
      if (io.out().includes('check.started')) {
        clearInterval(timer);
        setTimeout(() => io.abort(new Error('interrupted by SIGINT')), 200);
      }
    }, 20);
    const code = await pending;
    clearInterval(timer);
    expect(code).toBe(130);
    const events = parseOut(io.out());
    expect(events.at(-1)).toMatchObject({ type: 'run.interrupted', signal: 'SIGINT', phase: 'check' });
    expect(events.some((e) => e.type === 'run.completed')).toBe(false);
  });
});

/**
 * The agent's "server", as a replay command leaves it in the workspace: run by the check, it waits for
 * the check's grep (blocked reading its stdin) and rewrites the code after that read into `exit(0)`,
 * by ptrace or through /proc/PID/mem, so a grep that finds nothing exits 0. It says what it managed.
 */
const FORGER = `import ctypes, os, platform, struct, sys, time
route = sys.argv[1]
arch = platform.machine()
code = {'x86_64': '31ffb8e70000000f05' + '90' * 7, 'aarch64': '000080d2c80b80d2010000d41f2003d5'}[arch]
code = bytes.fromhex(code)
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
def grep():
    for p in os.listdir('/proc'):
        try:
            if p.isdigit() and open('/proc/%s/comm' % p).read() == 'grep\\n':
                f = open('/proc/%s/syscall' % p).read().split()
                if f[0] == {'x86_64': '0', 'aarch64': '63'}[arch] and f[1] == '0x0':
                    return int(p), int(f[-1], 16)
        except OSError:
            pass
def forge(pid, pc):
    if route == 'mem':
        os.pwrite(os.open('/proc/%d/mem' % pid, os.O_RDWR), code, pc)
        return 'rewritten'
    if libc.ptrace(0x4206, pid, None, None) != 0:
        return 'refused: ' + os.strerror(ctypes.get_errno())
    libc.ptrace(0x4207, pid, None, None)
    os.waitpid(pid, 0x40000000)
    for i in (0, 8):
        libc.ptrace(5, pid, ctypes.c_void_p(pc + i), ctypes.c_void_p(struct.unpack('<Q', code[i:i + 8])[0]))
    libc.ptrace(17, pid, None, None)
    return 'rewritten'
target = None
for _ in range(500):
    target = grep()
    if target:
        break
    time.sleep(0.02)
try:
    print('forger:', forge(*target) if target else 'no grep seen')
except OSError as e:
    print('forger: refused:', e)
sys.stdout.flush()
open('forged', 'w').close()
`;

/** The check: the agent's server in the background, then a grep that must not find the greeting (its input waits for the forger). */
const FORGED_CHECK = (route: string) => `rm -f forged; python3 serve.py ${route} &
{ for i in $(seq 150); do [ -e forged ] && break; sleep 0.1; done; echo 'Hello, Bob!'; } | grep -q 'Hello, Ada!'; found=$?
wait
[ "$found" -eq 0 ] || { echo "check failed: no greeting for Ada"; exit 1; }`;

describe.runIf(['x64', 'arm64'].includes(process.arch))('qs-check: what the check runs cannot change the verdict of the tools beside it', () => {
  // Through /proc/PID/mem the refusal is a write the sandbox refused, on the record: the run is then
  // the harness's (inconclusive), as every failed step with a denial is; never a pass.
  it.each([
    ['ptrace', /^forger: refused: Operation not permitted$/m, 'docs_gap', 1],
    ['mem', /^forger: refused: \[Errno 30\] Read-only file system: '\/proc\/\d+\/mem'$/m, 'harness_error', 2],
  ])("a server the agent left cannot rewrite the check's grep (%s) into a pass", async (route, refusal, classification, exit) => {
    const { code, events } = await through({ replay: [`cat > serve.py <<'PY'\n${FORGER}PY`], script: FORGED_CHECK(route) });
    const completed = events.find((e) => e.type === 'check.completed');
    expect(completed).toMatchObject({ passed: false, exit_code: 1, reason: 'check failed: no greeting for Ada' });
    expect(String(completed?.output)).toMatch(refusal);
    const denied = events.filter((e) => e.type === 'sandbox.denied').map((e) => String(e.path));
    expect(denied).toEqual(route === 'mem' ? [expect.stringMatching(/^\/proc\/\d+\/mem$/)] : []);
    expect(verdict(events)).toMatchObject({ classification });
    expect(code).toBe(exit);
  });
});

describe('qs-check --npm-registry (qs run asks npm once per sweep, and passes it on)', () => {
  const BIN = fileURLToPath(new URL('../bin/qs-check.js', import.meta.url));
  const bin = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { input: '', encoding: 'utf8' });

  it('refuses a registry that is not an http(s) URL, a cafile without a registry, a registry without a cache (exit 3, nothing read)', () => {
    const bad = bin(['--install-cache', 'store', '--npm-registry', 'ftp://mirror.example/']);
    expect(bad.status).toBe(3);
    expect(bad.stderr).toContain("--npm-registry: 'ftp://mirror.example/' is not an http(s) URL");
    const alone = bin(['--npm-cafile', 'ca.pem']);
    expect(alone.status).toBe(3);
    expect(alone.stderr).toContain('--npm-cafile goes with --npm-registry');
    const uncached = bin(['--npm-registry', 'https://mirror.example/']);
    expect(uncached.status).toBe(3);
    expect(uncached.stderr).toContain('--npm-registry goes with --install-cache');
  });
});

