// Reads loop.yaml the way PyYAML's safe_load does (YAML 1.1 scalars), remembering each key's line.
//
// The `yaml` package parses; scalars are resolved here with PyYAML's own implicit rules, because the
// resolved JSON must match Looper's: `1e5` is a string there, `yes` is true, `5.0` stays a float.
import { LineCounter, parseDocument, isAlias, isMap, isPair, isScalar, isSeq, visit } from 'yaml';
import type { Document, Node as YamlNode } from 'yaml';
import { PyBigInt, PyDate, PyFloat, newDict, pyInt, pyStr, type PyDict, type PyValue } from './py.js';

/** Where each key of each parsed mapping (and each item of each sequence) sits in the file. */
export type LineIndex = WeakMap<object, Map<string | number, number>>;

export interface Loaded {
  value: PyValue;
  lines: LineIndex;
}

/** A YAML text that is not a document PyYAML would load; the message carries line and column. */
export class YamlSyntaxError extends Error {}

const BOOL_TRUE = /^(?:yes|Yes|YES|true|True|TRUE|on|On|ON)$/;
const BOOL_FALSE = /^(?:no|No|NO|false|False|FALSE|off|Off|OFF)$/;
const NULL = /^(?:~|null|Null|NULL|)$/;
const INT = /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/;
const FLOAT =
  /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;
const TIMESTAMP =
  /^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)$/;

function sexagesimal(text: string): number {
  let value = 0;
  for (const part of text.split(':')) value = value * 60 + Number(part);
  return value;
}

function constructInt(raw: string): number | PyBigInt {
  let text = raw.replaceAll('_', '');
  let sign = 1n;
  if (text[0] === '-' || text[0] === '+') {
    if (text[0] === '-') sign = -1n;
    text = text.slice(1);
  }
  if (text === '0') return 0;
  if (text.includes(':')) return Number(sign) * sexagesimal(text);
  // BigInt, because Python's ints are exact: 12345678901234567890 must not print as …7168.
  if (text.startsWith('0b') || text.startsWith('0x')) {
    // PyYAML itself dies on `0b_` (int('', 2)); here it is a plain error.
    if (text.length === 2) throw new YamlSyntaxError(`invalid int ${JSON.stringify(raw)}: no digits after ${text}`);
    return pyInt(sign * BigInt(text));
  }
  if (text.startsWith('0')) return pyInt(sign * BigInt(`0o${text.slice(1)}`));
  return pyInt(sign * BigInt(text));
}

function constructFloat(raw: string): number {
  let text = raw.replaceAll('_', '').toLowerCase();
  let sign = 1;
  if (text[0] === '-' || text[0] === '+') {
    if (text[0] === '-') sign = -1;
    text = text.slice(1);
  }
  if (text === '.inf') return sign * Infinity;
  if (text === '.nan') return NaN;
  if (text.includes(':')) return sign * sexagesimal(text);
  return sign * Number(text);
}

const pad = (n: number | string, width = 2): string => String(n).padStart(width, '0');

function constructTimestamp(raw: string): PyDate {
  const m = /^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:(?:[Tt]|[ \t]+)([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9]{1,2})(?::([0-9]{2}))?))?)?$/.exec(raw);
  if (!m) return new PyDate(raw, raw);
  const date = `${m[1]}-${pad(m[2] as string)}-${pad(m[3] as string)}`;
  if (m[4] === undefined) return new PyDate(date, date);
  let time = `${pad(m[4])}:${m[5]}:${m[6]}`;
  const fraction = (m[7] ?? '').slice(0, 6).padEnd(6, '0');
  if (m[7] && Number(fraction) !== 0) time += `.${fraction}`;
  let zone = '';
  if (m[8] === 'Z') zone = '+00:00';
  else if (m[8]) zone = `${m[9]}${pad(m[10] as string)}:${m[11] ?? '00'}`;
  return new PyDate(`${date}T${time}${zone}`, `${date} ${time}${zone}`);
}

/** PyYAML's implicit resolution of a plain scalar. */
function resolvePlain(text: string): PyValue {
  if (NULL.test(text)) return null;
  if (BOOL_TRUE.test(text)) return true;
  if (BOOL_FALSE.test(text)) return false;
  if (INT.test(text)) return constructInt(text);
  if (FLOAT.test(text)) return new PyFloat(constructFloat(text));
  if (TIMESTAMP.test(text)) return constructTimestamp(text);
  return text;
}

function resolveTagged(tag: string, text: string, where: string): PyValue {
  switch (tag) {
    case 'tag:yaml.org,2002:str':
      return text;
    case 'tag:yaml.org,2002:null':
      return null;
    case 'tag:yaml.org,2002:bool':
      if (BOOL_TRUE.test(text)) return true;
      if (BOOL_FALSE.test(text)) return false;
      break;
    case 'tag:yaml.org,2002:int':
      if (INT.test(text)) return constructInt(text);
      break;
    case 'tag:yaml.org,2002:float':
      if (FLOAT.test(text) || INT.test(text)) return new PyFloat(constructFloat(text));
      break;
    case 'tag:yaml.org,2002:timestamp':
      if (TIMESTAMP.test(text)) return constructTimestamp(text);
      break;
    default:
      throw new YamlSyntaxError(`could not determine a constructor for the tag '${tag}' ${where}`);
  }
  throw new YamlSyntaxError(`invalid value for the tag '${tag}': ${JSON.stringify(text)} ${where}`);
}

