#!/usr/bin/env node
// Builds a binary's start-up: its dist/cli.js as one file, and the V8 code cache its bin starts from.
// Node spends most of a short run resolving and loading hundreds of small modules (one file cuts a cold
// start by about half), then compiling them (the cache skips most of what is left).
//
// Usage, from a package folder after tsc:  node ../../scripts/bundle.mjs [--stdin <file>] [--in-copy-of <dir>] -- [<warm-up args>]
// Writes dist/bundle.cjs (CommonJS: only a vm.Script takes a code cache on Node 20), then runs the package's
// bin once with <warm-up args> (stdin from <file>, or empty); that run writes dist/bundle.cjs.cache, so the
// cache holds what a real run compiles. The bin is startBundle() from @quickloop/cli-kit/code-cache.
// A cache made by `--help` covers only --help: every function of a real run is then compiled on every
// start. --in-copy-of runs the warm-up in a temporary copy of <dir> (its cwd, removed afterwards), so a
// binary that writes where it runs (loop-run's workspace) can warm up on a real, offline fixture.
// It also writes dist/code-cache.cjs, startBundle() as CommonJS, for a bin that is itself CommonJS (a
// bin/package.json of type commonjs): Node starts a CommonJS entry sooner than an ES module, and
// resolves a relative file sooner than a package name.
// A warm-up must be harmless and offline. One that fails leaves no cache (the bin is only slower) and a
// one-line note; it never fails the build.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { rolldown } from 'rolldown';
import { lazyBuiltins } from './lazy-builtins.mjs';

const USAGE = 'usage: node ../../scripts/bundle.mjs [--entry <dist file> --bin <bin file>] [--stdin <file>] [--in-copy-of <dir>] -- [<warm-up args>]';
const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const own = dash === -1 ? argv : argv.slice(0, dash);
let stdinFile;
let copyOf;
let entry;
let entryBin;
for (let i = 0; i < own.length; i++) {
  if (own[i] === '--stdin' && own[i + 1] !== undefined) stdinFile = own[++i];
  else if (own[i] === '--in-copy-of' && own[i + 1] !== undefined) copyOf = own[++i];
  else if (own[i] === '--entry' && own[i + 1] !== undefined) entry = own[++i];
  else if (own[i] === '--bin' && own[i + 1] !== undefined) entryBin = own[++i];
  else fail(`unknown argument ${own[i]}`);
}
if ((entry === undefined) !== (entryBin === undefined)) fail('--entry and --bin go together');
if (dash === -1) fail('the warm-up args (after --) are missing');
const warmUpArgs = argv.slice(dash + 1);

/**
 * string-width (yargs' help layout) makes, when it loads, an Intl.Segmenter (ICU's break-iterator data)
 * and the regular expression /^\p{RGI_Emoji}$/v (every emoji sequence): 50-60 ms of CPU on every start
 * of every binary, for help text a pipeline stage never prints. Both are made on first use instead;
 * a dependency whose lines differ is left as it is (only slower).
 */
function lazyUnicode() {
  const segmenter = /^const (\w+) = new Intl\.Segmenter\(\);$/m;
  const emoji = /^const (\w+) = (\/[^\n]*\\p\{RGI_Emoji\}[^\n]*\/v);$/m;
  return {
    name: 'lazy-unicode',
    transform(code, id) {
      if (!id.includes('node_modules')) return null;
      // Only where the name (outside comment lines) is used through the one method its stand-in offers.
      const onlyThrough = (text, name, method) => {
        const lines = text.split('\n').filter((l) => !/^\s*(\/\/|\/\*|\*)/.test(l));
        const count = (re) => lines.reduce((n, l) => n + (l.match(re)?.length ?? 0), 0);
        return count(new RegExp(`\\b${name}\\b`, 'g')) - 1 === count(new RegExp(`\\b${name}\\.${method}\\(`, 'g'));
      };
      let out = code;
      // One line for one line: the source map (map: null keeps the incoming one) stays right.
      const s = segmenter.exec(out);
      if (s && onlyThrough(out, s[1], 'segment')) {
        out = out.replace(segmenter, (_, name) => `let ${name}$made; const ${name} = { segment: (text) => (${name}$made ??= new Intl.Segmenter()).segment(text) };`);
      }
      const e = emoji.exec(out);
      if (e && onlyThrough(out, e[1], 'test')) {
        out = out.replace(emoji, (_, name, literal) => `let ${name}$made; const ${name} = { test: (text) => (${name}$made ??= ${literal}).test(text) };`);
      }
      return out === code ? null : { code: out, map: null };
    },
  };
}

function fail(message) {
  console.error(`bundle: ${message}; ${USAGE}`);
  process.exit(3);
}

// The package's one bin from dist/cli.js, or (--entry) another start-up a package keeps beside it, not
// on anyone's PATH: dist/x.js becomes dist/x.cjs, started by the --bin file.
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const bins = Object.entries(typeof pkg.bin === 'string' ? { [pkg.name]: pkg.bin } : (pkg.bin ?? {}));
if (entry === undefined && bins.length !== 1) fail(`${pkg.name} has ${bins.length} bins; the warm-up needs exactly one`);
const [name, bin] = entry === undefined ? bins[0] : [entryBin, entryBin];

const out = entry === undefined ? 'dist/bundle.cjs' : entry.replace(/\.js$/, '.cjs');
if (out === entry) fail(`--entry ${entry}: not a .js file`);
const cache = `${out}.cache`;
rmSync(cache, { force: true });
// import.meta.url becomes the bundle's own file URL (rolldown on platform node); nothing else of import.meta is used
const bundle = await rolldown({ input: entry ?? 'dist/cli.js', platform: 'node', logLevel: 'warn', checks: { emptyImportMeta: false }, plugins: [lazyUnicode()] });
// ASCII output, without doc comments: the file is read and decoded on every start, and a source with
// any other character decodes several times slower (to a two-byte string twice the size). Licences stay.
await bundle.write({ file: out, format: 'cjs', codeSplitting: false, sourcemap: true, charset: 'ascii', comments: { legal: true, annotation: false, jsdoc: false } });
await bundle.close();
writeFileSync(out, lazyBuiltins(readFileSync(out, 'utf8')));
const startUp = await rolldown({ input: createRequire(resolve('package.json')).resolve('@quickloop/cli-kit/code-cache'), platform: 'node', logLevel: 'warn' });
await startUp.write({ file: 'dist/code-cache.cjs', format: 'cjs', codeSplitting: false });
await startUp.close();

// Our own temporary folder, and only it, is removed after the warm-up.
const scratch = copyOf === undefined ? undefined : mkdtempSync(join(tmpdir(), 'quickloop-warm-up-'));
if (scratch !== undefined) cpSync(copyOf, scratch, { recursive: true });
const run = spawnSync(process.execPath, [resolve(bin), ...warmUpArgs], {
  ...(scratch !== undefined ? { cwd: scratch } : {}),
  input: stdinFile === undefined ? '' : readFileSync(stdinFile),
  env: { ...process.env, QUICKLOOP_WRITE_CODE_CACHE: '1', NO_COLOR: '1' },
  stdio: ['pipe', 'ignore', 'pipe'],
  timeout: 60_000,
});
if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
if (run.status !== 0) {
  rmSync(cache, { force: true });
  const why = String(run.stderr ?? '').trim().split('\n').pop() || run.error?.message || '';
  console.error(`bundle: the warm-up \`${name} ${warmUpArgs.join(' ')}\` ended with ${run.status ?? run.signal}${why ? ` (${why})` : ''}; ${name} works, without a code cache`);
}

