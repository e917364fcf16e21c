// The bundle's Node builtins, required on first use where that is safe. Used by scripts/bundle.mjs; tested in packages/cli-kit/src/lazy-builtins.test.ts.
/**
 * rolldown requires every Node builtin the bundle imports at its top, before main() runs: --help then
 * loads child_process (with net, dgram and the streams) and the like for nothing. A builtin Node's own
 * start does not load becomes a proxy that requires it on first use, when the bundle only ever reads
 * its properties (`x.spawn`); any other use keeps the plain require.
 */
export function lazyBuiltins(code) {
  const LAZY = new Set(['assert', 'child_process', 'dgram', 'http', 'https', 'net', 'os', 'perf_hooks', 'readline', 'stream', 'string_decoder', 'tty', 'worker_threads', 'zlib']);
  let used = false;
  const text = code.replace(/^let ([\w$]+) = require\("((?:node:)?([\w/]+))"\);\n(?:\1 = __toESM\(\1, 1\);\n)?/gm, (line, name, id, bare) => {
    if (!LAZY.has(bare)) return line;
    const toEsm = line.includes('__toESM');
    const re = name.replace(/\$/g, '\\$');
    // A name just after a quote is text, not a use, for both counts: `require("os")` names the module
    // its variable `os` holds, and "stream.push() after EOF" is a message.
    const uses = code.match(new RegExp(`(?<![\\w$."'\`])${re}(?![\\w$])`, 'g'))?.length ?? 0;
    const dotted = code.match(new RegExp(`(?<![\\w$."'\`])${re}\\.[\\w$]`, 'g'))?.length ?? 0;
    // an object key of the same name (`{ assert: {...} }`, yargs' platform shim) is no use of the variable
    const keys = code.match(new RegExp(`(?<=[{,]\\s*)${re}\\s*:`, 'g'))?.length ?? 0;
    // a write (`x.foo = ...`) would land on the proxy, not on the module
    const written = new RegExp(`(?<![\\w$.])${re}\\.[\\w$]+\\s*(?:[-+*/|&]?=(?!=)|\\+\\+|--)`).test(code);
    if (written || uses - keys - (toEsm ? 3 : 1) !== dotted) return line;
    used = true;
    return `let ${name} = __lazyBuiltin(${JSON.stringify(id)}, ${toEsm});\n${toEsm ? '\n' : ''}`;
  });
  if (!used) return code;
  const helper = 'var __lazyBuiltin = (id, esm) => { let m; return new Proxy({}, { get: (_, k) => { m ??= require(id); return esm && k === "default" ? m : m[k]; } }); };';
  // at the end of the first line, so that no line moves and the source map still holds
  return text.replace(/^[^\n]*/, (first) => `${first} ${helper}`);
}
