// `qs run --max-spend USD`: one ledger for the whole sweep, kept while attempts are in flight on two
// workers (real processes, the enforced sandbox, the mock model).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockServer, type MockServer, type RecordedRequest } from '@quickloop/testkit';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'node_modules', '.bin');
const EXAMPLE = join(ROOT, 'fixtures', 'examples', 'greeter.yaml');
const SITE = join(ROOT, 'fixtures', 'docs-site');
/** Each model turn bills 20 000 input tokens at $1 per million: $0.02, far more than its small request shows. */
const TURN_USD = 0.02;

let work: string;
let mock: MockServer;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'qs-spend-'));
  // Two bash calls, then an answer: each attempt is three turns ($0.06) and passes its check.
  mock = await startMockServer({
    requireKey: false,
    whenEmpty: (req: RecordedRequest) => {
      const toolResults = ((req.body?.messages ?? []) as { role?: string }[]).filter((m) => m.role === 'tool').length;
      const usage = { input: 20_000, output: 0 };
      return toolResults < 2 ? { toolCalls: [{ name: 'bash', input: { command: 'echo hi >> hello.txt' } }], usage } : { text: 'Wrote hello.txt.', usage };
    },
  });
  writeFileSync(join(work, 'prices.json'), JSON.stringify({ as_of: '2026-12-01', models: { 'local-coder': { input: 1, cache_read: 0, cache_write: 0, output: 0 } } }));
  writeFileSync(
    join(work, 'hello.yaml'),
    [
      'name: hello-file',
      'goal: Write hello.txt in the workspace.',
      'docs:',
      '  path:',
      '    - https://docs.greeter.test/install.html',
      'success:',
      '  script: |',
      '    [ -f hello.txt ] || qs_fail "hello.txt does not exist"',
      'budgets:',
      '  max_turns: 10',
      '',
    ].join('\n'),
  );
});
afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  await mock.close();
});

