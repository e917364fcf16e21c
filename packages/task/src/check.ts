// Compiles a success block into the check script: the helper prelude, then serve, wait_http, expect_output and the script, in that order.
import { fileURLToPath } from 'node:url';
import { PRELUDE } from './prelude.generated.js';
import { list, type RawSuccess } from './raw.js';

/** The prelude's source; prelude.generated.ts embeds it so a bundled binary carries it (`pnpm schemas`). */
export const PRELUDE_PATH = fileURLToPath(new URL('../prelude.sh', import.meta.url));

/** The bash helpers every check starts with (qs_fail, qs_serve, qs_wait_http, qs_expect_output, QS_PORT). */
export function checkPrelude(): string {
  return PRELUDE;
}

/** Single-quotes a value for bash: nothing inside is expanded. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n += 1) {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(text: string): number {
  let c = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** First port QS_PORT is probed from: stable per task name, spread over 21000–40999. */
export function portBase(name: string): number {
  return 21000 + (crc32(name) % 20000);
}

/**
 * The compiled success block. `serve` runs under `bash -c` so compound commands work and
 * `$QS_PORT` expands there; every other value is single-quoted. No `set -e` is added: the author's
 * script keeps its own error handling, and the helpers fail through qs_fail.
 */
export function compileSuccess(success: RawSuccess, fileText?: string): string {
  const lines: string[] = [];
  if (success.serve !== undefined) lines.push(`qs_serve bash -c ${shellQuote(success.serve.trim())}`);
  const w = success.wait_http;
  if (w) {
    const args = [shellQuote((w.url ?? w.path ?? '').trim())];
    if (w.status !== undefined) args.push('--status', shellQuote(String(w.status)));
    if (w.timeout !== undefined) args.push('--timeout', shellQuote(String(w.timeout)));
    for (const c of list(w.contains)) args.push('--contains', shellQuote(c));
    for (const m of list(w.matches)) args.push('--matches', shellQuote(m));
    for (const [k, v] of Object.entries(w.json ?? {})) args.push('--json', shellQuote(`${k}=${v === null ? 'null' : String(v)}`));
    lines.push(`qs_wait_http ${args.join(' ')}`);
  }
  const e = success.expect_output;
  if (e) {
    const args: string[] = [];
    for (const c of list(e.contains)) args.push('--contains', shellQuote(c));
    for (const m of list(e.matches)) args.push('--matches', shellQuote(m));
    lines.push(`qs_expect_output ${args.join(' ')}`);
  }
  const script = success.script ?? fileText;
  if (script !== undefined) lines.push(script.replace(/\n+$/, ''));
  return `${lines.join('\n')}\n`;
}

/** The whole check: the port base, the prelude, then the compiled block. */
export function checkScript(name: string, body: string): string {
  return `QS_PORT_BASE=${portBase(name)}\n${checkPrelude()}\n${body}`;
}
