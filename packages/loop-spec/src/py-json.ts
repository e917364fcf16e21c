// Python's json.dumps, byte for byte: ensure_ascii escapes, float repr, sort_keys by code point.
import { PyBigInt, PyDate, PyFloat, PyMap, compareCodePoints, pyInt, floatRepr, isDict, newDict, type PyValue } from './py.js';

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
  if (value instanceof PyBigInt) return value.digits;
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
    if (v instanceof PyMap) {
      const entries = [...v];
      if (entries.length === 0) return '{}';
      if (sortKeys) entries.sort((a, b) => compareCodePoints(a[0], b[0]));
      return wrap('{', '}', entries.map(([k, x]) => `${jsonString(k)}: ${walk(x, depth + 1)}`), depth);
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

export interface LoadOptions {
  /** Objects become PyMaps, their keys in the order they came (as a Python dict keeps them). */
  ordered?: boolean;
}

/**
 * json.loads: like JSON.parse, but a number written with a fraction or an exponent stays a float
 * (`5.0` prints as `5.0` again), and NaN/Infinity are read as Python reads them.
 * Throws SyntaxError naming the line and column.
 */
export function pyJsonLoads(text: string, options: LoadOptions = {}): PyValue {
  return decode(text, options, true).value;
}

/** JSONDecoder().raw_decode: the value that starts `text` (no leading blanks) and where it ends. */
export function pyJsonDecodePrefix(text: string, options: LoadOptions = {}): { value: PyValue; end: number } {
  return decode(text, options, false);
}

function decode(text: string, options: LoadOptions, whole: boolean): { value: PyValue; end: number } {
  let i = 0;
  const fail = (what: string): never => {
    const before = text.slice(0, i);
    const line = before.split('\n').length;
    const column = i - before.lastIndexOf('\n');
    throw new SyntaxError(`${what}: line ${line} column ${column} (char ${i})`);
  };
  const space = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i += 1;
  };
  const literal = (word: string, value: PyValue): PyValue => {
    if (!text.startsWith(word, i)) fail('Expecting value');
    i += word.length;
    return value;
  };
  const value = (depth: number): PyValue => {
    if (depth > 1000) fail('Nested too deeply');
    space();
    const ch = text[i];
    if (ch === '{') {
      i += 1;
      const map = options.ordered ? new PyMap() : null;
      const dict = newDict();
      space();
      if (text[i] === '}') {
        i += 1;
        return map ?? dict;
      }
      for (;;) {
        space();
        if (text[i] !== '"') fail('Expecting property name enclosed in double quotes');
        const key = string();
        space();
        if (text[i] !== ':') fail("Expecting ':' delimiter");
        i += 1;
        if (map) map.set(key, value(depth + 1));
        else dict[key] = value(depth + 1);
        space();
        if (text[i] === ',') {
          i += 1;
          continue;
        }
        if (text[i] === '}') {
          i += 1;
          return map ?? dict;
        }
        fail("Expecting ',' delimiter");
      }
    }
    if (ch === '[') {
      i += 1;
      const items: PyValue[] = [];
      space();
      if (text[i] === ']') {
        i += 1;
        return items;
      }
      for (;;) {
        items.push(value(depth + 1));
        space();
        if (text[i] === ',') {
          i += 1;
          continue;
        }
        if (text[i] === ']') {
          i += 1;
          return items;
        }
        fail("Expecting ',' delimiter");
      }
    }
    if (ch === '"') return string();
    if (ch === 't') return literal('true', true);
    if (ch === 'f') return literal('false', false);
    if (ch === 'n') return literal('null', null);
    if (ch === 'N') return literal('NaN', new PyFloat(Number.NaN));
    if (ch === 'I') return literal('Infinity', new PyFloat(Number.POSITIVE_INFINITY));
    if (text.startsWith('-Infinity', i)) return literal('-Infinity', new PyFloat(Number.NEGATIVE_INFINITY));
    const match = /^-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/.exec(text.slice(i, i + 400));
    if (!match) return fail('Expecting value');
    i += match[0].length;
    const n = Number(match[0]);
    return match[1] !== undefined || match[2] !== undefined ? new PyFloat(n) : pyInt(BigInt(match[0]));
  };
  const string = (): string => {
    const start = i;
    i += 1;
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) fail('Invalid control character at');
      i += text[i] === '\\' ? 2 : 1;
    }
    if (i >= text.length) fail('Unterminated string starting at');
    i += 1;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      i = start;
      return fail('Invalid \\escape');
    }
  };
  if (!whole && ' \t\n\r'.includes(text[0] ?? 'x')) fail('Expecting value');
  const result = value(0);
  const end = i;
  if (whole) {
    space();
    if (i < text.length) fail('Extra data');
  }
  return { value: result, end };
}
