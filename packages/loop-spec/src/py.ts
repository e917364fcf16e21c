// Python value semantics the compiler must reproduce byte for byte: floats, dates, repr/str, truthiness.
//
// Looper is Python: `5.0` stays `5.0` in its JSON, `True == 1`, f-strings print `None`, `!r` quotes
// with '…'. JavaScript loses the int/float distinction, so YAML floats are boxed as PyFloat while a
// spec is compiled, and unboxed only when handing the resolved object to callers.

/** A YAML float (`5.0`, `.inf`): printed the way Python's repr prints it. */
export class PyFloat {
  constructor(readonly value: number) {}
}

/**
 * An int past 2**53, which a JS number would round (Python's ints are exact): its digits are kept
 * for printing, and `value` (rounded) serves comparisons. A PyFloat only so that every check for
 * "a number" still sees one.
 */
export class PyBigInt extends PyFloat {
  constructor(readonly digits: string) {
    super(Number(digits));
  }
}

/** An int: a plain number while it is exact, else a PyBigInt. */
export function pyInt(value: bigint): number | PyBigInt {
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : new PyBigInt(value.toString());
}

/** A YAML date or timestamp: `iso` is Python's isoformat(), `text` is str(). */
export class PyDate {
  constructor(
    readonly iso: string,
    readonly text: string,
  ) {}
}

/**
 * A dict read from JSON with its keys in their order: a JS object lists integer-like keys first,
 * where Python's dict (and so json.dumps without sort_keys) keeps the order they came in.
 */
export class PyMap extends Map<string, PyValue> {}

export type PyValue = null | boolean | number | string | PyFloat | PyDate | PyMap | PyValue[] | PyDict;
export interface PyDict {
  [key: string]: PyValue;
}

export function isDict(value: unknown): value is PyDict {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof PyFloat) && !(value instanceof PyDate) && !(value instanceof Map);
}

/** A fresh dict that a key like `__proto__` cannot corrupt. */
export function newDict(): PyDict {
  return Object.create(null) as PyDict;
}

export function has(dict: PyDict, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(dict, key);
}

/** `dict.get(key)`: undefined stands for "absent", null for YAML null. */
export function get(dict: PyDict, key: string): PyValue | undefined {
  return has(dict, key) ? dict[key] : undefined;
}

/** `dict.setdefault(key, value)`. */
export function setDefault(dict: PyDict, key: string, value: PyValue): PyValue {
  if (!has(dict, key)) dict[key] = value;
  return dict[key] as PyValue;
}

/** Python's isinstance(value, int): bools are ints too. */
export function isInt(value: unknown): value is number | boolean | PyBigInt {
  return typeof value === 'boolean' || (typeof value === 'number' && Number.isInteger(value)) || value instanceof PyBigInt;
}

/** The numeric value of an int, bool or float, for comparisons. */
export function num(value: number | boolean | PyFloat): number {
  if (value instanceof PyFloat) return value.value;
  return typeof value === 'boolean' ? Number(value) : value;
}

// str.isspace(): unlike String.prototype.trim(), the information separators \x1c-\x1f and NEL are
// blank and a BOM is not.
const PY_SPACE = '[\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const PY_STRIP = new RegExp(`^${PY_SPACE}+|${PY_SPACE}+$`, 'g');

/** Python's `s.strip()`. */
export function pyStrip(s: string): string {
  return s.replace(PY_STRIP, '');
}

const PY_RSTRIP = new RegExp(`${PY_SPACE}+$`);

/** Python's `s.rstrip()`. */
export function pyRstrip(s: string): string {
  return s.replace(PY_RSTRIP, '');
}

/** Python's `\\s` in a str pattern (Unicode whitespace, as str.isspace() has it), for a RegExp's source. */
export const PY_SPACE_CLASS = PY_SPACE;

/** Python's truthiness, as used by `x or []`. */
export function truthy(value: PyValue | undefined): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (value === 0 || value === '') return false;
  if (value instanceof PyFloat) return value.value !== 0;
  if (value instanceof PyDate) return true;
  if (Array.isArray(value)) return value.length > 0;
  if (value instanceof PyMap) return value.size > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** Python `==` between a scalar spec value and an int literal (True == 1, 1.0 == 1). */
export function equalsInt(value: PyValue | undefined, n: number): boolean {
  if (typeof value === 'boolean' || typeof value === 'number') return Number(value) === n;
  return value instanceof PyFloat && value.value === n;
}

/** Python float repr: shortest round-trip digits, exponent outside [1e-4, 1e16), always a `.0`. */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, expText] = Math.abs(x).toExponential().split('e') as [string, string];
  const exp = Number(expText);
  const digits = mantissa.replace('.', '');
  const sign = x < 0 ? '-' : '';
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
    const frac = digits.slice(exp + 1);
    return `${sign}${intPart}.${frac || '0'}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

/** Python repr() of a str: single quotes unless the text has ' and no ". */
export function strRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

/** Python repr(). */
export function pyRepr(value: PyValue | undefined): string {
  if (typeof value === 'string') return strRepr(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (isDict(value)) return `{${Object.keys(value).map((k) => `${strRepr(k)}: ${pyRepr(value[k])}`).join(', ')}}`;
  if (value instanceof PyMap) return `{${[...value].map(([k, v]) => `${strRepr(k)}: ${pyRepr(v)}`).join(', ')}}`;
  if (value instanceof PyDate) return `datetime.date(${value.iso})`;
  return pyStr(value);
}

/** Python str(), i.e. what an f-string prints. */
export function pyStr(value: PyValue | undefined): string {
  if (value === undefined || value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return value;
  if (value instanceof PyBigInt) return value.digits;
  if (value instanceof PyFloat) return floatRepr(value.value);
  if (value instanceof PyDate) return value.text;
  return pyRepr(value);
}

/** Python's sorted() order on str: by code point, not by UTF-16 unit. */
/** Python's `for x in value`: a string yields its characters and a dict its keys (Looper iterates unchecked fields). */
export function pyIter(value: PyValue | undefined): PyValue[] {
  if (typeof value === 'string') return [...value];
  if (isDict(value)) return Object.keys(value);
  return Array.isArray(value) ? value : [];
}

export function compareCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0) as number;
    const cy = y.value.codePointAt(0) as number;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

/** Turns the compile-time model into plain JSON values: floats unboxed, dates as isoformat(). */
export function toPlain(value: PyValue): unknown {
  if (value instanceof PyFloat) return value.value;
  if (value instanceof PyDate) return value.iso;
  if (Array.isArray(value)) return value.map(toPlain);
  if (value instanceof PyMap) {
    const out: Record<string, unknown> = {};
    for (const [key, v] of value) Object.defineProperty(out, key, { value: toPlain(v), enumerable: true, writable: true, configurable: true });
    return out;
  }
  if (isDict(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      Object.defineProperty(out, key, { value: toPlain(value[key] as PyValue), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}
