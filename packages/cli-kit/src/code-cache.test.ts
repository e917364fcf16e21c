// startBundle in a real Node process: the warm-up writes a cache the next start uses; a missing, foreign or stale cache is only slower.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cacheKey } from './code-cache.js';

const CODE_CACHE = new URL('../dist/code-cache.js', import.meta.url).href;

/** A bundle the way scripts/bundle.mjs writes one: CommonJS, exporting main(), using require and __filename. */
const bundleSource = (greeting: string) =>
  `exports.main = async function main() {\n` +
  `  const { basename } = require('node:path');\n` +
  `  process.stdout.write(${JSON.stringify(greeting)} + ' from ' + basename(__filename) + ' ' + process.argv.slice(2).join(',') + '\\n');\n` +
  `  if (process.argv.includes('--exit')) process.exit(0);\n` +
  `};\n`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cli-kit-code-cache-'));
  writeFileSync(join(dir, 'bundle.cjs'), bundleSource('hello'));
  writeFileSync(join(dir, 'tool.mjs'), `import { startBundle } from ${JSON.stringify(CODE_CACHE)};\nawait startBundle(new URL('./bundle.cjs', import.meta.url));\n`);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const start = (args: string[] = [], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [join(dir, 'tool.mjs'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, QUICKLOOP_DEBUG: '1', QUICKLOOP_WRITE_CODE_CACHE: '', ...env },
    timeout: 30_000,
  });
const cacheFile = () => join(dir, 'bundle.cjs.cache');

describe('startBundle', () => {
  it('runs the bundle without a cache, and its warm-up writes the cache the next start uses', () => {
    const absent = start(['a']);
    expect(absent.status).toBe(0);
    expect(absent.stdout).toBe('hello from bundle.cjs a\n');
    expect(absent.stderr).toBe('tool: code cache absent\n');
    expect(() => readFileSync(cacheFile())).toThrow();

    expect(start(['a'], { QUICKLOOP_WRITE_CODE_CACHE: '1' }).status).toBe(0);
    expect(readFileSync(cacheFile()).length).toBeGreaterThan(0);
    const used = start(['b']);
    expect(used.stdout).toBe('hello from bundle.cjs b\n');
    expect(used.stderr).toBe('tool: code cache used\n');
  });

  it('writes the cache when the run ends through process.exit', () => {
    expect(start(['--exit'], { QUICKLOOP_WRITE_CODE_CACHE: '1' }).stdout).toBe('hello from bundle.cjs --exit\n');
    expect(start().stderr).toBe('tool: code cache used\n');
  });

  it('compiles from the source when the cache is not V8 data, belongs to another source, or is stale', () => {
    const key = () => cacheKey(readFileSync(join(dir, 'bundle.cjs')));
    writeFileSync(cacheFile(), 'not a code cache');
    const garbage = start(['w']);
    expect([garbage.status, garbage.stdout, garbage.stderr]).toEqual([0, 'hello from bundle.cjs w\n', 'tool: code cache stale\n']);

    // keyed to this bundle, but not data V8 made: V8 itself refuses it
    writeFileSync(cacheFile(), Buffer.concat([key(), Buffer.from('not a code cache')]));
    const rejected = start(['x']);
    expect([rejected.status, rejected.stdout, rejected.stderr]).toEqual([0, 'hello from bundle.cjs x\n', 'tool: code cache rejected\n']);

    writeFileSync(cacheFile(), Buffer.concat([key(), new Script('exports.main = async () => {};').createCachedData()]));
    const foreign = start(['y']);
    expect([foreign.status, foreign.stdout, foreign.stderr]).toEqual([0, 'hello from bundle.cjs y\n', 'tool: code cache rejected\n']);

    // A rebuild whose warm-up did not run leaves the old cache beside the new bundle. Same length on
    // purpose: V8 alone would accept that cache and run the old main().
    expect(start([], { QUICKLOOP_WRITE_CODE_CACHE: '1' }).status).toBe(0);
    writeFileSync(join(dir, 'bundle.cjs'), bundleSource('HELLO'));
    const stale = start(['z']);
    expect([stale.status, stale.stdout, stale.stderr]).toEqual([0, 'HELLO from bundle.cjs z\n', 'tool: code cache stale\n']);
  });
});

describe('the subpath', () => {
  it('is exported as @quickloop/cli-kit/code-cache', async () => {
    const mod = await import('@quickloop/cli-kit/code-cache');
    expect(fileURLToPath(import.meta.resolve('@quickloop/cli-kit/code-cache'))).toBe(fileURLToPath(CODE_CACHE));
    expect(typeof mod.startBundle).toBe('function');
  });
});
