// A model agent's configuration and the docs reader's flags, checked without the SDKs or a sandbox: by
// qs-agent at start-up, and by `qs run` before it starts any stage (so a missing key or a bad --docs-map
// makes no sandbox anywhere, and is said once rather than by every attempt).
import { accessSync, constants, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { makeDirs, UsageError } from '@quickloop/cli-kit';
import { parseDocsMap, type Affordances } from '@quickloop/docs';
import { loadRecording, pickRun } from './agents/recording.js';
import type { DocsSettings } from './toolbelt.js';
import { parsePriceBook, type PriceBook } from '@quickloop/models/core';
import { resolveVendor, VENDORS, type Resolved } from './agents/credentials.js';

/** The text of the file a flag names, or a one-line usage error naming both. */
function readFlagFile(flag: string, file: string, cwd: string): { text: string; file: string } {
  try {
    return { text: readFileSync(resolve(cwd, file), 'utf8'), file };
  } catch (error) {
    throw new UsageError(`${flag} ${file}: cannot read it: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** The text of a --prices file, or a one-line usage error naming it. */
export const readPricesFile = (file: string, cwd: string): { text: string; file: string } => readFlagFile('--prices', file, cwd);

/** --from's text (a saved stream), or a one-line usage error naming it. */
export const readFromFile = (file: string, cwd: string): { text: string; file: string } => readFlagFile('--from', file, cwd);

/** --from and --from-run belong to --agent recorded, which cannot go without --from. */
export function checkRecordedFlags(name: string, from: unknown, fromRun: unknown): void {
  if ((from !== undefined || fromRun !== undefined) && name !== 'recorded') throw new UsageError(`--from and --from-run go with --agent recorded, not --agent ${name}`);
  if (name === 'recorded' && from === undefined) throw new UsageError('--agent recorded needs --from FILE (a saved stream of a model run)');
}

/**
 * A sweep's agent flags, checked as qs-agent checks them and before any stage starts: the --prices
 * file, and for --agent recorded the --from stream. Returns the check of the sweep's tasks against
 * that stream: it must hold one model run of each (or the --from-run one).
 */
export function checkAgentFlags(name: string, flags: { from?: string; fromRun?: string; prices?: string }, cwd: string): (tasks: readonly string[]) => void {
  checkRecordedFlags(name, flags.from, flags.fromRun);
  if (flags.prices !== undefined && !isModelAgent(name)) readPricesFile(flags.prices, cwd);
  if (flags.from === undefined) return () => undefined;
  const recording = loadRecording(readFromFile(flags.from, cwd));
  return (tasks) => {
    for (const task of new Set(tasks)) {
      try {
        pickRun(recording, task, flags.fromRun);
      } catch (error) {
        throw new UsageError(`--from ${(error as Error).message}`);
      }
    }
  };
}

export const isModelAgent = (name: string): boolean => Object.hasOwn(VENDORS, name);

/** Resolves --agent NAME's key, endpoint and model and parses --prices; throws the usage error a bad one gets. */
export function checkModelConfig(name: string, flags: { model?: string; baseUrl?: string; prices?: string }, env: Record<string, string | undefined>, cwd: string): { resolved: Resolved; prices?: PriceBook } {
  const resolved = resolveVendor(name, flags, env);
  if (flags.prices === undefined) return { resolved };
  const { text, file } = readPricesFile(flags.prices, cwd);
  return { resolved, prices: parsePriceBook(text, file) };
}

/** The docs reader's flags, as qs-agent and `qs run` both take them. */
export interface DocsFlags {
  'docs-map': readonly unknown[];
  'cache-dir'?: unknown;
  refresh: boolean;
  offline: boolean;
  'ignore-robots': boolean;
  /** SECONDS, as typed (default 1). */
  'rate-limit'?: unknown;
  affordances: string;
  'probe-affordances': boolean;
}

/** The docs reader's settings from its flags, or the usage error a bad one gets (the --cache-dir folder is made). */
export function docsSettings(flags: DocsFlags, cwd: string): DocsSettings & { rateLimit: number } {
  const maps = flags['docs-map'].map((spec) => parseDocsMap(String(spec), cwd));
  // Read as text: yargs' number type turns `abc` into NaN, and the error would not show what was typed.
  const given = flags['rate-limit'] === undefined ? '1' : String(flags['rate-limit']);
  const rateLimit = /^\s*\d+(?:\.\d+)?\s*$/.test(given) ? Number(given) : NaN;
  if (!Number.isFinite(rateLimit) || rateLimit < 0 || rateLimit > 3600) throw new UsageError(`--rate-limit ${given}: expected SECONDS between 0 and 3600`);
  if (flags.offline && flags['cache-dir'] === undefined && maps.length === 0) throw new UsageError('--offline needs a --cache-dir (or a --docs-map) to read from');
  if (flags.offline && flags.refresh) throw new UsageError('--offline and --refresh contradict each other: --refresh re-fetches over the network');
  const cacheDir = flags['cache-dir'] === undefined ? undefined : resolve(cwd, String(flags['cache-dir']));
  if (cacheDir !== undefined) {
    try {
      makeDirs(cacheDir);
      accessSync(cacheDir, constants.W_OK);
    } catch (error) {
      throw new UsageError(`--cache-dir ${String(flags['cache-dir'])}: not a folder that can be written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
  return {
    maps,
    ...(cacheDir !== undefined ? { cacheDir } : {}),
    refresh: flags.refresh,
    offline: flags.offline,
    ignoreRobots: flags['ignore-robots'],
    rateLimit,
    affordances: flags.affordances as Affordances,
    probeAffordances: flags['probe-affordances'],
  };
}
