// Numeric flags of `loop run` and `loop gate`: an integer at or above a floor, or a usage error (exit 2).
import { UsageError } from '@quickloop/cli-kit/errors';

/** `--retries x` must not quietly become 0 (or NaN): the user typed something else. */
export function intFlag(value: unknown, name: string, min: number, command: string): number {
  const n = Number(value);
  if (typeof value === 'boolean' || !Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min} (see loop ${command} --help)`);
  return n;
}
