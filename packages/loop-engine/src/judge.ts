// Parses a judge's answer fail-safe: anything that is not a clear verdict object is a revise, never a pass.
export interface JudgeVerdict {
  verdict: 'pass' | 'revise';
  blocking_issues: string[];
  confidence: number;
  notes: string;
  /** unparseable_judge_output or invalid_judge_output when the answer was degraded to revise. */
  warning?: string;
  [key: string]: unknown;
}

const FENCE = /```(?:json)?\s*([\s\S]*?)```/;
const REVISE_ANYWHERE = /"verdict"\s*:\s*"\s*revise\s*"/i;

/** The end index of the JSON value that starts `text` (like Python's raw_decode), or -1. */
function valueEnd(text: string): number {
  const first = text[0];
  if (first === '{' || first === '[') {
    let depth = 0;
    let inString = false;
    for (let i = 0; i < text.length; i += 1) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i += 1;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') depth += 1;
      else if (c === '}' || c === ']') {
        depth -= 1;
        if (depth === 0) return i + 1;
      }
    }
    return -1;
  }
  const scalar = /^(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text);
  return scalar ? scalar[0].length : -1;
}

function tryParse(candidate: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(candidate) };
  } catch {
    const end = valueEnd(candidate);
    if (end > 0) {
      try {
        return { ok: true, value: JSON.parse(candidate.slice(0, end)) };
      } catch {
        /* not JSON either way */
      }
    }
    return { ok: false };
  }
}

/**
 * Candidates in Looper's order: the first fenced block, the whole text, the text from its first `{`.
 * The first that parses wins. Types are then checked (Looper extends a string blocking_issues char by char).
 */
export function parseJudgeOutput(raw: string): JudgeVerdict {
  const text = raw.trim();
  const candidates: string[] = [];
  const fence = FENCE.exec(text);
  if (fence) candidates.push((fence[1] ?? '').trim());
  candidates.push(text);
  const brace = text.indexOf('{');
  if (brace > 0) candidates.push(text.slice(brace));
  let parsed: { ok: true; value: unknown } | undefined;
  for (const c of candidates) {
    const r = tryParse(c);
    if (r.ok) {
      parsed = r;
      break;
    }
  }
  if (!parsed) return { verdict: 'revise', blocking_issues: ['Judge output was not parseable JSON.'], confidence: 0, notes: raw, warning: 'unparseable_judge_output' };
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { verdict: 'revise', blocking_issues: ['Judge output was not a JSON object.'], confidence: 0, notes: raw, warning: 'invalid_judge_output' };
  }
  const obj = { ...(value as Record<string, unknown>) };
  const issues: string[] = [];
  const bi = obj.blocking_issues;
  if (Array.isArray(bi)) for (const x of bi) issues.push(typeof x === 'string' ? x : JSON.stringify(x));
  else if (typeof bi === 'string' && bi.trim() !== '') issues.push(bi);
  let warning: string | undefined;
  const v = typeof obj.verdict === 'string' ? obj.verdict.trim().toLowerCase() : obj.verdict;
  let verdict: 'pass' | 'revise';
  if (v === 'pass' || v === 'revise') verdict = v;
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
  return out;
}
