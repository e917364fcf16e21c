// What a CLI agent takes from the host: the program on PATH (and its interpreter) and the vendor's key and base URL.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '@quickloop/cli-kit';
import type { Vendor } from './forwarder.js';

function onPath(name: string, path: string): string | undefined {
  for (const dir of path.split(':')) {
    if (!dir.startsWith('/')) continue;
    const file = join(dir, name);
    try {
      if (statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The program on PATH and, for a script, the interpreter its `#!` line names (`env node` looked up on PATH too). */
export function findProgram(name: string, path: string): { path: string; interpreter?: string } | undefined {
  const file = onPath(name, path);
  if (!file) return undefined;
  let first = '';
  try {
    first = readFileSync(file, { encoding: 'latin1', flag: 'r' }).slice(0, 256).split('\n')[0] ?? '';
  } catch {
    return { path: file };
  }
  if (!first.startsWith('#!')) return { path: file };
  const words = first.slice(2).trim().split(/\s+/);
  const viaEnv = words[0]?.endsWith('/env') ? words.slice(1).find((w) => !w.startsWith('-')) : undefined;
  const interpreter = viaEnv !== undefined ? onPath(viaEnv, path) : words[0];
  return interpreter ? { path: file, interpreter } : { path: file };
}

const KEYS: Record<Vendor, string[]> = { anthropic: ['QS_ANTHROPIC_API_KEY', 'ANTHROPIC_API_KEY'], openai: ['QS_OPENAI_API_KEY', 'OPENAI_API_KEY'] };
const BASES: Record<Vendor, { variable: string; fallback: string }> = {
  anthropic: { variable: 'ANTHROPIC_BASE_URL', fallback: 'https://api.anthropic.com' },
  openai: { variable: 'OPENAI_BASE_URL', fallback: 'https://api.openai.com/v1' },
};

/** The key (ours first, then the vendor's own variable) and the base URL; a usage error names what is missing. */
export function vendorCredentials(vendor: Vendor, env: Record<string, string | undefined>): { key: string; baseUrl: string } {
  const name = KEYS[vendor].find((k) => (env[k] ?? '').trim() !== '');
  if (name === undefined) throw new UsageError(`no API key: set ${KEYS[vendor].join(' or ')}`);
  const key = (env[name] as string).trim();
  // A key is sent as one header value: a line break in it would let it add headers of its own.
  if (/[\r\n\0]/.test(key)) throw new UsageError(`${name} holds a line break or NUL`);
  const { variable, fallback } = BASES[vendor];
  const raw = (env[variable] ?? '').trim() || fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${variable} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${variable} must be an http or https URL`);
  if (url.username || url.password) throw new UsageError(`${variable} must not carry credentials; set the key in ${KEYS[vendor][0]}`);
  return { key, baseUrl: raw };
}
