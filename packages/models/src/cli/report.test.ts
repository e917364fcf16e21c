// Exit-code numbering and the usage names used on the wire.
import { describe, expect, it } from 'vitest';
import { conventionalExitCode, usageTokens } from './report.js';

describe('conventionalExitCode', () => {
  it('numbers timeouts, signals and normal exits as Looper does', () => {
    expect(conventionalExitCode({ exitCode: null, signal: 'SIGTERM', timedOut: true })).toBe(124);
    expect(conventionalExitCode({ exitCode: 127, signal: null, timedOut: false })).toBe(127);
    expect(conventionalExitCode({ exitCode: null, signal: 'SIGKILL', timedOut: false })).toBe(137);
    expect(conventionalExitCode({ exitCode: 3, signal: null, timedOut: false })).toBe(3);
  });
});

describe('usageTokens', () => {
  it('renames the counters for event payloads', () => {
    expect(usageTokens({ input: 1, cache_read: 2, cache_write: 3, output: 4, reasoning: 5 })).toEqual({ input_tokens: 1, cache_read_tokens: 2, cache_write_tokens: 3, output_tokens: 4, reasoning_tokens: 5 });
  });
});
