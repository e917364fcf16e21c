// How a CLI result is reported on the wire and in state files: Looper's exit numbering, the events' token names.
import { exitCodeOf } from '@quickloop/cli-kit/process-group';
import type { Usage } from '../types.js';
import type { CliResult } from './invoke.js';

/**
 * The exit code as Looper's runner records it: 124 for a timeout and 127 for a missing program (as
 * `timeout(1)` and shells do), 128 + n for a kill by signal n, else the CLI's own.
 */
export function conventionalExitCode(result: Pick<CliResult, 'exitCode' | 'signal' | 'timedOut'>): number {
  if (result.timedOut) return 124;
  if (result.exitCode !== null) return result.exitCode;
  return exitCodeOf(null, result.signal, 128);
}

/** The five counters under the names the event payloads use (`model.result`, `loop.*` usage). */
export function usageTokens(usage: Usage): { input_tokens: number; cache_read_tokens: number; cache_write_tokens: number; output_tokens: number; reasoning_tokens: number } {
  return {
    input_tokens: usage.input,
    cache_read_tokens: usage.cache_read,
    cache_write_tokens: usage.cache_write,
    output_tokens: usage.output,
    reasoning_tokens: usage.reasoning,
  };
}
