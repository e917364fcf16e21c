// The bundle's builtins required on first use (scripts/lazy-builtins.mjs): only where every use reads a
// property, so that the proxy behaves as the module would; anything else keeps the plain require.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
// @ts-expect-error a build script, plain JavaScript without types
import { lazyBuiltins } from '../../../scripts/lazy-builtins.mjs';

const require = createRequire(import.meta.url);
const transform = lazyBuiltins as (code: string) => string;
const lazy = (code: string, name: string): boolean => new RegExp(`^let ${name} = __lazyBuiltin\\(`, 'm').test(transform(code));

describe('lazyBuiltins', () => {
  it('makes a builtin lazy when the bundle only reads its properties', () => {
    const code = '"use strict";\nlet os = require("os");\nconst n = os.cpus().length;\nconst e = os.EOL;\n';
    const out = transform(code);
    expect(lazy(code, 'os')).toBe(true);
    // the helper goes at the end of the first line: no line moves, so the source map still holds
    expect(out.split('\n')).toHaveLength(code.split('\n').length);
    // and the proxy is the module, property by property
    const run = new Function('require', `${out}\nreturn e;`) as (r: NodeRequire) => string;
    expect(run(require)).toBe(require('node:os').EOL);
  });

  it('an object key of the name, and the name inside require("..."), are no uses of the variable', () => {
    expect(lazy('x\nlet assert = require("assert");\nconst shim = { assert: { ok: assert.ok } };\n', 'assert')).toBe(true);
  });

  it('keeps the plain require for a whole-value use, whatever text mentions the name', () => {
    // a message that reads like a property access must not cancel out a real use
    expect(lazy('x\nlet stream = require("stream");\nconst f = (s) => s instanceof stream;\nconst m = "stream.push() after EOF";\n', 'stream')).toBe(false);
    expect(lazy("x\nlet os = require(\"os\");\nconst n = Object.keys(os).length; // see 'os.EOL'\n", 'os')).toBe(false);
    expect(lazy('x\nlet os = require("os");\nconst t = `os.EOL is ${os}`;\n', 'os')).toBe(false);
    // shorthand is a use of the value too
    expect(lazy('x\nlet tty = require("tty");\nexport const m = { tty };\n', 'tty')).toBe(false);
  });

  it('keeps the plain require when the bundle writes to the module', () => {
    expect(lazy('x\nlet net = require("net");\nnet.foo = 1;\nnet.connect();\n', 'net')).toBe(false);
  });

  it('leaves a builtin Node loads at its own start alone', () => {
    expect(lazy('x\nlet fs = require("fs");\nfs.readFileSync("a");\n', 'fs')).toBe(false);
  });
});
