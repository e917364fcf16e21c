// --agent claude-code and --agent codex end to end: the fake CLIs at the wire level, inside the real bwrap sandbox, against the mock through the forwarder.
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdtempSync, statSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_CLI_DIR, startMockServer, type MockServer } from '@quickloop/testkit';
import { shownInside } from '@quickloop/sandbox';
import { PLACEHOLDER_KEY } from './cli-agent.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const BIN = join(ROOT, 'node_modules', '.bin');
const SECRET = 'sk-quickloop-test-SECRET-0f9e8d7c6b5a';
/** A gateway's key, given in the query of the base URL. */
const GATEWAY_KEY = 'gw-quickloop-test-GATEWAY-9a8b7c';

let work: string;
let mock: MockServer;
/**
 * Where the fake CLIs run from. The sandbox shows a CLI only from a prefix outside homes, /tmp and
 * /var; a checkout under /tmp (a CI clone) is not one, so there the fakes are copied under /opt for
 * the file, as a real `claude` would be installed.
 */
let fakes = FAKE_CLI_DIR;
let installed: string | undefined;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'qs-cliagents-'));
  mock = await startMockServer({ whenEmpty: 'error' });
  if (!shownInside(join(FAKE_CLI_DIR, 'claude'))) {
    installed = mkdtempSync('/opt/quickloop-test-clis-');
    cpSync(FAKE_CLI_DIR, join(installed, 'bin'), { recursive: true });
    chmodSync(installed, 0o755);
    fakes = join(installed, 'bin');
  }
});
afterAll(async () => {
  await mock.close();
  rmSync(work, { recursive: true, force: true });
  if (installed !== undefined) rmSync(installed, { recursive: true, force: true });
});
afterEach(() => mock.reset());

type Ev = Record<string, unknown> & { type: string };

interface Result {
  codes: number[];
  events: Ev[];
  stdout: string;
  stderr: string;
}

