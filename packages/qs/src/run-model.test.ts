// `qs run --agent MODEL`: the model flags reach qs-agent (real processes, the enforced sandbox, the mock model).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockServer, type MockServer } from '@quickloop/testkit';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'node_modules', '.bin');
const EXAMPLE = join(ROOT, 'fixtures', 'examples', 'greeter.yaml');
const SITE = join(ROOT, 'fixtures', 'docs-site');

let work: string;
let mock: MockServer;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'qs-run-model-'));
  mock = await startMockServer({ whenEmpty: 'error', requireKey: false });
});
afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  await mock.close();
});

function sh(argv: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0] as string, argv.slice(1), { cwd: work, env: { PATH: `${BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const events = (out: string) => out.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown> & { type: string });

describe('qs run --agent MODEL with a bad configuration', () => {
  it('is a one-line usage error before any stage starts: no sandbox is made', async () => {
    // Every sandbox is made under TMPDIR: a private one shows that none was.
    const tmp = mkdtempSync(join(work, 'tmp-'));
    writeFileSync(join(work, 'bad-prices.json'), '{"as_of": "2026-12-01", "models": {"m": {"input": 1}}}');
    for (const [args, message] of [
      [['--agent', 'anthropic'], 'qs: --agent anthropic needs an API key: set QS_ANTHROPIC_API_KEY or ANTHROPIC_API_KEY'],
      [['--agent', 'openai-chat', '--base-url', 'http://127.0.0.1:9/v1'], '--agent openai-chat needs --model'],
      [['--agent', 'openai-chat', '--model', 'm', '--base-url', 'http://127.0.0.1:9/v1', '--prices', 'bad-prices.json'], 'bad-prices.json: models.m.cache_read must be a number ≥ 0'],
      // The fixed agents' flags too, as qs-agent would refuse them in every attempt.
      [['--agent', 'recorded'], 'qs: --agent recorded needs --from FILE (a saved stream of a model run)'],
      [['--agent', 'recorded', '--from', 'no-such-stream.ndjson'], 'qs: --from no-such-stream.ndjson: cannot read it: ENOENT'],
      [['--agent', 'recorded', '--from', 'bad-prices.json'], 'qs: --from bad-prices.json:1: not an event (an object with type and run_id)'],
      [['--from-run', 'r1'], 'qs: --from and --from-run go with --agent recorded, not --agent replay'],
      [['--prices', 'no-such-prices.json'], 'qs: --prices no-such-prices.json: cannot read it: ENOENT'],
    ] as const) {
      const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(join(BIN, 'qs'), ['run', EXAMPLE, ...args], { cwd: work, env: { PATH: `${BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`, NO_COLOR: '1', TMPDIR: tmp } });
        let stderr = '';
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        child.on('close', (code) => resolve({ code, stderr }));
      });
      expect(r.code, args.join(' ')).toBe(3);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(message);
      expect(readdirSync(tmp)).toEqual([]);
    }
  });
});

describe('qs run --agent openai-chat --model M --base-url URL --prices FILE --no-stream', () => {
  it('passes every model flag to qs-agent: a keyless local server follows the docs and the run passes, priced from the file', async () => {
    const validated = events((await sh(['qs-validate', EXAMPLE])).stdout).find((e) => e.type === 'task.loaded') as { task: { replay: string[] } };
    mock.push(
      { toolCalls: [{ name: 'read_docs', input: { url: 'https://docs.greeter.test/quickstart.html' } }] },
      ...validated.task.replay.map((command) => ({ toolCalls: [{ name: 'bash', input: { command } }], usage: { input: 1000, output: 100 } })),
      { text: 'Built the greeter.' },
    );
    writeFileSync(join(work, 'prices.json'), JSON.stringify({ as_of: '2026-12-01', models: { 'local-coder': { input: 1, cache_read: 0, cache_write: 0, output: 10 } } }));
    const r = await sh(['qs', 'run', EXAMPLE, '--agent', 'openai-chat', '--model', 'local-coder', '--base-url', mock.openaiUrl, '--prices', 'prices.json', '--no-stream', '--docs-map', `https://docs.greeter.test/=${SITE}`]);
    const out = events(r.stdout);
    expect(out.find((e) => e.type === 'run.completed'), r.stderr).toMatchObject({ classification: 'passed' });
    expect(r.code).toBe(0);
    expect(out.find((e) => e.type === 'agent.started')).toMatchObject({ agent: 'openai-chat', model: 'local-coder', base_url: mock.openaiUrl });
    const chat = mock.requestsFor('chat');
    expect(chat.every((q) => q.stream === false && q.body.model === 'local-coder')).toBe(true);
    // One turn per command at 1000 in and 100 out; the docs read and the last turn at the mock's 12 in, 7 out.
    const done = out.find((e) => e.type === 'agent.completed') as { usd: number; turns: number };
    const n = validated.task.replay.length;
    expect(done.turns).toBe(n + 2);
    expect(done.usd).toBeCloseTo((n * (1000 * 1 + 100 * 10) + 2 * (12 * 1 + 7 * 10)) / 1e6, 9);

    // That stream, re-driven with no model by --agent recorded: the same verdict, at no cost.
    writeFileSync(join(work, 'recorded.ndjson'), r.stdout);
    const again = await sh(['qs', 'run', EXAMPLE, '--agent', 'recorded', '--from', 'recorded.ndjson', '--docs-map', `https://docs.greeter.test/=${SITE}`]);
    expect(events(again.stdout).find((e) => e.type === 'run.completed'), again.stderr).toMatchObject({ classification: 'passed' });
    expect(again.code).toBe(0);
    // A task the stream holds no run of is refused before any stage starts, not in every attempt.
    const tmp = mkdtempSync(join(work, 'tmp-'));
    writeFileSync(join(work, 'other.yaml'), 'name: other-task\ngoal: Something else.\ndocs:\n  path:\n    - https://docs.greeter.test/install.html\nreplay:\n  - echo hi\nsuccess:\n  script: "true"\n');
    const other = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(join(BIN, 'qs'), ['run', 'other.yaml', '--agent', 'recorded', '--from', 'recorded.ndjson', '--docs-map', `https://docs.greeter.test/=${SITE}`], { cwd: work, env: { PATH: `${BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`, NO_COLOR: '1', TMPDIR: tmp } });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(other.code, other.stderr).toBe(3);
    expect(other.stderr).toMatch(/^qs: --from recorded\.ndjson: no model run of task 'other-task' \(runs with turns: \S+ \(greeter-quickstart\)\); choose one with --from-run$/m);
    expect(readdirSync(tmp)).toEqual([]);
  });
});