// PyYAML's reader refuses every character outside this set before it parses anything (comments
// included), so a spec holding a NUL or a pasted terminal escape must not compile here either.
const NON_PRINTABLE = /[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

function refuseNonPrintable(text: string): void {
  const match = NON_PRINTABLE.exec(text);
  if (!match) return;
  const before = text.slice(0, match.index);
  const line = before.split(/\r\n|\r|\n|\x85/).length;
  const col = match.index - Math.max(before.lastIndexOf('\n'), before.lastIndexOf('\r'), before.lastIndexOf('\x85'));
  const code = (match[0].codePointAt(0) ?? 0).toString(16).padStart(4, '0');
  throw new YamlSyntaxError(`unacceptable character #x${code}: special characters are not allowed at line ${line}, column ${col}`);
}

function parseOnce(text: string): { doc: Document.Parsed; lineCounter: LineCounter } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    schema: 'failsafe',
    version: '1.1',
    uniqueKeys: false,
    merge: false,
    lineCounter,
    prettyErrors: false,
  }) as Document.Parsed;
  return { doc, lineCounter };
}

/**
 * PyYAML never checks the indentation of a quoted scalar's continuation lines, so a rubric wrapped
 * back to its key's column compiles there; the parser here cuts the scalar at such a line. Folding
 * strips a continuation line's leading blanks, so indenting those lines changes no value (and no line
 * number). Returns the mended text, or undefined when the scalar at `cut` is not one to mend: no
 * closing quote at all, or a document marker inside it, which PyYAML refuses too.
 */
