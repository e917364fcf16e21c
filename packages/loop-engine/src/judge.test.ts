// The judge parser on the answers Looper's tests and its bugs name: fenced, prefixed, malformed, mistyped.
import { describe, expect, it } from 'vitest';
import { parseJudge, parseJudgeOutput, verdictBlock } from './judge.js';

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
  it('checks types: a string blocking_issues is one issue (Looper split it into characters)', () => {
    expect(parseJudgeOutput('{"verdict":"revise","blocking_issues":"no title"}').blocking_issues).toEqual(['no title']);
    expect(parseJudgeOutput('{"verdict":"pass","confidence":"high"}').confidence).toBe(0);
  });
});

// Every expected block below is what Looper's runner (CPython 3.11) wrote in review-<gate>-<n>.md for
// the same judge answer: json.dumps(verdict, indent=2) of the parsed dict, keys in the judge's order.
describe('the review file\'s verdict block, as Looper writes it', () => {
  it.each([
    ["nan_revise", "{\"verdict\": \"revise\", \"blocking_issues\": [\"n\"], \"confidence\": NaN, \"notes\": Infinity, \"x\": -Infinity}", "{\n  \"verdict\": \"revise\",\n  \"blocking_issues\": [\n    \"n\"\n  ],\n  \"confidence\": NaN,\n  \"notes\": Infinity,\n  \"x\": -Infinity,\n  \"member\": \"judge-1\"\n}"],
    ["str_issues", "{\"verdict\": \"revise\", \"blocking_issues\": \"one issue\", \"confidence\": \"high\"}", "{\n  \"verdict\": \"revise\",\n  \"blocking_issues\": \"one issue\",\n  \"confidence\": \"high\",\n  \"notes\": \"\",\n  \"member\": \"judge-1\"\n}"],
    ["null_issues", "{\"verdict\": \"revise\", \"blocking_issues\": null, \"confidence\": null, \"notes\": null}", "{\n  \"verdict\": \"revise\",\n  \"blocking_issues\": null,\n  \"confidence\": null,\n  \"notes\": null,\n  \"member\": \"judge-1\"\n}"],
    ["member_warning", "{\"member\": \"someone\", \"warning\": \"mine\", \"verdict\": \"revise\", \"blocking_issues\": [\"w\"]}", "{\n  \"member\": \"judge-1\",\n  \"warning\": \"mine\",\n  \"verdict\": \"revise\",\n  \"blocking_issues\": [\n    \"w\"\n  ],\n  \"confidence\": 0.0,\n  \"notes\": \"\"\n}"],
    ["dup_keys", "{\"verdict\": \"pass\", \"blocking_issues\": [\"d\"], \"verdict\": \"revise\", \"2\": 1, \"1\": 2}", "{\n  \"verdict\": \"revise\",\n  \"blocking_issues\": [\n    \"d\"\n  ],\n  \"2\": 1,\n  \"1\": 2,\n  \"confidence\": 0.0,\n  \"notes\": \"\",\n  \"member\": \"judge-1\"\n}"],
    ["deep_num", "{\"verdict\": \"revise\", \"blocking_issues\": [\"z\"], \"confidence\": 1e400, \"n\": -0.0, \"m\": 1.7976931348623157e308, \"k\": 0.1e1, \"j\": 12345678901234567890123}", "{\n  \"verdict\": \"revise\",\n  \"blocking_issues\": [\n    \"z\"\n  ],\n  \"confidence\": Infinity,\n  \"n\": -0.0,\n  \"m\": 1.7976931348623157e+308,\n  \"k\": 1.0,\n  \"j\": 12345678901234567890123,\n  \"notes\": \"\",\n  \"member\": \"judge-1\"\n}"],
    ["unparseable", "I think it is fine — ünï 😀", "{\n  \"verdict\": \"revise\",\n  \"blocking_issues\": [\n    \"Judge output was not parseable JSON.\"\n  ],\n  \"confidence\": 0.0,\n  \"notes\": \"I think it is fine \\u2014 \\u00fcn\\u00ef \\ud83d\\ude00\",\n  \"warning\": \"unparseable_judge_output\",\n  \"member\": \"judge-1\"\n}"],
    ["bad_verdict", "{\"verdict\": \"approve\", \"blocking_issues\": [\"b\"], \"confidence\": 0.25}", "{\n  \"verdict\": \"revise\",\n  \"blocking_issues\": [\n    \"b\",\n    \"Judge verdict was not pass or revise.\"\n  ],\n  \"confidence\": 0.25,\n  \"notes\": \"\",\n  \"member\": \"judge-1\"\n}"],
    ["obj_issues", "{\"verdict\": \"revise\", \"blocking_issues\": [{\"line\": 2, \"why\": \"é\"}, 3], \"notes\": [\"a\", 1.0]}", "{\n  \"verdict\": \"revise\",\n  \"blocking_issues\": [\n    {\n      \"line\": 2,\n      \"why\": \"\\u00e9\"\n    },\n    3\n  ],\n  \"notes\": [\n    \"a\",\n    1.0\n  ],\n  \"confidence\": 0.0,\n  \"member\": \"judge-1\"\n}"],
    ["prose-wrapped, nested, floats", "Here is my verdict: {\"verdict\": \"revise\", \"blocking_issues\": [\"Plan lacks café ☕ step\", \"emoji 😀 \\u00e9\\ud83d\\ude00\"], \"confidence\": 0.5, \"notes\": \"naïve\", \"extra\": {\"z\": 1, \"a\": [1.0, 1e-7, 2.5e+20, -0.0, 1E5, 0.1, 100.0, 1e16, 123456789.123], \"nested\": {\"k\": \"\\u00e9\\ud83d\\ude00\", \"10\": true, \"2\": null}}} Thanks — done!", "{\n  \"verdict\": \"revise\",\n  \"blocking_issues\": [\n    \"Plan lacks caf\\u00e9 \\u2615 step\",\n    \"emoji \\ud83d\\ude00 \\u00e9\\ud83d\\ude00\"\n  ],\n  \"confidence\": 0.5,\n  \"notes\": \"na\\u00efve\",\n  \"extra\": {\n    \"z\": 1,\n    \"a\": [\n      1.0,\n      1e-07,\n      2.5e+20,\n      -0.0,\n      100000.0,\n      0.1,\n      100.0,\n      1e+16,\n      123456789.123\n    ],\n    \"nested\": {\n      \"k\": \"\\u00e9\\ud83d\\ude00\",\n      \"10\": true,\n      \"2\": null\n    }\n  },\n  \"member\": \"judge-1\"\n}"],
    ["fenced, key order, big int", "```\n{\"confidence\": 1, \"verdict\": \"revise\", \"b\": 2, \"a\": 1, \"blocking_issues\": [\"Line two — too long\\nreally\", \"tab\\there \\\"quoted\\\" \\\\ back\"], \"notes\": {\"why\": \"nested ü\", \"score\": 0.30000000000000004}, \"big\": 12345678901234567890, \"tiny\": 5e-324, \"neg\": -1.5e-10, \"exp\": 1e21, \"f\": 1.5e300}\n```", "{\n  \"confidence\": 1,\n  \"verdict\": \"revise\",\n  \"b\": 2,\n  \"a\": 1,\n  \"blocking_issues\": [\n    \"Line two \\u2014 too long\\nreally\",\n    \"tab\\there \\\"quoted\\\" \\\\ back\"\n  ],\n  \"notes\": {\n    \"why\": \"nested \\u00fc\",\n    \"score\": 0.30000000000000004\n  },\n  \"big\": 12345678901234567890,\n  \"tiny\": 5e-324,\n  \"neg\": -1.5e-10,\n  \"exp\": 1e+21,\n  \"f\": 1.5e+300,\n  \"member\": \"judge-1\"\n}"],

  ])('%s', (_name, raw, block) => {
    expect(verdictBlock(parseJudge(raw).block, 'judge-1')).toBe(block);
  });
  it('takes only "pass" and "revise" as verdicts, as Looper does: "PASS" or " pass" is revise (fail-safe)', () => {
    for (const v of ['PASS', ' pass', 'Pass', 'pass ', 'REVISE']) {
      expect(parseJudgeOutput(`{"verdict": "${v}", "blocking_issues": []}`)).toMatchObject({ verdict: 'revise', warning: 'invalid_judge_output', blocking_issues: ['Judge verdict was not pass or revise.'] });
    }
    // Looper's block for the same answer (CPython 3.11).
    expect(verdictBlock(parseJudge('{"verdict": "PASS", "blocking_issues": [], "confidence": 1.0, "notes": ""}').block, 'judge-1')).toBe(
      '{\n  "verdict": "revise",\n  "blocking_issues": [\n    "Judge verdict was not pass or revise."\n  ],\n  "confidence": 1.0,\n  "notes": "",\n  "member": "judge-1"\n}',
    );
  });
  it('reads what Python reads: NaN and Infinity are numbers, so such a pass passes', () => {
    expect(parseJudgeOutput('{"verdict": "pass", "blocking_issues": [], "confidence": NaN}').verdict).toBe('pass');
    expect(parseJudgeOutput('{"verdict": "revise", "blocking_issues": ["n"], "notes": Infinity}').blocking_issues).toEqual(['n']);
  });
}); 
