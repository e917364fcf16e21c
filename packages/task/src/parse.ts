// Parses YAML or JSON and keeps the source map, so any later finding can point at a line and column.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { finding, type Finding, type Position } from './finding.js';
import type { Source } from './source.js';

export type Segment = string | number;

export interface Parsed {
  value: unknown;
  /** Where the value at `path` starts; with `key`, where its key is written (for unknown fields). */
  locate(path: readonly Segment[], key?: boolean): Position | undefined;
}

export type ParseResult = { ok: true; parsed: Parsed } | { ok: false; error: Finding };

export function parseSource(source: Source): ParseResult {
  if (source.format === 'json') {
    try {
      JSON.parse(source.text);
    } catch (error) {
      return { ok: false, error: jsonError(source.text, (error as Error).message) };
    }
  }
  const lines = new LineCounter();
  // uniqueKeys: a key written twice is an error (JSON.parse would keep the last one silently).
  // logLevel 'error': the parser's own warnings would reach stderr as Node process warnings.
  // merge: in YAML, `<<: *defaults` merges a mapping in, as quickstarted's loader (PyYAML) reads a task; in JSON "<<" is a key.
  const doc = parseDocument(source.text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, version: '1.2', merge: source.format === 'yaml', logLevel: 'error' });
  // An unknown tag (`!foo x`) would otherwise be dropped silently, keeping only the value.
  const first = doc.errors[0] ?? doc.warnings.find((w) => w.code === 'TAG_RESOLVE_FAILED');
  if (first) {
    const at = lines.linePos(first.pos[0]);
    const what = source.format === 'json' ? 'invalid JSON' : 'invalid YAML';
    // The parser's message does not say which key; the source does.
    const dup = first.code === 'DUPLICATE_KEY' ? ` ('${(/^[^:\n]*/.exec(source.text.slice(first.pos[0]))?.[0] ?? '').trim()}' is written twice)` : '';
    // The parser's own advice here names one of its functions; a task author needs the YAML fix.
    const message =
      first.code === 'MULTIPLE_DOCS'
        ? "holds more than one YAML document (a second '---'); write one task per file"
        : /Maximum call stack/.test(first.message)
          ? 'nested too deeply to read (hundreds of levels); a task is a few levels deep'
          : first.code === 'TAG_RESOLVE_FAILED'
            ? `unknown tag ${/Unresolved tag: (\S+)/.exec(first.message)?.[1] ?? ''}; a task is plain strings, numbers, lists and mappings`
            : first.message;
    return { ok: false, error: finding('QS005', `${what}: ${message}${dup}`, { at: { line: at.line, column: at.col } }) };
  }
  let value: unknown;
  try {
    // A small alias budget: a "billion laughs" file is refused, not expanded.
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return { ok: false, error: finding('QS005', `invalid YAML: ${(error as Error).message}`) };
  }
  return { ok: true, parsed: { value, locate: (path, key) => locate(doc, lines, path, key === true) } };
}

function locate(doc: Document, lines: LineCounter, path: readonly Segment[], key: boolean): Position | undefined {
  const at = (offset: number | undefined): Position | undefined => {
    if (offset === undefined) return undefined;
    const p = lines.linePos(offset);
    return { line: p.line, column: p.col };
  };
  if (path.length === 0) return at((doc.contents as Node | null)?.range?.[0]);
  if (key) {
    const parent = doc.getIn(path.slice(0, -1), true) as unknown;
    const last = path[path.length - 1];
    if (isMap(parent)) {
      for (const pair of parent.items) {
        const k = pair.key as unknown;
        if (isScalar(k) && String(k.value) === String(last)) return at(k.range?.[0]);
      }
    }
  }
  // Walk down as far as the path exists: a missing field points at the mapping that lacks it.
  for (let n = path.length; n >= 0; n -= 1) {
    const node = (n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true)) as unknown;
    if (node && (isMap(node) || isSeq(node) || isScalar(node))) return at((node as Node).range?.[0]);
  }
  return undefined;
}

/** JSON.parse messages differ across Node versions; keep the reason, find the position where possible. */
function jsonError(text: string, message: string): Finding {
  const reason = message.replace(/,?\s+(?:"|\.\.\.)[\s\S]* is not valid JSON$/, '').replace(/( in JSON)? at position \d+.*$/s, '').replace(/ \(line \d+ column \d+\)$/, '');
  let offset: number | undefined;
  const pos = / at position (\d+)/.exec(message);
  if (pos) offset = Number(pos[1]);
  if (offset === undefined && /Unexpected end of JSON input/.test(message)) offset = text.length;
  offset ??= firstBadOffset(text);
  if (offset === undefined) return finding('QS005', `invalid JSON: ${reason}`);
  const lines = new LineCounter();
  let start = 0;
  for (const line of text.split('\n')) {
    lines.addNewLine(start);
    start += line.length + 1;
  }
  const p = lines.linePos(Math.min(offset, text.length));
  return finding('QS005', `invalid JSON: ${reason}`, { at: { line: p.line, column: p.col } });
}

/**
 * Node 20 often names the bad token without its position. A prefix that is fine so far fails only
 * with "end of input", so the shortest prefix failing otherwise ends at the bad token.
 */
function firstBadOffset(text: string): number | undefined {
  const fineSoFar = (n: number): boolean => {
    try {
      JSON.parse(text.slice(0, n));
      return true;
    } catch (error) {
      const m = (error as Error).message;
      const at = / at position (\d+)/.exec(m);
      return /end of JSON input|Unterminated string/.test(m) || (at !== null && Number(at[1]) >= n);
    }
  };
  let lo = 0;
  let hi = text.length;
  if (fineSoFar(hi)) return undefined;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (fineSoFar(mid)) lo = mid + 1;
    else hi = mid;
  }
  return Math.max(0, lo - 1);
}
