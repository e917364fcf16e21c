// Which JSON output mode an invoke argv asked for, so usage and cost can be read from the CLI's answer.
import type { OutputMode } from '@quickloop/models/cli';
import { cliOutputMode } from '@quickloop/loop-spec';

/** The reading lives in loop-spec, so `loop lint` judges a budget exactly as the runner reads usage. */
export function outputMode(argv: readonly string[]): OutputMode {
  return cliOutputMode(argv);
}
