// Golden tests of the output parsers: every fixtures/cli-output/<name>.stdout (real-shaped CLI output) has an .expected.json.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseCliOutput, type OutputMode } from './parse.js';

const dir = fileURLToPath(new URL('../../fixtures/cli-output/', import.meta.url));
const cases = readdirSync(dir)
  .filter((f) => f.endsWith('.stdout'))
  .map((f) => f.slice(0, -'.stdout'.length));

function modeOf(name: string): OutputMode {
  if (name.startsWith('claude-')) return 'claude-json';
  if (name.startsWith('codex-')) return 'codex-json';
  if (name.startsWith('gemini-')) return 'gemini-json';
  return 'text';
}

describe('parseCliOutput on recorded-shape outputs', () => {
  it('has fixtures for every mode', () => {
    expect(new Set(cases.map(modeOf))).toEqual(new Set(['claude-json', 'codex-json', 'gemini-json', 'text']));
  });

  for (const name of cases) {
    it(name, () => {
      const expected = JSON.parse(readFileSync(join(dir, `${name}.expected.json`), 'utf8'));
      const stdout = readFileSync(join(dir, `${name}.stdout`), 'utf8');
      const stderrFile = join(dir, `${name}.stderr`);
      const stderr = existsSync(stderrFile) ? readFileSync(stderrFile, 'utf8') : '';
      const parsed = parseCliOutput(modeOf(name), stdout, stderr, expected.exitCode);
      const { exitCode: _, ...want } = expected;
      expect(parsed).toMatchObject(want);
      if (!('errorKind' in want)) expect(parsed.errorKind).toBeUndefined();
      if (parsed.errorKind) expect(parsed.message).toMatch(/\S/);
    });
  }

  it('never lets a counter go negative when a provider is inconsistent', () => {
    const stdout = '{"type":"turn.completed","usage":{"input_tokens":2,"cached_input_tokens":9,"output_tokens":1}}\n{"type":"item.completed","item":{"type":"agent_message","text":"x"}}\n';
    expect(parseCliOutput('codex-json', stdout, '', 0).usage).toEqual({ input: 0, cache_read: 9, cache_write: 0, output: 1, reasoning: 0 });
  });
});

describe('parseCliOutput in text mode', () => {
  it.each([
    ['a Python crash whose message holds 429', 'Traceback (most recent call last):\n  File "x.py", line 12, in <module>\nValueError: boom at offset 429\n', false],
    ['a Python crash whose message holds a 5xx with a word', "Traceback (most recent call last):\n  File \"x.py\", line 3\nKeyError: 'status 503'\n", false],
    ['a Node crash whose message holds 503', 'TypeError: cannot read 503 of undefined\n    at main (/usr/lib/cli/index.js:512:7)\n', false],
    ['a bare 429 with no HTTP word', 'could not parse 429 items\n', false],
    ['a rate limit said in words', 'Error: 429 Too Many Requests\n', true],
    ['an SDK error raised with a traceback', 'Traceback (most recent call last):\n  File "cli.py", line 9\nanthropic.RateLimitError: Error code: 429\n', true],
    ['a Node SDK error with its stack', 'Error: 503 Service Unavailable\n    at request (/usr/lib/cli/api.js:80:11)\n', true],
    ['a connection reset', 'request failed: ECONNRESET\n', true],
  ])('retries only what says it is transient: %s', (_name, stderr, transient) => {
    expect(parseCliOutput('text', '', stderr, 1)).toMatchObject({ errorKind: 'infra', transient });
  });


  it('says when a failing CLI printed nothing, and quotes its last line otherwise', () => {
    expect(parseCliOutput('text', '', '', 3)).toMatchObject({ errorKind: 'infra', transient: false, message: 'exited 3 with no output' });
    expect(parseCliOutput('text', '', 'warming up\nError: 401 Unauthorized\n', 1)).toMatchObject({ errorKind: 'config', message: 'exited 1: "Error: 401 Unauthorized"' });
    expect(parseCliOutput('text', 'the answer\n', '', 0)).toEqual({ text: 'the answer\n' });
  });
});
