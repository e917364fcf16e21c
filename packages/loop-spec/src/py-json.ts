// Python's json.dumps, byte for byte: ensure_ascii escapes, float repr, sort_keys by code point.
import { PyDate, PyFloat, compareCodePoints, floatRepr, isDict, type PyValue } from './py.js';

export interface DumpOptions {
  /** `indent=2` style pretty printing; without it the separators are `, ` and `: ` on one line. */
  indent?: number;
  sortKeys?: boolean;
}

/** A JSON string literal with every non-printable-ASCII character escaped as json.dumps does. */
export function jsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i += 1) {
    const c = s.charCodeAt(i);
    const ch = s[i] as string;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    // UTF-16 units are exactly what Python writes for astral characters (a surrogate pair).
    else if (c < 0x20 || c > 0x7e) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function scalar(value: PyValue | undefined): string {
  if (value === null || value === undefined) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'number') {
    // Plain JS numbers reaching here were parsed from JSON or YAML ints; a non-integer came from JSON.
    return Number.isInteger(value) ? value.toFixed(0) : jsonFloat(value);
  }
  if (typeof value === 'string') return jsonString(value);
  if (value instanceof PyFloat) return jsonFloat(value.value);
  if (value instanceof PyDate) return jsonString(value.iso);
  throw new TypeError('not a scalar');
}

function jsonFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  return floatRepr(x);
}

/** json.dumps(value, indent=…, sort_keys=…) for the values a loop spec can hold. */
export function pyJsonDumps(value: PyValue | undefined, options: DumpOptions = {}): string {
  const { indent, sortKeys = false } = options;
  const walk = (v: PyValue | undefined, depth: number): string => {
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]';
      const items = v.map((item) => walk(item, depth + 1));
      return wrap('[', ']', items, depth);
    }
    if (isDict(v)) {
      const keys = Object.keys(v);
      if (keys.length === 0) return '{}';
      if (sortKeys) keys.sort(compareCodePoints);
      const items = keys.map((k) => `${jsonString(k)}: ${walk(v[k], depth + 1)}`);
      return wrap('{', '}', items, depth);
    }
    return scalar(v);
  };
  const wrap = (open: string, close: string, items: string[], depth: number): string => {
    if (indent === undefined) return `${open}${items.join(', ')}${close}`;
    const pad = ' '.repeat(indent * (depth + 1));
    const end = ' '.repeat(indent * depth);
    return `${open}\n${pad}${items.join(`,\n${pad}`)}\n${end}${close}`;
  };
  return walk(value, 0);
}
