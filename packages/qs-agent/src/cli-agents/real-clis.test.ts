// Opt-in (QUICKLOOP_REAL_CLIS=1): the real `claude` and `codex` as qs-agent's CLI agents, inside the bwrap sandbox, against the mock through the forwarder.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findOnPath, startMockServer, type MockServer } from '@quickloop/testkit';

const OPTED_IN = process.env.QUICKLOOP_REAL_CLIS === '1';
const claude = findOnPath('claude');
const codex = findOnPath('codex');
const why = (bin: string, found: string | undefined) => (!OPTED_IN ? 'skipped: set QUICKLOOP_REAL_CLIS=1 to run' : found ? `using ${found}` : `skipped: ${bin} not on PATH`);

const BIN = join(fileURLToPath(new URL('../../../../', import.meta.url)), 'node_modules', '.bin');
const SECRET = 'sk-real-cli-SECRET-must-stay-outside-77';

let mock: MockServer;
let work: string;
beforeAll(async () => {
  if (!OPTED_IN) return;
  mock = await startMockServer({ whenEmpty: 'echo' });
  work = mkdtempSync(join(tmpdir(), 'qs-real-cliagents-'));
});
afterAll(async () => {
  await mock?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});
afterEach(() => mock?.reset());

function pipeline(agent: string, env: Record<string, string>) {
  const file = join(work, `${agent}.yaml`);
  writeFileSync(file, ['name: real-cli', 'goal: Write hello.txt saying hello.', 'docs:', '  path:', '    - https://docs.greeter.test/quickstart.html', 'success:', '  script: grep -q hello hello.txt', 'budgets:', '  max_turns: 6', '  max_seconds: 180', ''].join('\n'));
  const r = spawnSync('bash', ['-c', `qs-validate ${file} | qs-agent --agent ${agent} | qs-check`], { cwd: work, encoding: 'utf8', env: { PATH: `${BIN}:${process.env.PATH ?? ''}`, HOME: work, ...env } });
  const events = r.stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown> & { type: string });
  return { ...r, events };
}

describe.skipIf(!OPTED_IN || !claude)(`qs-agent --agent claude-code with the real claude (${why('claude', claude)})`, () => {
  it('runs the Bash call the mock asks for inside the sandbox and passes; the key stays outside', () => {
    mock.push({ toolCalls: [{ name: 'Bash', input: { command: 'echo hello > hello.txt', description: 'write the file' } }] }, { text: 'Done.' });
    const r = pipeline('claude-code', { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: SECRET });
    expect(r.events.find((e) => e.type === 'run.completed'), r.stderr).toMatchObject({ classification: 'passed' });
    for (const q of mock.requestsFor('anthropic')) expect(q.headers['x-api-key']).toBe(SECRET);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });
});

describe.skipIf(!OPTED_IN || !codex)(`qs-agent --agent codex with the real codex (${why('codex', codex)})`, () => {
  it('runs the exec_command call the mock asks for inside the sandbox and passes; the key stays outside', () => {
    mock.push({ toolCalls: [{ name: 'exec_command', input: { cmd: 'echo hello > hello.txt' } }] }, { text: 'Done.' });
    const r = pipeline('codex', { OPENAI_BASE_URL: mock.openaiUrl, OPENAI_API_KEY: SECRET });
    expect(r.events.find((e) => e.type === 'run.completed'), r.stderr).toMatchObject({ classification: 'passed' });
    for (const q of mock.requestsFor('responses')) expect(q.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });
});
