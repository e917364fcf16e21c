// Parses a judge's answer fail-safe: anything that is not a clear verdict object is a revise, never a pass.
import { PY_SPACE_CLASS, PyFloat, PyMap, pyJsonDecodePrefix, pyJsonDumps, pyJsonLoads, pyStrip, type PyValue } from '@quickloop/loop-spec';
export interface JudgeVerdict {
  verdict: 'pass' | 'revise';
  blocking_issues: string[];
  confidence: number;
  notes: string;
  /** unparseable_judge_output or invalid_judge_output when the answer was degraded to revise. */
  warning?: string;
  [key: string]: unknown;
}

// Python's `\s` (re, str pattern) is Unicode whitespace: the blanks pyStrip takes off.
const FENCE = new RegExp(`\`\`\`(?:json)?${PY_SPACE_CLASS}*([\\s\\S]*?)\`\`\``);
const REVISE_ANYWHERE = /"verdict"\s*:\s*"\s*revise\s*"/i;

/** json.loads, then JSONDecoder().raw_decode for a value followed by prose: Looper's two tries per candidate. */
function tryParse(candidate: string): { ok: true; value: PyValue } | { ok: false } {
  try {
    return { ok: true, value: pyJsonLoads(candidate, { ordered: true }) };
  } catch {
    try {
      return { ok: true, value: pyJsonDecodePrefix(candidate, { ordered: true }).value };
    } catch {
      return { ok: false };
    }
  }
}

/** A parsed JSON value as plain JavaScript (floats and big ints as numbers, dicts as objects). */
function plain(value: PyValue): unknown {
  if (value instanceof PyFloat) return value.value;
  if (Array.isArray(value)) return value.map(plain);
  if (value instanceof PyMap) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value) Object.defineProperty(out, k, { value: plain(v), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}

export interface ParsedJudge {
  verdict: JudgeVerdict;
  /**
   * The verdict as Looper's runner holds it, for the review file: the judge's own dict (its key
   * order, its values as written, `1.0` a float) with Looper's defaults, and our verdict and added
   * issues where we judged differently. `member` is set by verdictBlock.
   */
  block: PyMap;
}

/** The review file's verdict block: json.dumps(verdict, indent=2) as Looper's runner writes it. */
export function verdictBlock(block: PyMap, member?: string): string {
  const out = new PyMap(block);
  if (member !== undefined) out.set('member', member);
  return pyJsonDumps(out, { indent: 2 });
}

/** A verdict we made ourselves (a human's) as Looper writes it: confidence is a float. */
export function ownVerdictBlock(v: JudgeVerdict): PyMap {
  const out = new PyMap();
  for (const [k, x] of Object.entries(v)) out.set(k, k === 'confidence' && typeof x === 'number' ? new PyFloat(x) : (x as PyValue));
  return out;
}

/**
 * Candidates in Looper's order: the first fenced block, the whole text, the text from its first `{`.
 * The first that parses (as Python's json reads it: NaN and Infinity too) wins. Types are then checked
 * (Looper extends a string blocking_issues char by char).
 */
export function parseJudgeOutput(raw: string): JudgeVerdict {
  return parseJudge(raw).verdict;
}

export function parseJudge(raw: string): ParsedJudge {
  const text = pyStrip(raw);
  const candidates: string[] = [];
  const fence = FENCE.exec(text);
  if (fence) candidates.push(pyStrip(fence[1] ?? ''));
  candidates.push(text);
  const brace = text.indexOf('{');
  if (brace > 0) candidates.push(text.slice(brace));
  let parsed: { ok: true; value: PyValue } | undefined;
  for (const c of candidates.filter(Boolean)) {
    const r = tryParse(c);
    if (r.ok) {
      parsed = r;
      break;
    }
  }
  const degraded = (issue: string, warning: string): ParsedJudge => {
    const verdict: JudgeVerdict = { verdict: 'revise', blocking_issues: [issue], confidence: 0, notes: text, warning };
    return { verdict, block: ownVerdictBlock(verdict) };
  };
  if (!parsed) return degraded('Judge output was not parseable JSON.', 'unparseable_judge_output');
  if (!(parsed.value instanceof PyMap)) return degraded('Judge output was not a JSON object.', 'invalid_judge_output');
  const block = new PyMap(parsed.value);
  const obj = plain(parsed.value) as Record<string, unknown>;
  const issues: string[] = [];
  const bi = obj.blocking_issues;
  if (Array.isArray(bi)) for (const x of bi) issues.push(typeof x === 'string' ? x : JSON.stringify(x));
  else if (typeof bi === 'string' && bi.trim() !== '') issues.push(bi);
  const fromJudge = issues.length;
  let warning: string | undefined;
  // Exactly `pass` or `revise`, as Looper compares it: `"PASS"` or `" pass"` is malformed, so revise.
  let verdict: 'pass' | 'revise';
  if (obj.verdict === 'pass' || obj.verdict === 'revise') verdict = obj.verdict;
  else {
    verdict = 'revise';
    issues.push('Judge verdict was not pass or revise.');
    warning = 'invalid_judge_output';
  }
  // The first object that parses is not always the answer: a judge that echoes an example
  // (`{"verdict": "pass"}`) before its real `revise` must not pass. A revise anywhere outweighs a pass.
  if (verdict === 'pass' && REVISE_ANYWHERE.test(text)) {
    verdict = 'revise';
    issues.push('Judge output holds both a pass and a revise verdict.');
    warning = 'invalid_judge_output';
  }
  const out: JudgeVerdict = {
    ...obj,
    verdict,
    blocking_issues: issues,
    confidence: typeof obj.confidence === 'number' ? obj.confidence : 0,
    notes: typeof obj.notes === 'string' ? obj.notes : obj.notes === undefined ? '' : JSON.stringify(obj.notes),
  };
  if (warning) out.warning = warning;
  else delete out.warning;
  // Looper's dict: an unknown verdict becomes revise, the defaults are set where the judge left a key out.
  if (block.get('verdict') !== verdict) block.set('verdict', verdict);
  const added = issues.slice(fromJudge);
  const given = block.get('blocking_issues');
  if (Array.isArray(given)) block.set('blocking_issues', [...given, ...added]);
  else if (given === undefined || added.length > 0) block.set('blocking_issues', issues);
  if (!block.has('confidence')) block.set('confidence', new PyFloat(0));
  if (!block.has('notes')) block.set('notes', '');
  return { verdict: out, block };
}
