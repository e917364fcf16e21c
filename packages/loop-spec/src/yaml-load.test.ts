// loop.yaml is read with PyYAML's YAML 1.1 rules; the expected text was printed by PyYAML 6.0.3 + json.dumps.
import { describe, expect, it } from 'vitest';
import { pyJsonDumps, pyJsonLoads } from './py-json.js';
import { YamlSyntaxError, loadYaml } from './yaml-load.js';

const TRICKY = `a: yes
b: No
c: on
d: y
e: 1e5
f: 1.5e+3
g: 0x1F
h: 012
i: 1_000
j: 1:30
k: 5.0
l: .inf
m: -.5
n: 2026-06-18
o: 2026-06-18 10:11:12
p: 2001-12-14t21:59:43.10-05:00
q: ~
r:
s: "quoted 5"
u: !!str 12
v: !!float 3
base: &b {k1: 1, k2: 2}
merged:
  <<: *b
  k2: 3
folded: >
  some folded
  text
`;

describe('loadYaml', () => {
  it('resolves scalars exactly as PyYAML safe_load does', () => {
    expect(pyJsonDumps(loadYaml(TRICKY).value, { sortKeys: true })).toBe(
      '{"a": true, "b": false, "base": {"k1": 1, "k2": 2}, "c": true, "d": "y", "e": "1e5", "f": 1500.0, "folded": "some folded text\\n", ' +
        '"g": 31, "h": 10, "i": 1000, "j": 90, "k": 5.0, "l": Infinity, "m": "-.5", "merged": {"k1": 1, "k2": 3}, "n": "2026-06-18", ' +
        '"o": "2026-06-18T10:11:12", "p": "2001-12-14T21:59:43.100000-05:00", "q": null, "r": null, "s": "quoted 5", "u": "12", "v": 3.0}',
    );
  });

  it('keys equal to Python are one key (True == 1 == 1.0): the first key stays, the last value wins, merges count first', () => {
    // PyYAML builds a dict, where 1 and yes are the same key; Looper's to_jsonable then writes str(key).
    const text = [
      'a:\n  1: first-int\n  yes: then-bool',
      'b:\n  true: bool-first\n  1.0: then-float\n  "1": then-str',
      'c:\n  <<: {1: merged-int, k: merged}\n  true: explicit-bool',
      'd:\n  <<: [{x: first, 0: zero-int}, {x: second, false: false-bool}]',
      'e:\n  null: real-null\n  ~: tilde-null\n  "None": str-none',
    ].join('\n');
    // Printed by PyYAML 6.0.3 + Looper's to_jsonable + json.dumps(sort_keys=True).
    expect(pyJsonDumps(loadYaml(`${text}\n`).value, { sortKeys: true })).toBe(
      '{"a": {"1": "then-bool"}, "b": {"1": "then-str", "True": "then-float"}, "c": {"1": "explicit-bool", "k": "merged"}, "d": {"False": "zero-int", "x": "first"}, "e": {"None": "str-none"}}',
    );
  });

  it('remembers the line of every key and list item', () => {
    const { value, lines } = loadYaml('goal:\n  statement: x\n  verification:\n    - id: a\n    - id: b\n');
    const goal = (value as Record<string, Record<string, unknown>>).goal as Record<string, unknown>;
    expect(lines.get(goal)?.get('verification')).toBe(3);
    expect(lines.get(goal.verification as object)?.get(1)).toBe(5);
  });

  it('reports a syntax error with its line and column', () => {
    expect(() => loadYaml('a: [1, 2\nb: 3\n')).toThrow(YamlSyntaxError);
    expect(() => loadYaml('a: b: c\n')).toThrow(/line 1, column \d+/);
  });

  it('refuses tags PyYAML has no safe constructor for', () => {
    expect(() => loadYaml('a: !custom z\n')).toThrow("could not determine a constructor for the tag '!custom'");
  });

  it('refuses a recursive alias (no JSON can hold it) but shares a repeated one', () => {
    expect(() => loadYaml('a: &x [1, *x]\n')).toThrow('recursive alias *x at line 1');
    const { value } = loadYaml('a: &x {k: 1}\nb: *x\n') as { value: Record<string, unknown> };
    expect(value.b).toBe(value.a);
  });

  it('keeps ints past 2**53 exact, as Python does (json.dumps printed these)', () => {
    const text = 'big: 12345678901234567890\nneg: -12345678901234567890\nhex: 0x1FFFFFFFFFFFFFFFFF\nedge: 9007199254740993\noct: 017\n12345678901234567890: keyed\n';
    expect(pyJsonDumps(loadYaml(text).value, { sortKeys: true })).toBe(
      '{"12345678901234567890": "keyed", "big": 12345678901234567890, "edge": 9007199254740993, "hex": 590295810358705651711, "neg": -12345678901234567890, "oct": 15}',
    );
    expect(pyJsonDumps(pyJsonLoads('{"n": 123456789012345678901234, "f": 1.5}'))).toBe('{"n": 123456789012345678901234, "f": 1.5}');
    // PyYAML dies with a ValueError on `0b_`; here it is an error that names the value.
    expect(() => loadYaml('a: 0b_\n')).toThrow(YamlSyntaxError);
  });

  it('keeps the last of duplicate keys, as PyYAML does', () => {
    expect(pyJsonDumps(loadYaml('a: 1\na: 2\n').value)).toBe('{"a": 2}');
  });

  it('refuses the control characters PyYAML refuses, anywhere in the file, naming where', () => {
    // PyYAML 6.0.3: "unacceptable character #x0000: special characters are not allowed".
    expect(() => loadYaml('a: "x\u0000y"\n')).toThrow('unacceptable character #x0000: special characters are not allowed at line 1, column 6');
    expect(() => loadYaml('a: 1\n# \u001b[31m\n')).toThrow('unacceptable character #x001b: special characters are not allowed at line 2, column 3');
    expect(() => loadYaml('a: x\u007f\n')).toThrow('unacceptable character #x007f');
    expect(() => loadYaml('a: x\u000c\n')).toThrow('unacceptable character #x000c');
    expect(() => loadYaml('a: "x\ufffe"\n')).toThrow('unacceptable character #xfffe');
    // Tabs, CR, a BOM, NEL and characters past the BMP are all printable to PyYAML.
    expect(pyJsonDumps(loadYaml('a: "\t\ufeff\u{1F600}"\r\n').value)).toBe('{"a": "\\t\\ufeff\\ud83d\\ude00"}');
  });

  it('reads NEL (U+0085) as a line break, as PyYAML does (json.dumps printed these)', () => {
    expect(pyJsonDumps(loadYaml('a: "x\u0085  y"\n').value)).toBe('{"a": "x y"}');
    expect(pyJsonDumps(loadYaml('a: x\u0085  y\n').value)).toBe('{"a": "x y"}');
    expect(pyJsonDumps(loadYaml('a: |\n  x\u0085  y\n').value)).toBe('{"a": "x\\ny\\n"}');
    expect(pyJsonDumps(loadYaml('# c\u0085a: 1\n').value)).toBe('{"a": 1}');
  });

  it('reads a quoted scalar whose continuation lines are not indented, as PyYAML does (json.dumps printed these)', () => {
    // PyYAML never checks a quoted scalar's continuation indentation; a wrapped rubric is common.
    expect(pyJsonDumps(loadYaml('g:\n  a: "x\n  y"\n').value)).toBe('{"g": {"a": "x y"}}');
    expect(pyJsonDumps(loadYaml('g:\n  - a: "x\n   y"\n').value)).toBe('{"g": [{"a": "x y"}]}');
    expect(pyJsonDumps(loadYaml("k: 'it''s\nok'\n").value)).toBe('{"k": "it\'s ok"}');
    expect(pyJsonDumps(loadYaml('a: "one\n\ntwo \\" q\n\tthree"\n').value)).toBe('{"a": "one\\ntwo \\" q three"}');
    const { value, lines } = loadYaml('a: "x\ny"\nb: 1\n');
    expect(pyJsonDumps(value)).toBe('{"a": "x y", "b": 1}');
    expect(lines.get(value as object)?.get('b')).toBe(3);
    expect(pyJsonDumps(loadYaml('a: "x\u0085y"\n').value)).toBe('{"a": "x y"}');
    // What PyYAML refuses stays refused: a document marker inside, or no closing quote at all.
    expect(() => loadYaml('a: "x\n---\ny"\n')).toThrow(YamlSyntaxError);
    expect(() => loadYaml('a: "x\n')).toThrow(YamlSyntaxError);
  });

  it("says a second document is one in PyYAML's words, not the parser library's API", () => {
    expect(() => loadYaml('a: 1\n---\nb: 2\n')).toThrow(
      new YamlSyntaxError('expected a single document in the stream, but found another document at line 2, column 1'),
    );
  });
});
