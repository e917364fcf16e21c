// Python semantics the resolved JSON depends on; every expected value was printed by CPython 3.11.
import { describe, expect, it } from 'vitest';
import { fnmatch, isRedactedPath } from './glob.js';
import { pyJsonDecodePrefix, pyJsonDumps, pyJsonLoads } from './py-json.js';
import { PyFloat, floatRepr, pyRepr } from './py.js';
import { ShlexError, shlexSplit } from './shlex.js';

describe('floatRepr', () => {
  it.each([
    [5.0, '5.0'],
    [2.5, '2.5'],
    [1e16, '1e+16'],
    [1.5e16, '1.5e+16'],
    [1e-5, '1e-05'],
    [0.0001, '0.0001'],
    [123456789.125, '123456789.125'],
    [1e22, '1e+22'],
    [-0.0, '-0.0'],
    [0.1 + 0.2, '0.30000000000000004'],
    [1500000.0, '1500000.0'],
    [3e-7, '3e-07'],
  ])('repr(%s) is %s', (x, text) => {
    expect(floatRepr(x)).toBe(text);
  });
});

describe('pyJsonDumps', () => {
  it('indents by 2, sorts keys by code point and escapes everything outside printable ASCII', () => {
    const value = { b: [1, {}], a: 'é😀\x7f\u2028"\\', A: [] };
    expect(pyJsonDumps(value, { indent: 2, sortKeys: true })).toBe(
      ['{', '  "A": [],', '  "a": "\\u00e9\\ud83d\\ude00\\u007f\\u2028\\"\\\\",', '  "b": [', '    1,', '    {}', '  ]', '}'].join('\n'),
    );
  });

  it('uses ", " and ": " on one line without indent, and Python float text', () => {
    expect(pyJsonDumps(['a', 'b c'])).toBe('["a", "b c"]');
    expect(pyJsonDumps({ z: 1, a: null }, { sortKeys: true })).toBe('{"a": null, "z": 1}');
    expect(pyJsonDumps({ usd: new PyFloat(5), n: new PyFloat(Infinity) }, { sortKeys: true })).toBe('{"n": Infinity, "usd": 5.0}');
  });
});

describe('pyJsonLoads with ordered dicts (what json.loads then json.dumps gives back)', () => {
  it('keeps every key where it came, integer-like keys too, and a repeated key where it first came with its last value', () => {
    const v = pyJsonLoads('{"b": 1, "10": 2, "2": 3, "a": {"9": 1, "x": 2}, "b": 4}', { ordered: true });
    expect(pyJsonDumps(v)).toBe('{"b": 4, "10": 2, "2": 3, "a": {"9": 1, "x": 2}}');
  });
  it('keeps floats floats and ints exact, NaN and Infinity included', () => {
    const text = '[1.0, 1e-7, 2.5e+20, -0.0, 1E5, 100.0, 1e16, 0.1e1, 12345678901234567890123, 1e400, NaN, -Infinity, 5e-324]';
    // json.dumps(json.loads(text)) in CPython 3.11:
    expect(pyJsonDumps(pyJsonLoads(text, { ordered: true }))).toBe('[1.0, 1e-07, 2.5e+20, -0.0, 100000.0, 100.0, 1e+16, 1.0, 12345678901234567890123, Infinity, NaN, -Infinity, 5e-324]');
  });
  it('indents an ordered dict as json.dumps(indent=2) does', () => {
    expect(pyJsonDumps(pyJsonLoads('{"z": [], "a": {}, "é": [1.5]}', { ordered: true }), { indent: 2 })).toBe('{\n  "z": [],\n  "a": {},\n  "\\u00e9": [\n    1.5\n  ]\n}');
  });
  it('decodes the value at the start and says where it ends, like JSONDecoder().raw_decode', () => {
    const { value, end } = pyJsonDecodePrefix('{"verdict": "pass"} trailing {', { ordered: true });
    expect(pyJsonDumps(value)).toBe('{"verdict": "pass"}');
    expect(end).toBe(19);
    expect(() => pyJsonDecodePrefix(' {"a": 1}')).toThrow(SyntaxError);
    expect(() => pyJsonLoads('{"a": 1} x')).toThrow(/Extra data/);
  });
});

describe('pyRepr', () => {
  it('quotes like Python', () => {
    expect(pyRepr("it's")).toBe('"it\'s"');
    expect(pyRepr('plain')).toBe("'plain'");
    expect(pyRepr('both \' "')).toBe("'both \\' \"'");
    expect(pyRepr(['x', "y'"])).toBe('[\'x\', "y\'"]');
    expect(pyRepr('tab\tx')).toBe("'tab\\tx'");
    expect(pyRepr(null)).toBe('None');
  });
});

describe('shlexSplit (POSIX mode)', () => {
  it.each([
    ['a b  c', ['a', 'b', 'c']],
    ['a "b c" d', ['a', 'b c', 'd']],
    ["a 'b \\\" c'", ['a', 'b \\" c']],
    ['a\\ b', ['a b']],
    ['"x\\"y\\z"', ['x"y\\z']],
    ["''", ['']],
    ['a""b', ['ab']],
    ["x 'y'z", ['x', 'yz']],
    ['\t a \n b', ['a', 'b']],
    ['', []],
  ])('%j splits to %j', (input, words) => {
    expect(shlexSplit(input)).toEqual(words);
  });

  it('refuses an unclosed quote and a trailing backslash', () => {
    expect(() => shlexSplit('a "b')).toThrow(ShlexError);
    expect(() => shlexSplit("a 'b")).toThrow('No closing quotation');
    expect(() => shlexSplit('a\\')).toThrow('No escaped character');
  });
});

describe('fnmatch and redaction paths', () => {
  it('matches like Python fnmatch: * crosses /, classes and negation work', () => {
    expect(fnmatch('a/b.key', '*.key')).toBe(true);
    expect(fnmatch('secrets/x/y', 'secrets/**')).toBe(true);
    expect(fnmatch('.env.local', '.env.*')).toBe(true);
    expect(fnmatch('x.env', '.env')).toBe(false);
    expect(fnmatch('f1', 'f[0-9]')).toBe(true);
    expect(fnmatch('f!', 'f[!0-9]')).toBe(true);
  });

  it('tries every path suffix, so a bare .env catches config/.env', () => {
    const globs = ['.env', '.env.*', 'secrets/**', '**/*.key'];
    expect(isRedactedPath('config/.env', globs)).toBe(true);
    expect(isRedactedPath('./deploy/secrets/db.txt', globs)).toBe(true);
    expect(isRedactedPath('certs/server.key', globs)).toBe(true);
    expect(isRedactedPath('inputs/notes.md', globs)).toBe(false);
    expect(isRedactedPath('env.md', globs)).toBe(false);
  });
});