function qs(args: string[], tmp: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(join(BIN, 'qs'), args, { cwd: work, env: { PATH: `${BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`, NO_COLOR: '1', TMPDIR: tmp } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown> & { type: string });

describe('qs run --max-spend', () => {
  it('stops a two-worker sweep at the cap: no call past it, exit 130, every stream complete, results.json names the stopped attempts', async () => {
    const tmp = mkdtempSync(join(work, 'tmp-'));
    const cap = 0.15;
    const before = mock.requestsFor('chat').length;
    const r = await qs(
      ['run', 'hello.yaml', '--agent', 'openai-chat', '--model', 'local-coder', '--base-url', mock.openaiUrl, '--prices', 'prices.json', '--repeat', '6', '--workers', '2', '--max-spend', String(cap), '--out', 'capped', '--docs-map', `https://docs.greeter.test/=${SITE}`],
      tmp,
    );
    expect(r.code, r.stderr).toBe(130);
    const last = r.stderr.trim().split('\n').at(-1) as string;
    expect(last).toMatch(/^qs run: stopped by the spend cap \(\$0\.15\): \$[\d.]+ spent; \d of 6 attempts recorded, \d of them stopped by the cap$/);

    const results = JSON.parse(readFileSync(join(work, 'capped', 'results.json'), 'utf8')) as { tasks: { runs: { attempt: number; stop_reason: string; classification: string; evidential: boolean; stream: string }[] }[] };
    const runs = results.tasks.flatMap((t) => t.runs);
    const stopped = runs.filter((x) => x.stop_reason === 'spend_cap');
    // Six attempts at $0.06 cannot fit in $0.15: the cap is met, and attempts after it never start.
    expect(stopped.length).toBeGreaterThanOrEqual(1);
    expect(runs.length).toBeLessThan(6);
    expect(last).toContain(`${runs.length} of 6 attempts recorded, ${stopped.length} of them stopped by the cap`);
    // An attempt stopped by the cap is not evidence, whatever its workspace held; the others finished and count.
    for (const x of stopped) expect(x).toMatchObject({ classification: 'budget_exhausted', evidential: false });
    for (const x of runs.filter((y) => y.stop_reason !== 'spend_cap')) expect(x).toMatchObject({ classification: 'passed', evidential: true });
    expect(runs.some((x) => x.classification === 'passed')).toBe(true);

    let spent = 0;
    let worstOverrun = 0;
    for (const x of runs) {
      const stream = lines(readFileSync(join(work, 'capped', x.stream), 'utf8'));
      // Complete: the stream ends in its verdict, and a stopped attempt says why.
      expect(stream.at(-1)?.type).toBe('run.completed');
      if (x.stop_reason === 'spend_cap') expect(stream.find((e) => e.type === 'agent.completed')?.detail).toMatch(/^stopped by the spend cap before turn \d+: \$[\d.]+ spent or reserved of the \$0\.15 cap/);
      for (const t of stream.filter((e) => e.type === 'agent.turn') as unknown as { usd: number; reserved_usd: number }[]) {
        expect(t.usd).toBeCloseTo(TURN_USD, 9);
        expect(t.reserved_usd).toBeGreaterThan(0);
        spent += t.usd;
        worstOverrun = Math.max(worstOverrun, t.usd - t.reserved_usd);
      }
    }
    // The bound: every call is granted only while settled + reserved + its estimate ≤ cap, so the cap
    // is passed only by what calls in flight at the last grant cost beyond their estimates — at
    // most one call per worker.
    expect(worstOverrun).toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(cap + 2 * worstOverrun + 1e-9);
    // Each turn was granted: none started once the ledger had refused one.
    expect(mock.requestsFor('chat').length - before).toBe(Math.round(spent / TURN_USD));
    // The ledger's socket folder and every sandbox are gone.
    expect(readdirSync(tmp)).toEqual([]);
    // The folder merged (a shard stopped by the cap) exits as qs run did: 130, not "no evidence".
    const merged = await qs(['merge', 'capped', '--out', 'capped-merged'], tmp);
    expect(merged.code, merged.stderr).toBe(130);
    expect(merged.stderr).toContain(`qs merge: a shard was stopped by the spend cap (${stopped.length} attempt${stopped.length === 1 ? '' : 's'})`);
  });

  it('is a one-line usage error before anything runs when the cap cannot be priced or kept', async () => {
    const tmp = mkdtempSync(join(work, 'tmp-'));
    for (const [args, message] of [
      [['--agent', 'openai-chat', '--model', 'local-coder', '--base-url', mock.openaiUrl, '--max-spend', '1'], "--max-spend: model 'local-coder' is not in the price book"],
      [['--agent', 'openai-chat', '--model', 'local-coder', '--base-url', mock.openaiUrl, '--prices', 'prices.json', '--max-spend', 'lots'], '--max-spend must be an amount in USD greater than 0, such as 5 or 0.50 (got lots)'],
      [['--agent', 'openai-chat', '--model', 'local-coder', '--base-url', mock.openaiUrl, '--prices', 'prices.json', '--max-spend', '0'], '--max-spend must be an amount in USD greater than 0, such as 5 or 0.50 (got 0)'],
      [['--agent', 'claude-code', '--max-spend', '1'], '--max-spend cannot be kept with --agent claude-code'],
    ] as const) {
      const r = await qs(['run', 'hello.yaml', ...args], tmp);
      expect(r.code, args.join(' ')).toBe(3);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr).toContain(message);
      expect(r.stdout).toBe('');
      expect(readdirSync(tmp)).toEqual([]);
    }
  });

  it('a replay sweep costs nothing: the cap never stops it', async () => {
    const tmp = mkdtempSync(join(work, 'tmp-'));
    const r = await qs(['run', EXAMPLE, '--max-spend', '0.000001', '--docs-map', `https://docs.greeter.test/=${SITE}`], tmp);
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stdout).find((e) => e.type === 'run.completed')).toMatchObject({ classification: 'passed' });
    expect(readdirSync(tmp)).toEqual([]);
  });
});