function sh(pipeline: string, env: Record<string, string>): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `${pipeline}; echo "codes: \${PIPESTATUS[*]}" >&2`], {
      cwd: work,
      env: { PATH: `${fakes}:${BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: work, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', () => {
      const m = /codes: ([\d ]+)\s*$/.exec(stderr);
      const events = stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Ev);
      resolve({ codes: m ? (m[1] as string).trim().split(' ').map(Number) : [], events, stdout, stderr });
    });
  });
}

function task(name: string, budgets: Record<string, number> = {}): string {
  const b = { max_turns: 5, max_seconds: 120, ...budgets };
  const file = join(work, `${name}.yaml`);
  writeFileSync(
    file,
    [
      `name: ${name}`,
      'goal: Write hello.txt saying hello.',
      'docs:',
      '  path:',
      '    - https://docs.greeter.test/quickstart.html',
      'success:',
      '  script: |',
      '    grep -q hello hello.txt || qs_fail "hello.txt does not say hello"',
      'budgets:',
      ...Object.entries(b).map(([k, v]) => `  ${k}: ${v}`),
      '',
    ].join('\n'),
  );
  return file;
}

/** Everything under a folder, as text, for "the key is not in it" assertions. */
function allText(dir: string): string {
  let text = '';
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    try {
      text += readFileSync(join(entry.parentPath, entry.name), 'latin1');
    } catch {
      // unreadable (a socket): nothing of it can hold the key
    }
  }
  return text;
}

/** Live (not zombie) pids whose command line contains `needle`, anywhere on the machine. */
function alive(needle: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1];
        return state !== 'Z' && readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ').includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const of = (r: Result, type: string) => r.events.filter((e) => e.type === type);

/** What the model asks the CLI's shell to do: look for the key everywhere it could be inside, and try the forwarder's other doors. */
const PROBE = [
  'env | grep -c KEY= || true',
  // Bracketed, so the probe's own command line (in /proc) is not a match for it.
  `grep -rlas '${SECRET.replace('SECRET', 'SECRE[T]')}' /proc/*/environ /proc/*/cmdline "$HOME" "$TMPDIR" /tmp . 2>/dev/null | wc -l`,
  'echo -n "path:"; curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:3129/v1/models',
  'echo -n " climb:"; curl -s -o /dev/null -w "%{http_code}" --path-as-is -X POST http://127.0.0.1:3129/v1/messages/../../admin',
  'echo -n " host:"; curl -s -o /dev/null -w "%{http_code}" -X POST -H "Host: evil.test" http://127.0.0.1:3129/admin',
  'echo -n " absolute:"; curl -s -o /dev/null -w "%{http_code}" -x http://127.0.0.1:3129 http://evil.test/v1/messages',
  // The CLI reads docs with its own tools: the docs host is let through the proxy, another host is not.
  'curl -s -o /dev/null -m 10 http://docs.greeter.test/quickstart.html; curl -s -o /dev/null -m 10 http://other.test/',
  'echo " done"; echo hello > hello.txt',
].join('; ');

describe('qs-agent --agent claude-code', () => {
  it('runs claude inside the sandbox against the mock through the forwarder, and passes; the key never enters', async () => {
    mock.push({ toolCalls: [{ name: 'Bash', input: { command: PROBE }, id: 'toolu_probe' }], usage: { input: 100, output: 20 } }, { text: 'Wrote hello.txt.', usage: { input: 150, output: 10, cacheRead: 40 } });
    const r = await sh(`qs-validate ${task('cli-claude')} | qs-agent --agent claude-code --keep | qs-check`, { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: SECRET });
    expect(r.codes, r.stderr).toEqual([0, 0, 0]);
    expect(of(r, 'run.completed')[0]).toMatchObject({ classification: 'passed', stop_reason: 'completed' });
    const turns = of(r, 'agent.turn');
    expect(turns.map((t) => t.stop)).toEqual(['tool_use', 'end_turn']);
    expect(turns[0]).toMatchObject({ turn: 1, usage: { input_tokens: 100, output_tokens: 20 }, request_id: 'req_mock_1', attempts: 1 });
    const call = of(r, 'tool.call')[0] as Ev;
    expect(call).toMatchObject({ tool: 'Bash', call_id: 'toolu_probe', command: PROBE, parent_id: turns[0]?.id });
    const result = of(r, 'tool.result')[0] as Ev;
    expect(result.parent_id).toBe(call.id);
    expect(result.exit_code).toBe(0);
    // The CLI sees one key, the placeholder, and finds the real one nowhere; every other door is shut.
    expect(result.output).toMatch(/^1\n0\npath:403 climb:403 host:403 absolute:403 done\n$/);
    expect(of(r, 'agent.completed')[0]).toMatchObject({ agent: 'claude-code', stop_reason: 'completed', turns: 2, commands: 1, final_text: 'Wrote hello.txt.', usage: { input_tokens: 250, cache_read_tokens: 40, output_tokens: 30 } });
    // Each refusal is recorded as a blocked egress to the vendor's host.
    const blocked = of(r, 'egress.blocked').filter((e) => e.host === '127.0.0.1').map((e) => e.path);
    expect(blocked).toEqual(['/v1/models', '/v1/messages/../../admin', '/admin', 'http://evil.test/v1/messages']);
    // Docs through the proxy, recorded per host (offline the name does not resolve: allowed, then an error upstream).
    expect(of(r, 'egress.blocked').filter((e) => e.host !== '127.0.0.1')).toEqual([expect.objectContaining({ host: 'other.test', reason: 'not_allowlisted' })]);
    expect(r.events.some((e) => (e.type === 'egress.allowed' || e.type === 'egress.error') && e.host === 'docs.greeter.test')).toBe(true);
    expect(of(r, 'run.completed')[0]).toMatchObject({ docs_bypass_attempts: 0 });
    expect(of(r, 'sandbox.ready')[0]).toMatchObject({ forwards: [{ name: 'model-api', port: 3129 }] });
    // The mock got the real key on every model call, and never the placeholder; nothing else reached it.
    const sent = mock.requests;
    expect(sent.map((q) => `${q.method} ${q.url}`)).toEqual(['POST /v1/messages?beta=true', 'POST /v1/messages?beta=true']);
    for (const q of sent) expect(q.headers['x-api-key']).toBe(SECRET);
    expect(mock.receivedText()).not.toContain(PLACEHOLDER_KEY);
    // The key is in no event, no log line, and nowhere in the workspace, home or tmp of the sandbox.
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    const ready = of(r, 'sandbox.ready')[0] as Ev;
    expect(allText(String(ready.root))).not.toContain(SECRET);
    rmSync(String(ready.root), { recursive: true, force: true });
  });

  it('sends the query of ANTHROPIC_BASE_URL (a gateway\'s key) on every model call, and shows it nowhere inside or in the stream', async () => {
    // What the shell inside prints: the base URL it was given, then how many places hold the gateway's key.
    const look = `printf '%s\\n' "$ANTHROPIC_BASE_URL"; grep -rlas '${GATEWAY_KEY.replace('GATEWAY', 'GATEWA[Y]')}' /proc/*/environ /proc/*/cmdline "$HOME" "$TMPDIR" /tmp . 2>/dev/null | wc -l; echo hello > hello.txt`;
    mock.push({ toolCalls: [{ name: 'Bash', input: { command: look }, id: 'toolu_look' }] }, { text: 'ok' });
    const r = await sh(`qs-validate ${task('cli-claude-gateway')} | qs-agent --agent claude-code --keep | qs-check`, { ANTHROPIC_BASE_URL: `${mock.url}/?key=${GATEWAY_KEY}`, ANTHROPIC_API_KEY: SECRET });
    expect(r.codes, r.stderr).toEqual([0, 0, 0]);
    expect(of(r, 'run.completed')[0]).toMatchObject({ classification: 'passed' });
    expect(mock.requests.map((q) => `${q.method} ${q.url}`)).toEqual([`POST /v1/messages?beta=true&key=${GATEWAY_KEY}`, `POST /v1/messages?beta=true&key=${GATEWAY_KEY}`]);
    expect(of(r, 'tool.result')[0]).toMatchObject({ output: 'http://127.0.0.1:3129\n0\n' });
    expect(of(r, 'agent.started')[0]).toMatchObject({ base_url: mock.url });
    expect(r.stdout + r.stderr).not.toContain(GATEWAY_KEY);
    const ready = of(r, 'sandbox.ready')[0] as Ev;
    expect(allText(String(ready.root))).not.toContain(GATEWAY_KEY);
    rmSync(String(ready.root), { recursive: true, force: true });
  });

  it('adds the forwarder to a sandbox qs-sandbox made, and says where it sends', async () => {
    mock.push({ toolCalls: [{ name: 'Bash', input: { command: 'echo hello > hello.txt' } }] }, { text: 'ok' });
    const r = await sh(`qs-validate ${task('cli-claude-reopen')} | qs-sandbox | qs-agent --agent claude-code | qs-check`, { ANTHROPIC_BASE_URL: `${mock.url}/`, ANTHROPIC_API_KEY: SECRET });
    expect(r.codes, r.stderr).toEqual([0, 0, 0, 0]);
    expect(of(r, 'agent.started')[0]).toMatchObject({ agent: 'claude-code', base_url: mock.url });
    expect(of(r, 'run.completed')[0]).toMatchObject({ classification: 'passed' });
    expect(mock.requests).toHaveLength(2);
  });

  it('never follows a link the sandbox made to a host file: the CLI\'s output is read inside, and the harness writes nothing there', async () => {
    // Setup (the task's, run as the sandbox user) plants links where the harness might read or write.
    const file = task('cli-claude-links').replace('.yaml', '-links.yaml');
    writeFileSync(file, readFileSync(task('cli-claude-links'), 'utf8').replace('success:', 'setup:\n  - mkdir -p "$TMPDIR" && for n in .quickloop-agent .quickloop-agent.out prompt.md; do ln -s /proc/self/environ "$TMPDIR/$n"; done && ln -s /etc "$HOME/.codex"\nsuccess:'));
    mock.push({ toolCalls: [{ name: 'Bash', input: { command: 'echo hello > hello.txt' } }] }, { text: 'ok' });
    const r = await sh(`qs-validate ${file} | qs-agent --agent claude-code | qs-check`, { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: SECRET });
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(of(r, 'agent.completed')[0]).toMatchObject({ stop_reason: 'completed' });
  });

  it('maps a persistent 500 to infra_error, with the failed calls as retries', async () => {
    mock.push({ error: { status: 500, message: 'boom' } });
    const r = await sh(`qs-validate ${task('cli-claude-500')} | qs-agent --agent claude-code | qs-check`, { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: SECRET });
    expect(of(r, 'agent.completed')[0]).toMatchObject({ stop_reason: 'error', error_kind: 'infra' });
    expect(of(r, 'run.completed')[0]).toMatchObject({ classification: 'infra_error' });
    // claude retried three times (CLAUDE_CODE_MAX_RETRIES); the fourth failure ended it.
    expect(mock.requests).toHaveLength(4);
    expect(of(r, 'agent.retry').map((e) => [e.turn, e.attempt, e.status, e.error_kind])).toEqual([[1, 1, 500, 'infra'], [1, 2, 500, 'infra'], [1, 3, 500, 'infra']]);
  });

  it('passes after a 429 that claude retried, with the retry on the record and the turn\'s attempts', async () => {
    mock.push({ error: { status: 429, message: 'slow down' } }, { toolCalls: [{ name: 'Bash', input: { command: 'echo hello > hello.txt' } }] }, { text: 'ok' });
    const r = await sh(`qs-validate ${task('cli-claude-429')} | qs-agent --agent claude-code | qs-check`, { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: SECRET });
    expect(of(r, 'run.completed')[0]).toMatchObject({ classification: 'passed' });
    expect(of(r, 'agent.retry')).toEqual([expect.objectContaining({ turn: 1, attempt: 1, status: 429 })]);
    expect(of(r, 'agent.turn').map((t) => t.attempts)).toEqual([2, 1]);
  });

  it('refuses the call past max_tokens and stops the CLI: token_budget', async () => {
    mock.push({ toolCalls: [{ name: 'Bash', input: { command: 'echo one' } }], usage: { input: 400, output: 200 } }, { text: 'never asked for' });
    const r = await sh(`qs-validate ${task('cli-claude-tokens', { max_tokens: 500 })} | qs-agent --agent claude-code | qs-check`, { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: SECRET });
    expect(of(r, 'agent.completed')[0]).toMatchObject({ stop_reason: 'token_budget', turns: 1 });
    expect(of(r, 'run.completed')[0]).toMatchObject({ classification: 'budget_exhausted' });
    expect(mock.requests).toHaveLength(1);
  });

  it('kills the CLI and everything it started at max_seconds, mid-command: timeout', async () => {
    mock.push({ toolCalls: [{ name: 'Bash', input: { command: 'sleep 31337.5151' } }] });
    const r = await sh(`qs-validate ${task('cli-claude-deadline', { max_seconds: 3 })} | qs-agent --agent claude-code | qs-check`, { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: SECRET });
    expect(of(r, 'agent.completed')[0]).toMatchObject({ stop_reason: 'timeout' });
    expect(of(r, 'run.completed')[0]).toMatchObject({ classification: 'budget_exhausted' });
    expect(alive('31337.5151')).toEqual([]);
  });

  it('never lets a model answer that does not come pass max_seconds', async () => {
    mock.push({ hang: true });
    const r = await sh(`qs-validate ${task('cli-claude-hang', { max_seconds: 2 })} | qs-agent --agent claude-code | qs-check`, { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: SECRET });
    expect(of(r, 'agent.completed')[0]).toMatchObject({ stop_reason: 'timeout', turns: 0 });
    expect(of(r, 'run.completed')[0]).toMatchObject({ classification: 'budget_exhausted' });
  });

  it('gives agent_refusal when the model refuses', async () => {
    mock.push({ refusal: 'I will not.', category: 'cyber' });
    const r = await sh(`qs-validate ${task('cli-claude-refusal')} | qs-agent --agent claude-code | qs-check`, { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: SECRET });
    expect(of(r, 'agent.turn')[0]).toMatchObject({ stop: 'refusal', refusal: { category: 'cyber', explanation: 'I will not.' } });
    expect(of(r, 'agent.completed')[0]).toMatchObject({ stop_reason: 'refusal', error_kind: 'refusal' });
    expect(of(r, 'run.completed')[0]).toMatchObject({ classification: 'agent_refusal' });
  });

  it('is a one-line usage error naming the CLI when it is not on PATH, before any sandbox is made', async () => {
    const r = await sh(`qs-validate ${task('cli-missing')} | PATH=${BIN}:/usr/bin:/bin qs-agent --agent claude-code`, { ANTHROPIC_API_KEY: SECRET });
    expect(r.codes[1]).toBe(3);
    expect(r.stderr).toMatch(/--agent claude-code needs `claude` on PATH/);
    expect(of(r, 'sandbox.ready')).toHaveLength(0);
  });

  it('is a usage error naming the CLI when it is installed where the sandbox never looks (a home, /tmp)', async () => {
    const prefix = mkdtempSync(join(tmpdir(), 'qs-user-prefix-'));
    copyFileSync(join(FAKE_CLI_DIR, 'claude'), join(prefix, 'claude'));
    chmodSync(join(prefix, 'claude'), 0o755);
    const r = await sh(`qs-validate ${task('cli-hidden')} | PATH=${prefix}:${BIN}:/usr/bin:/bin qs-agent --agent claude-code`, { ANTHROPIC_API_KEY: SECRET });
    rmSync(prefix, { recursive: true, force: true });
    expect(r.codes[1]).toBe(3);
    expect(r.stderr).toContain(`--agent claude-code: ${prefix}/claude is in a folder the sandbox never shows`);
    expect(of(r, 'sandbox.ready')).toHaveLength(0);
  });

  it('refuses the unenforced backend, where the CLI could read the key from the harness', async () => {
    const r = await sh(`qs-validate ${task('cli-local')} | qs-agent --agent claude-code --backend local --allow-unenforced`, { ANTHROPIC_API_KEY: SECRET });
    expect(r.codes[1]).toBe(3);
    expect(r.stderr).toMatch(/runs only in the enforced sandbox \(bwrap\)/);
    expect(of(r, 'sandbox.ready')).toHaveLength(0);
  });

  it('is a usage error without a key, before any sandbox is made', async () => {
    const r = await sh(`qs-validate ${task('cli-nokey')} | qs-agent --agent claude-code`, {});
    expect(r.codes[1]).toBe(3);
    expect(r.stderr).toMatch(/no API key: set QS_ANTHROPIC_API_KEY or ANTHROPIC_API_KEY/);
    expect(of(r, 'sandbox.ready')).toHaveLength(0);
  });
});

describe('qs-agent --agent codex', () => {
  it('is held to max_turns by the forwarder, since codex has no turns flag', async () => {
    mock.push({ toolCalls: [{ name: 'exec_command', input: { cmd: 'echo one' } }] }, { text: 'never asked for' });
    const r = await sh(`qs-validate ${task('cli-codex-turns', { max_turns: 1 })} | qs-agent --agent codex | qs-check`, { OPENAI_BASE_URL: mock.openaiUrl, OPENAI_API_KEY: SECRET });
    expect(of(r, 'agent.completed')[0]).toMatchObject({ stop_reason: 'max_turns', turns: 1, commands: 1 });
    expect(of(r, 'run.completed')[0]).toMatchObject({ classification: 'budget_exhausted' });
    expect(mock.requests).toHaveLength(1);
  });

  it('writes its provider config from inside the sandbox: a link planted at $HOME/.codex changes nothing of the host', async () => {
    const file = task('cli-codex-links').replace('.yaml', '-links.yaml');
    writeFileSync(file, readFileSync(task('cli-codex-links'), 'utf8').replace('success:', 'setup:\n  - ln -s /etc "$HOME/.codex"\nsuccess:'));
    const before = statSync('/etc').mode;
    const r = await sh(`qs-validate ${file} | qs-agent --agent codex | qs-check`, { OPENAI_BASE_URL: mock.openaiUrl, OPENAI_API_KEY: SECRET });
    expect(statSync('/etc').mode).toBe(before);
    expect(existsSync('/etc/config.toml')).toBe(false);
    expect(of(r, 'agent.completed')[0]).toMatchObject({ stop_reason: 'error' });
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it('sends the query of OPENAI_BASE_URL (a gateway\'s key) on every model call; its config inside is the forwarder\'s, without it', async () => {
    mock.push({ toolCalls: [{ name: 'exec_command', input: { cmd: 'cat "$CODEX_HOME/config.toml"; echo hello > hello.txt' } }] }, { text: 'ok' });
    const r = await sh(`qs-validate ${task('cli-codex-gateway')} | qs-agent --agent codex | qs-check`, { OPENAI_BASE_URL: `${mock.openaiUrl}?key=${GATEWAY_KEY}`, OPENAI_API_KEY: SECRET });
    expect(of(r, 'run.completed')[0]).toMatchObject({ classification: 'passed' });
    expect(mock.requests.map((q) => q.url)).toEqual([`/v1/responses?key=${GATEWAY_KEY}`, `/v1/responses?key=${GATEWAY_KEY}`]);
    expect(of(r, 'tool.result')[0]?.output).toMatch(/base_url = "http:\/\/127\.0\.0\.1:3129\/v1"\n/);
    expect(r.stdout + r.stderr).not.toContain(GATEWAY_KEY);
  });

  it('runs codex exec inside the sandbox with a keyless provider config, and passes', async () => {
    mock.push({ toolCalls: [{ name: 'exec_command', input: { cmd: `cat "$CODEX_HOME/config.toml"; ${PROBE}` }, id: 'call_probe' }] }, { text: 'Done: hello.txt.' });
    const r = await sh(`qs-validate ${task('cli-codex')} | qs-agent --agent codex --keep | qs-check`, { OPENAI_BASE_URL: mock.openaiUrl, OPENAI_API_KEY: SECRET });
    expect(r.codes, r.stderr).toEqual([0, 0, 0]);
    expect(of(r, 'run.completed')[0]).toMatchObject({ classification: 'passed' });
    expect(of(r, 'agent.turn').map((t) => t.stop)).toEqual(['tool_use', 'end_turn']);
    const result = of(r, 'tool.result')[0] as Ev;
    expect(result.output).toMatch(/base_url = "http:\/\/127\.0\.0\.1:3129\/v1"/);
    expect(result.output).toMatch(/\n1\n0\npath:403 climb:403 host:403 absolute:403 done\n$/);
    expect(of(r, 'agent.completed')[0]).toMatchObject({ agent: 'codex', stop_reason: 'completed', commands: 1, final_text: 'Done: hello.txt.' });
    for (const q of mock.requests) expect(q.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(mock.requests.map((q) => q.url)).toEqual(['/v1/responses', '/v1/responses']);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    const ready = of(r, 'sandbox.ready')[0] as Ev;
    expect(allText(String(ready.root))).not.toContain(SECRET);
    rmSync(String(ready.root), { recursive: true, force: true });
  });
});
