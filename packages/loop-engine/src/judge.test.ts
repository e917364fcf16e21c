// The judge parser on the answers Looper's tests and its bugs name: fenced, prefixed, malformed, mistyped.
import { describe, expect, it } from 'vitest';
import { parseJudgeOutput } from './judge.js';

describe('parseJudgeOutput (fail-safe)', () => {
  it('reads a fenced block with nested JSON and trailing prose as pass, without a warning', () => {
    const v = parseJudgeOutput('Sure.\n```json\n{"verdict":"pass","blocking_issues":[],"confidence":0.9,"notes":"ok","detail":{"a":{"b":1}}}\n```\nmore prose');
    expect(v).toMatchObject({ verdict: 'pass', blocking_issues: [], confidence: 0.9, detail: { a: { b: 1 } } });
    expect(v.warning).toBeUndefined();
  });
  it('reads an object followed by prose (raw_decode) and an object after a preamble', () => {
    expect(parseJudgeOutput('{"verdict":"revise","blocking_issues":["x"]} because x').blocking_issues).toEqual(['x']);
    expect(parseJudgeOutput('My verdict: {"verdict": "pass"} done').verdict).toBe('pass');
  });
  it('degrades unparseable output to revise with a warning, keeping the raw text', () => {
    expect(parseJudgeOutput('looks good to me, pass')).toEqual({
      verdict: 'revise',
      blocking_issues: ['Judge output was not parseable JSON.'],
      confidence: 0,
      notes: 'looks good to me, pass',
      warning: 'unparseable_judge_output',
    });
  });
  it('degrades a JSON value that is not an object, and an unknown verdict', () => {
    expect(parseJudgeOutput('["pass"]')).toMatchObject({ verdict: 'revise', warning: 'invalid_judge_output' });
    expect(parseJudgeOutput('"pass"')).toMatchObject({ verdict: 'revise', warning: 'invalid_judge_output' });
    const v = parseJudgeOutput('{"verdict":"approve","blocking_issues":[]}');
    expect(v).toMatchObject({ verdict: 'revise', warning: 'invalid_judge_output', blocking_issues: ['Judge verdict was not pass or revise.'] });
    expect(parseJudgeOutput('{"blocking_issues":[]}').verdict).toBe('revise');
  });
  it('never passes output that also holds a revise verdict (an echoed example first, the answer after)', () => {
    const echoed = parseJudgeOutput('Format: {"verdict":"pass"}\nMy verdict: {"verdict":"revise","blocking_issues":["x"]}');
    expect(echoed).toMatchObject({ verdict: 'revise', warning: 'invalid_judge_output' });
    expect(echoed.blocking_issues).toContain('Judge output holds both a pass and a revise verdict.');
    expect(parseJudgeOutput('```json\n{"verdict":"pass"}\n```\n```json\n{"verdict": "REVISE"}\n```').verdict).toBe('revise');
    // A revise quoted inside a JSON string is text, not a verdict.
    expect(parseJudgeOutput('{"verdict":"pass","notes":"first draft got \\"verdict\\": \\"revise\\""}').verdict).toBe('pass');
  });
  it('checks types: a string blocking_issues is one issue (Looper split it into characters); PASS is pass', () => {
    expect(parseJudgeOutput('{"verdict":"revise","blocking_issues":"no title"}').blocking_issues).toEqual(['no title']);
    expect(parseJudgeOutput('{"verdict":" PASS "}').verdict).toBe('pass');
    expect(parseJudgeOutput('{"verdict":"pass","confidence":"high"}').confidence).toBe(0);
  });
});
