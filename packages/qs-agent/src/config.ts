// A model agent's configuration, checked without the SDKs or a sandbox: qs-agent at start-up, and `qs run`
// before it starts any stage (so a missing key makes no sandbox anywhere).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '@quickloop/cli-kit';
import { parsePriceBook, type PriceBook } from '@quickloop/models/core';
import { resolveVendor, VENDORS, type Resolved } from './agents/credentials.js';

/** The text of a --prices file, or a one-line usage error naming it. */
export function readPricesFile(file: string, cwd: string): { text: string; file: string } {
  try {
    return { text: readFileSync(resolve(cwd, file), 'utf8'), file };
  } catch (error) {
    throw new UsageError(`--prices ${file}: cannot read it: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

export const isModelAgent = (name: string): boolean => Object.hasOwn(VENDORS, name);

/** Resolves --agent NAME's key, endpoint and model and parses --prices; throws the usage error a bad one gets. */
export function checkModelConfig(name: string, flags: { model?: string; baseUrl?: string; prices?: string }, env: Record<string, string | undefined>, cwd: string): { resolved: Resolved; prices?: PriceBook } {
  const resolved = resolveVendor(name, flags, env);
  if (flags.prices === undefined) return { resolved };
  const { text, file } = readPricesFile(flags.prices, cwd);
  return { resolved, prices: parsePriceBook(text, file) };
}