// The verdict is about the docs only when the agent read them: a model that never did, and a
// recorded run whose re-driven results differ from what its turns answered, say nothing about them.
describe('qs run --agent MODEL|recorded: a failed run whose agent did not act on these docs is no evidence', () => {
  const TASK = [
    'name: greeter-hello-file',
    'goal: Write hello into hello.txt, as the Greeter docs say.',
    'docs:',
    '  path:',
    '    - https://docs.greeter.test/quickstart.html',
    'budgets:',
    '  max_turns: 5',
    'success:',
    '  script: grep -q hello hello.txt || qs_fail "hello.txt does not say hello"',
    '',
  ].join('\n');
  const READ = { toolCalls: [{ name: 'read_docs', input: { url: 'https://docs.greeter.test/quickstart.html' } }] };
  const WRITE = { toolCalls: [{ name: 'bash', input: { command: 'echo hello > hello.txt' } }] };
  const model = (out: string, ...args: string[]) => sh(['qs', 'run', 'task.yaml', '--agent', 'openai-chat', '--model', 'local-coder', '--base-url', mock.openaiUrl, '--no-stream', '--docs-map', `https://docs.greeter.test/=${SITE}`, '--out', out, '--junit', `${out}.xml`, ...args]);
  const results = (out: string) => JSON.parse(readFileSync(join(work, out, 'results.json'), 'utf8')) as { counts: Record<string, number>; tasks: Array<{ runs: Array<{ classification: string; outcome: { detail: string } }> }> };

  beforeAll(() => {
    writeFileSync(join(work, 'task.yaml'), TASK);
    // The same task, where a folder stands in the file's way: the recorded write now fails.
    writeFileSync(join(work, 'task-blocked.yaml'), TASK.replace('budgets:', 'setup:\n  - mkdir hello.txt\nbudgets:'));
  });

  it('a model that finishes at once with a sentence, reading nothing and running nothing: harness_error (exit 2), said why, in every view', async () => {
    mock.push({ text: 'The file is surely there already.' });
    const r = await model('no-read');
    const done = events(r.stdout).find((e) => e.type === 'run.completed');
    expect(done, r.stderr).toMatchObject({ classification: 'harness_error', evidential: false, docs_pages_read: [] });
    expect(String(done?.detail)).toMatch(/^the agent read no page of the docs .*so its failure says nothing about them \(check failed: hello.txt does not say hello\)$/);
    expect(r.code).toBe(2);
    expect(results('no-read').counts).toMatchObject({ docs_gap: 0, inconclusive: 1 });
    expect(readFileSync(join(work, 'no-read.xml'), 'utf8')).toContain('<error type="harness_error" message="the agent read no page of the docs');
  });

  it('a model that works from memory without reading the docs, and fails: harness_error; the same work after reading them is a docs gap', async () => {
    mock.push({ toolCalls: [{ name: 'bash', input: { command: 'echo hi > hello.txt' } }] }, { text: 'Done.' });
    const memory = await model('memory');
    expect(events(memory.stdout).find((e) => e.type === 'run.completed'), memory.stderr).toMatchObject({ classification: 'harness_error' });
    expect(memory.code).toBe(2);
    mock.push(READ, { toolCalls: [{ name: 'bash', input: { command: 'echo hi > hello.txt' } }] }, { text: 'Done.' });
    const read = await model('read');
    expect(events(read.stdout).find((e) => e.type === 'run.completed'), read.stderr).toMatchObject({ classification: 'docs_gap', evidential: true, detail: 'check failed: hello.txt does not say hello' });
    expect(read.code).toBe(1);
  });

  it('a recorded run re-driven where a command now fails that the recording says succeeded: the turns after it answer the recording, so its failure is no evidence', async () => {
    mock.push(READ, WRITE, { text: 'Wrote hello.txt.' });
    const recorded = await model('recorded');
    expect(recorded.code, recorded.stderr).toBe(0);
    const from = join(work, 'recorded', 'greeter-hello-file', '1', 'events.ndjson');
    // Re-driven as it was recorded: the same results, the same verdict.
    const same = await sh(['qs', 'run', 'task.yaml', '--agent', 'recorded', '--from', from, '--docs-map', `https://docs.greeter.test/=${SITE}`]);
    expect(events(same.stdout).find((e) => e.type === 'run.completed'), same.stderr).toMatchObject({ classification: 'passed' });
    const blocked = await sh(['qs', 'run', 'task-blocked.yaml', '--agent', 'recorded', '--from', from, '--docs-map', `https://docs.greeter.test/=${SITE}`, '--out', 'diverged', '--junit', 'diverged.xml']);
    const out = events(blocked.stdout);
    expect(out.filter((e) => e.type === 'replay.diverged').map((e) => e.field)).toContain('exit_code');
    const done = out.find((e) => e.type === 'run.completed');
    expect(done, blocked.stderr).toMatchObject({ classification: 'harness_error', evidential: false });
    expect(String(done?.detail)).toMatch(/^the recorded run's turn 2 .*exit_code: recorded 0, now 1.*says nothing about the docs \(check failed: hello.txt does not say hello\)$/);
    expect(blocked.code).toBe(2);
    expect(results('diverged').tasks[0]?.runs[0]).toMatchObject({ classification: 'harness_error', outcome: { detail: done?.detail } });
  });
});
