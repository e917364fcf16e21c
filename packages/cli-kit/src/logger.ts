// stderr logging for people: colour only on a TTY, never with NO_COLOR, levels from --quiet/--verbose.
import { Chalk, type ChalkInstance } from 'chalk';
import type { Writable } from 'node:stream';
import { terminalSafe, terminalSafeStyled } from './safe-text.js';

export type LogLevel = 'quiet' | 'normal' | 'verbose';

/** --quiet and --verbose as a level. */
export function logLevel(opts: { quiet: boolean; verbose: boolean }): LogLevel {
  if (opts.verbose) return 'verbose';
  return opts.quiet ? 'quiet' : 'normal';
}

export interface Logger {
  readonly level: LogLevel;
  readonly color: ChalkInstance;
  /** A normal line: hidden by --quiet. */
  info(line: string): void;
  /** A warning: hidden by --quiet. */
  warn(line: string): void;
  /** An error: always shown. */
  error(line: string): void;
  /** Detail shown only with --verbose. */
  verbose(line: string): void;
}

export interface LoggerOptions {
  stream: Writable & { isTTY?: boolean };
  env?: Record<string, string | undefined>;
  level?: LogLevel;
  /** Force colour on or off; by default it follows the TTY and NO_COLOR/FORCE_COLOR. */
  colour?: boolean;
}

export function wantsColour(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): boolean {
  // https://no-color.org: any non-empty NO_COLOR disables colour.
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

export function createLogger(options: LoggerOptions): Logger {
  const env = options.env ?? {};
  const level = options.level ?? 'normal';
  const colour = options.colour ?? wantsColour(options.stream, env);
  const color = new Chalk({ level: colour ? 1 : 0 });
  // Every line passes a last check, for sandbox text a caller forgot to make safe: without colour
  // no escape is legitimate at all, with it only chalk's SGR is.
  const safe = (text: string): string => (colour ? terminalSafeStyled(text) : terminalSafe(text, 'block'));
  const write = (line: string): void => {
    // stderr is for people; a closed stderr must never crash the stage.
    try {
      const text = safe(line);
      options.stream.write(text.endsWith('\n') ? text : `${text}\n`);
    } catch {
      /* ignore */
    }
  };
  return {
    level,
    color,
    info: (line) => {
      if (level !== 'quiet') write(line);
    },
    warn: (line) => {
      if (level !== 'quiet') write(line);
    },
    error: (line) => write(line),
    verbose: (line) => {
      if (level === 'verbose') write(color.dim(line));
    },
  };
}
