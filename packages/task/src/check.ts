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

export type JsonScalar = string | number | boolean | null;

// EREs for how a JSON text may write a value. One literal backslash in an ERE is `\\`.
const BS = String.raw`\\`;
const hexEre = (unit: number): string => [...unit.toString(16).padStart(4, '0')].map((d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d)).join('');
const SHORT: Record<string, string> = { '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't' };
const ERE_SPECIAL = /[.[\]()*+?{}|^$]/;

/**
 * One string's characters as a JSON string may hold them: each as itself or escaped (`\"`, `\\`, `\/`,
 * `\n`, `\uXXXX` in either case, a surrogate pair beyond the BMP), as JSON.stringify, Python's
 * json.dumps (ensure_ascii) and other encoders write them.
 */
function jsonStringEre(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    const units = cp > 0xffff ? [0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff)] : [cp];
    const u = units.map((n) => `${BS}u${hexEre(n)}`).join('');
    if (ch === '"') out += `(${BS}"|${u})`;
    else if (ch === '\\') out += `(${BS}${BS}|${u})`;
    else if (ch === '/') out += `(/|${BS}/|${u})`;
    else if (SHORT[ch] !== undefined) out += `(${BS}${SHORT[ch]}|${u})`;
    else if (cp < 0x20) out += u;
    else if (cp >= 0x7f) out += `(${ch}|${u})`;
    else out += ERE_SPECIAL.test(ch) ? `\\${ch}` : ch;
  }
  return out;
}

/** A JSON number equal to `n` as encoders write it: 5 also as 5.0, 9.5 also as 9.50, 1e+21 also as 1E21. */
function jsonNumberEre(n: number): string {
  const [mantissa, exponent] = String(n).split('e') as [string, string | undefined];
  const m = mantissa.includes('.') ? `${mantissa.replace('.', '\\.')}0*` : `${mantissa}(\\.0+)?`;
  if (exponent === undefined) return m;
  return `${m}[eE]${exponent.startsWith('-') ? '-' : '\\+?'}0*${exponent.replace(/^[+-]/, '')}`;
}

/** A string that reads as a JSON number: how a task writes one past 2^53 with every digit kept. */
const NUMERIC = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/**
 * The ERE wait_http.json compiles a pair to: the key as JSON writes it, then the value with its type
 * kept (a number or `true` never matches the string "3" or "true"; a string matches only as a string,
 * or, when it reads as a number, as that number written digit for digit), then the value's end.
 * Matched as text, not parsed: any whitespace around the colon, any escape an encoder may use.
 */
export function jsonPairEre(key: string, value: JsonScalar): string {
  let v: string;
  if (typeof value === 'string') v = NUMERIC.test(value) ? `("${jsonStringEre(value)}"|${value.replace(/[.+]/g, (c) => `\\${c}`)})` : `"${jsonStringEre(value)}"`;
  else if (typeof value === 'number') v = jsonNumberEre(value);
  else v = String(value);
  return `"${jsonStringEre(key)}"[[:space:]]*:[[:space:]]*${v}([[:space:]]*[,}]|[[:space:]]*$)`;
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
    for (const [k, v] of Object.entries(w.json ?? {})) args.push('--json-ere', shellQuote(`${JSON.stringify(k)}: ${JSON.stringify(v)}`), shellQuote(jsonPairEre(k, v as JsonScalar)));
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