function indentQuotedContinuation(text: string, doc: Document.Parsed, cut: number): string | undefined {
  let start = -1;
  visit(doc, {
    Scalar(_key, node) {
      if ((node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE') && node.range && node.range[0] < cut && node.range[1] === cut) {
        start = node.range[0];
        return visit.BREAK;
      }
      return undefined;
    },
  });
  const quote = text[start];
  if (start < 0 || (quote !== '"' && quote !== "'")) return undefined;
  let end = start + 1;
  for (; end < text.length; end += 1) {
    const ch = text[end];
    if (quote === '"' && ch === '\\') end += 1;
    else if (quote === "'" && ch === "'" && text[end + 1] === "'") end += 1;
    else if (ch === quote) break;
  }
  if (end >= text.length) return undefined;
  const body = text.slice(start, end);
  if (/\n(?:---|\.\.\.)(?:[ \t\r\n]|$)/.test(body)) return undefined;
  const column = start - Math.max(text.lastIndexOf('\n', start), -1);
  return text.slice(0, start) + body.replaceAll('\n', `\n${' '.repeat(column)}`) + text.slice(end);
}

/** Which keys a Python dict holds as one: numbers by value (bools and floats too), the rest by type and text. */
function keyIdentity(key: PyValue): string {
  const numeric = (x: number): string => {
    if (Number.isNaN(x)) return 'n:nan'; // PyYAML hands out one NaN object, so its NaN keys are one key too
    if (!Number.isFinite(x)) return x > 0 ? 'n:inf' : 'n:-inf';
    return Number.isInteger(x) ? `n:${BigInt(x)}` : `n:${x}`;
  };
  if (key === null) return 'none';
  if (typeof key === 'boolean') return key ? 'n:1' : 'n:0';
  if (typeof key === 'number') return numeric(key);
  if (key instanceof PyBigInt) return `n:${key.digits}`;
  if (key instanceof PyFloat) return numeric(key.value);
  if (key instanceof PyDate) return `d:${key.iso}`;
  return `s:${String(key)}`;
}

/** Parses YAML text into Python-like values plus a line index. Throws YamlSyntaxError. */
export function loadYaml(yamlText: string): Loaded {
  refuseNonPrintable(yamlText);
  // YAML 1.1 (PyYAML) reads NEL as a line break, exactly as LF, in scalars and comments alike; the
  // parser here treats it as content.
  let text = yamlText.replaceAll('\x85', '\n');
  let { doc, lineCounter } = parseOnce(text);
  // Each pass mends one wrapped quoted scalar; a file holds only so many.
  for (let pass = 0; pass < 1000 && doc.errors[0]?.code === 'MISSING_CHAR'; pass += 1) {
    const mended = indentQuotedContinuation(text, doc, doc.errors[0].pos[0]);
    if (mended === undefined) break;
    text = mended;
    ({ doc, lineCounter } = parseOnce(text));
  }
  const at = (offset: number): string => {
    const { line, col } = lineCounter.linePos(offset);
    return `at line ${line}, column ${col}`;
  };
  const first = doc.errors[0];
  if (first) {
    const { line, col } = lineCounter.linePos(first.pos[0]);
    // The parser's own words for a second document name its API; a spec's author needs PyYAML's.
    const message = first.code === 'MULTIPLE_DOCS' ? 'expected a single document in the stream, but found another document' : first.message.split('\n')[0];
    throw new YamlSyntaxError(`${message} at line ${line}, column ${col}`);
  }
  const lines: LineIndex = new WeakMap();
  const lineOf = (node: { range?: readonly number[] | null | undefined } | null | undefined): number =>
    node?.range ? lineCounter.linePos(node.range[0] as number).line : 0;
  const seen = new Map<YamlNode, PyValue>();
  // Each mapping's (key, value) pairs with the keys as YAML gave them, for the mappings that merge it.
  const pairsOf = new WeakMap<PyDict, [PyValue, PyValue][]>();
  // An alias back into a collection still being built would make a cycle no JSON can hold.
  const building = new Set<YamlNode>();

  const convert = (node: unknown): PyValue => {
    if (node === null || node === undefined) return null;
    if (isAlias(node)) {
      const target = node.resolve(doc);
      if (!target) throw new YamlSyntaxError(`found undefined alias ${node.source} ${at(node.range?.[0] ?? 0)}`);
      if (building.has(target as YamlNode)) throw new YamlSyntaxError(`recursive alias *${node.source} ${at(node.range?.[0] ?? 0)}`);
      return convert(target);
    }
    if (isScalar(node)) {
      const textValue = node.value === null || node.value === undefined ? '' : String(node.value);
      const where = at(node.range?.[0] ?? 0);
      if (node.tag && node.tag !== '!') return resolveTagged(node.tag, textValue, where);
      if (node.type === 'PLAIN' || node.type === undefined) return resolvePlain(textValue);
      return textValue;
    }
    const cached = seen.get(node as YamlNode);
    if (cached !== undefined) return cached;
    if (isSeq(node)) {
      if (node.tag && node.tag !== 'tag:yaml.org,2002:seq') throw new YamlSyntaxError(`could not determine a constructor for the tag '${node.tag}' ${at(node.range?.[0] ?? 0)}`);
      const out: PyValue[] = [];
      seen.set(node, out);
      building.add(node);
      const index = new Map<string | number, number>();
      node.items.forEach((item, i) => {
        index.set(i, lineOf(item as YamlNode));
        out.push(convert(item));
      });
      lines.set(out, index);
      building.delete(node);
      return out;
    }
    if (isMap(node)) {
      if (node.tag && node.tag !== 'tag:yaml.org,2002:map') throw new YamlSyntaxError(`could not determine a constructor for the tag '${node.tag}' ${at(node.range?.[0] ?? 0)}`);
      const out = newDict();
      seen.set(node, out);
      building.add(node);
      const index = new Map<string | number, number>();
      // PyYAML's flatten_mapping: the merged pairs come first (of `<<: [*a, *b]`, b's before a's),
      // then the mapping's own, and the dict is built from them in that order.
      const merged: [PyValue, PyValue][] = [];
      const own: [PyValue, PyValue][] = [];
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const keyNode = pair.key as YamlNode | null;
        if (isScalar(keyNode) && keyNode.type === 'PLAIN' && keyNode.value === '<<' && !keyNode.tag) {
          // YAML 1.1 merge keys, as PyYAML applies them: explicit keys win over merged ones.
          const source = convert(pair.value);
          const sources = Array.isArray(source) ? source : [source];
          for (const m of sources) {
            if (m === null || typeof m !== 'object' || Array.isArray(m) || m instanceof PyFloat || m instanceof PyDate) {
              throw new YamlSyntaxError(`expected a mapping for merging ${at(keyNode.range?.[0] ?? 0)}`);
            }
          }
          if (Array.isArray(source)) sources.reverse();
          for (const m of sources) merged.push(...(pairsOf.get(m as PyDict) ?? []));
          continue;
        }
        const keyValue = convert(keyNode);
        if ((keyValue !== null && typeof keyValue === 'object' && !(keyValue instanceof PyFloat) && !(keyValue instanceof PyDate))) {
          throw new YamlSyntaxError(`found unhashable key ${at((keyNode as { range?: number[] } | null)?.range?.[0] ?? 0)}`);
        }
        own.push([keyValue, convert(pair.value)]);
        index.set(pyStr(keyValue), lineOf(keyNode));
      }
      const pairs = [...merged, ...own];
      pairsOf.set(out, pairs);
      // A Python dict: keys that are equal (True == 1 == 1.0) are one key, which keeps the first
      // key object and takes the last value. Looper's to_jsonable then writes each key as str(key).
      const slots = new Map<string, { key: PyValue; value: PyValue }>();
      for (const [key, value] of pairs) {
        const id = keyIdentity(key);
        const slot = slots.get(id);
        if (slot) slot.value = value;
        else slots.set(id, { key, value });
      }
      for (const { key, value } of slots.values()) {
        Object.defineProperty(out, pyStr(key), { value, enumerable: true, writable: true, configurable: true });
      }
      lines.set(out, index);
      building.delete(node);
      return out;
    }
    throw new YamlSyntaxError('unsupported YAML node');
  };
  return { value: convert(doc.contents), lines };
}
