// loop-run with testkit's fake `claude -p` host and `codex exec --json` judge: real argv, real JSON output modes.
import { readFileSync } from 'node:fs';
import { createFakeCliHome } from '@quickloop/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { makeLoop, runLoopIn, type Loop } from './helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const verdict = (v: 'pass' | 'revise', issue?: string) => `\`\`\`json\n${JSON.stringify({ verdict: v, blocking_issues: issue ? [issue] : [], confidence: 0.9, notes: '' })}\n\`\`\``;

describe('loop-run with CLI-shaped fakes', () => {
  it('accounts tokens and cost from claude and codex JSON output, and retries a 429 from codex', async () => {
    const home = createFakeCliHome({
      host: [
        { reply: '# Plan\n\n1. Write.', usage: { input: 120, output: 30, cacheRead: 10 }, costUsd: 0.002 },
        { reply: 'a haiku about the gate\nround and round\npass', usage: { input: 200, output: 40 }, costUsd: 0.003 },
      ],
      judge: [{ apiError: { status: 429 } }, { reply: verdict('pass'), usage: { input: 50, output: 10, reasoning: 5 } }],
    });
    cleanups.push(home.cleanup);
    const loop: Loop = makeLoop({
      tweak: (s) => {
        s.host = { cli: 'claude', invoke: [home.persona('host', 'claude'), '-p', '--output-format', 'json', '--no-session-persistence'], timeout_sec: 60 };
        s.council[0].invoke = [home.persona('judge', 'codex'), 'exec', '--skip-git-repo-check', '--ephemeral', '--json', '-'];
        s.council[0].cli = 'codex';
        s.loop_control.budget = { wall_clock_min: 30, tokens: 100_000, usd: 1 };
      },
    });
    cleanups.push(loop.cleanup);
    const { code, events } = await runLoopIn(loop, { env: home.env });
    expect(code).toBe(0);
    const state = loop.state();
    expect(state.status).toBe('passed');
    expect(state.failure).toBeUndefined();
    expect(state.usage.calls_without_usage).toBe(0);
    expect(state.usage.usd).toBeGreaterThanOrEqual(0.005);
    expect(state.usage.output_tokens).toBeGreaterThanOrEqual(70 + 2 * 10);
    // codex --json reports tokens but no price: the USD cap is advisory for the judge, the token cap is not.
    expect(state.warnings.filter((w: string) => w.includes('advisory'))).toEqual(['budget.usd is advisory for judge-1: its CLI reports no cost']);
    // The 429 was retried inside the call; the first judge verdict still counted once.
    expect(events.filter((e) => e.type === 'model.result' && e.member === 'judge-1').map((e) => e.attempts)).toEqual([2, 1]);
    expect(readFileSync(loop.ws('delivery-1.md'), 'utf8')).toContain('a haiku about the gate');
    const calls = home.calls();
    expect(calls.filter((c) => c.persona === 'judge')).toHaveLength(3);
    expect(calls.every((c) => c.cwd === loop.dir || c.cwd.endsWith(loop.dir.split('/').pop()!))).toBe(true);
  });
});
