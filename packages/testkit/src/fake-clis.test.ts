// The fake CLIs, spawned for real: argv and stdin handling, output modes, scripts per persona, the call log.
import { execFileSync, spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeCliHome, fakeCliPath, type FakeCliHome } from './index.js';

let home: FakeCliHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

const run = (file: string, args: string[], input: string, env: Record<string, string> = {}) =>
  spawnSync(file, args, { input, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } });

describe('fake claude', () => {
  it('answers --output-format json like claude -p, with scripted usage and cost', () => {
    home = createFakeCliHome([{ reply: 'first', usage: { input: 3, cacheRead: 40, cacheWrite: 5, output: 9 }, costUsd: 0.25 }, { reply: 'again {n}' }]);
    const a = run(fakeCliPath('claude'), ['-p', '--output-format', 'json'], 'the prompt', home.env);
    expect(a.status).toBe(0);
    const json = JSON.parse(a.stdout);
    expect(json).toMatchObject({ type: 'result', is_error: false, result: 'first', total_cost_usd: 0.25, usage: { input_tokens: 3, cache_read_input_tokens: 40, cache_creation_input_tokens: 5, output_tokens: 9 } });
    const b = run(fakeCliPath('claude'), ['-p'], 'second prompt', home.env);
    expect(b.stdout).toBe('again 2\n');
    // The last step repeats once the script is used up.
    expect(run(fakeCliPath('claude'), ['-p'], 'p3', home.env).stdout).toBe('again 3\n');
    const calls = home.calls();
    expect(calls.map((c) => [c.persona, c.index, c.prompt])).toEqual([
      ['claude', 0, 'the prompt'],
      ['claude', 1, 'second prompt'],
      ['claude', 2, 'p3'],
    ]);
    expect(calls[0]!.argv).toEqual(['-p', '--output-format', 'json']);
  });

  it('fails like the real CLI on API errors, refusals and unknown flags', () => {
    home = createFakeCliHome([{ apiError: { status: 529 } }, { refusal: 'nope' }]);
    const err = run(fakeCliPath('claude'), ['-p', '--output-format', 'json'], 'x', home.env);
    expect(err.status).toBe(1);
    expect(JSON.parse(err.stdout)).toMatchObject({ is_error: true, api_error_status: 529, terminal_reason: 'api_error' });
    const refusal = run(fakeCliPath('claude'), ['-p', '--output-format', 'json'], 'x', home.env);
    expect(JSON.parse(refusal.stdout)).toMatchObject({ is_error: true, stop_reason: 'refusal' });
    const bad = run(fakeCliPath('claude'), ['-p', '--no-such-flag'], 'x', home.env);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("unknown option '--no-such-flag'");
  });

  it('gives each persona its own script', () => {
    home = createFakeCliHome({ host: [{ reply: 'a plan' }], judge: [{ reply: '```json\n{"verdict":"pass"}\n```' }] });
    const host = home.persona('host', 'claude');
    const judge = home.persona('judge', 'claude');
    expect(execFileSync(judge, ['-p'], { input: 'judge this', env: { ...home.env, PATH: process.env.PATH ?? '' }, encoding: 'utf8' })).toContain('"verdict":"pass"');
    expect(execFileSync(host, ['-p'], { input: 'plan it', env: { ...home.env, PATH: process.env.PATH ?? '' }, encoding: 'utf8' })).toBe('a plan\n');
    expect(home.calls().map((c) => c.persona)).toEqual(['judge', 'host']);
  });

  it('finds the fakes by name through binDir on PATH, and records only env names', () => {
    home = createFakeCliHome([{ echo: true }]);
    const r = spawnSync('claude', ['-p'], { input: 'echo me', encoding: 'utf8', env: { ...home.env, PATH: `${home.binDir}:${process.env.PATH}`, SOME_VAR: 'v' } });
    expect(r.stdout).toBe('echo me\n');
    expect(home.calls()[0]!.envKeys).toContain('SOME_VAR');
    expect(JSON.stringify(home.calls())).not.toContain('"v"');
  });
});

describe('fake codex and gemini', () => {
  it('codex exec --json prints JSONL with turn.completed usage; turn.failed on errors', () => {
    home = createFakeCliHome({ codex: [{ reply: 'patch ready', usage: { input: 10, cacheRead: 6, output: 5, reasoning: 2 } }, { apiError: { status: 429 } }] });
    const ok = run(fakeCliPath('codex'), ['exec', '--skip-git-repo-check', '--json', '-'], 'task', home.env);
    const events = ok.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(events.at(-2)).toEqual({ type: 'item.completed', item: { id: 'item_1', type: 'agent_message', text: 'patch ready' } });
    expect(events.at(-1)).toEqual({ type: 'turn.completed', usage: { input_tokens: 16, cached_input_tokens: 6, cache_write_input_tokens: 0, output_tokens: 5, reasoning_output_tokens: 2 } });
    const failed = run(fakeCliPath('codex'), ['exec', '--json'], 'task', home.env);
    expect(failed.status).toBe(1);
    expect(failed.stdout).toContain('"type":"turn.failed"');
    expect(run(fakeCliPath('codex'), ['review'], 'x').status).toBe(2);
  });

  it('gemini -o json reports stats per model; API errors go to stderr as JSON', () => {
    home = createFakeCliHome({ gemini: [{ reply: 'g', usage: { input: 4, cacheRead: 2, output: 6, reasoning: 1 } }, { apiError: { status: 400 } }] });
    const ok = run(fakeCliPath('gemini'), ['-m', 'gem', '-o', 'json'], 'hello', home.env);
    expect(JSON.parse(ok.stdout)).toMatchObject({ response: 'g', stats: { models: { gem: { tokens: { prompt: 6, cached: 2, candidates: 5, thoughts: 1 } } } } });
    const bad = run(fakeCliPath('gemini'), ['-o', 'json'], 'hello', home.env);
    expect(bad.status).toBe(144);
    expect(bad.stdout).toBe('');
    expect(JSON.parse(bad.stderr)).toMatchObject({ error: { code: 400 } });
  });
});
