// Opt-in (QUICKLOOP_REAL_CLIS=1): a whole loop with the real `claude -p` as host and `codex exec` as judge, against the mock model server.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REAL_CLI_ARGV, claudeMockEnv, codexMockEnv, findOnPath, startMockServer, type MockServer, type RecordedRequest } from '@quickloop/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLoop, runLoopIn, type Loop } from './helpers.js';

const OPTED_IN = process.env.QUICKLOOP_REAL_CLIS === '1';
const claude = findOnPath('claude');
const codex = findOnPath('codex');
const missing = [claude ? '' : 'claude', codex ? '' : 'codex'].filter(Boolean);
const why = !OPTED_IN ? 'skipped: set QUICKLOOP_REAL_CLIS=1 to run' : missing.length ? `skipped: ${missing.join(' and ')} not on PATH` : `using ${claude} and ${codex}`;

// In .env (flagged by the default globs) and echoed by a context command: it must never reach the mock.
const SECRET = 'sk-loop-secret-never-sent-7781';
const verdict = (v: 'pass' | 'revise', issues: string[] = []) => `\`\`\`json\n${JSON.stringify({ verdict: v, blocking_issues: issues, confidence: 0.9, notes: '' })}\n\`\`\``;

let mock: MockServer;
let judged = 0;
/** The model behind both CLIs: the host writes, the judge asks for milestones once, then passes. */
function answer(request: RecordedRequest) {
  if (request.api === 'responses') {
    judged += 1;
    return { text: judged === 1 ? verdict('revise', ['the plan lists no milestones']) : verdict('pass'), usage: { input: 40, output: 12, reasoning: 4 } };
  }
  return { text: '# Draft\n\nMilestones: 1. write. 2. check.\n\nA haiku about loops\nround and round the gate goes\nuntil it says pass', usage: { input: 60, output: 25 } };
}

beforeAll(async () => {
  if (OPTED_IN && claude && codex) mock = await startMockServer({ whenEmpty: answer });
});
afterAll(async () => {
  await mock?.close();
});

describe.skipIf(!OPTED_IN || !claude || !codex)(`loop-run with real CLIs against the mock (${why})`, () => {
  let loop: Loop | undefined;
  afterAll(() => loop?.cleanup());

  it('runs plan, a revision, delivery and both gates: tokens and cost from their JSON modes, no secret sent', async () => {
    loop = makeLoop({
      tweak: (s) => {
        s.host = { cli: 'claude', invoke: [claude!, ...REAL_CLI_ARGV.claudeHost.slice(1)], timeout_sec: 120 };
        s.council[0] = { ...s.council[0], cli: 'codex', invoke: [codex!, ...REAL_CLI_ARGV.codex.slice(1)], timeout_sec: 120 };
        s.goal.context_sources = [{ file: 'notes.md' }, { cmd: ['cat', '.env'], timeout_sec: 10 }];
        s.loop_control.budget = { wall_clock_min: 30, tokens: 100_000 };
      },
    });
    writeFileSync(join(loop.dir, '.env'), `API_TOKEN=${SECRET}\n`);
    const home = join(loop.dir, '.home');
    mkdirSync(home);
    const env = { ...claudeMockEnv(mock, home), ...codexMockEnv(mock, home) };
    const { code, err } = await runLoopIn(loop, { env });
    const state = loop.state();
    expect(code, err).toBe(0);
    expect(state.status).toBe('passed');
    expect(state.failure).toBeUndefined();
    // plan verdict revise, plan verdict pass, delivery verdict pass: codex was the judge three times.
    expect(mock.requestsFor('responses')).toHaveLength(3);
    expect(mock.requestsFor('anthropic').length).toBeGreaterThanOrEqual(3);
    // The judge saw the goal and the definition of done, which Looper's judge never gets.
    expect(mock.requestsFor('responses')[0]!.lastUserText).toContain('Write a haiku about loops.');
    expect(mock.requestsFor('responses')[0]!.lastUserText).toContain('Three lines that mention a gate.');
    expect(state.usage.calls).toBe(6);
    expect(state.usage.calls_without_usage).toBe(0);
    expect(state.usage.input_tokens).toBeGreaterThan(0);
    expect(state.usage.reasoning_tokens).toBeGreaterThanOrEqual(3 * 4);
    expect(state.usage.usd).toBeGreaterThan(0);
    expect(mock.receivedText()).not.toContain(SECRET);
    expect(state.warnings.join('\n')).toContain('context command output (cat .env)');
  }, 300_000);
});
