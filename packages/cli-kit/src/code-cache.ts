// A bin's entry: runs its one-file CommonJS bundle through the V8 code cache made at build time (Node 20 has no compile cache).
// Node builtins only: this module is loaded before anything else, on every start of every binary.
import { readFileSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { crc32 } from 'node:zlib';

/** Set by `scripts/bundle.mjs --code-cache` on its warm-up run, so the cache holds what a real run compiles. */
export const WRITE_CODE_CACHE_ENV = 'QUICKLOOP_WRITE_CODE_CACHE';

/**
 * A loop binary's launcher (its bin, run as a shell script) starts Node without NODE_EXTRA_CA_CERTS and
 * keeps the value here; startBundle() puts it back before the bundle runs, for the processes it starts.
 */
export const DEFERRED_CA_CERTS_ENV = 'QUICKLOOP_NODE_EXTRA_CA_CERTS';

/** What happened to `<bundle>.cache` on this start; `QUICKLOOP_DEBUG` prints it on stderr. */
export type CodeCacheState = 'used' | 'rejected' | 'stale' | 'absent';

/** The cache file is this many bytes of key (cacheKey), then V8's data. */
const KEY_BYTES = 12;

/**
 * The bundle's CRC-32 and length. A check against accidents (a rebuild beside an old cache, a cache
 * copied from elsewhere), not against someone who can write the bin's own folder, who could change
 * the bundle itself: CRC-32 reads a 4 MB bundle in about half the time SHA-256 took, on every start.
 */
export function cacheKey(bytes: Buffer): Buffer {
  const key = Buffer.alloc(KEY_BYTES);
  key.writeUInt32BE(crc32(bytes), 0);
  key.writeBigUInt64BE(BigInt(bytes.length), 4);
  return key;
}

/**
 * Loads `bundle` (a CommonJS file exporting `main()`) and awaits its `main()`. Compiling the bundle is
 * most of a cold start. V8 checks a cache only against the source's length (a cache made for another
 * bundle of the same length is accepted, and runs that bundle's functions), so the file is keyed by
 * the bundle's checksum: a missing, foreign or stale cache is only slower, never wrong.
 */
export async function startBundle(bundle: URL): Promise<void> {
  const deferred = process.env[DEFERRED_CA_CERTS_ENV];
  if (deferred !== undefined) {
    // Only where it is missing: started as `node bin/x.js`, the variable Node loaded is the one in force.
    process.env.NODE_EXTRA_CA_CERTS ??= deferred;
    delete process.env[DEFERRED_CA_CERTS_ENV];
  }
  const file = fileURLToPath(bundle);
  const cacheFile = `${file}.cache`;
  const bytes = readFileSync(file);
  const key = cacheKey(bytes);
  let state: CodeCacheState = 'absent';
  let cachedData: Buffer | undefined;
  try {
    const cache = readFileSync(cacheFile);
    if (cache.length > KEY_BYTES && key.equals(cache.subarray(0, KEY_BYTES))) cachedData = cache.subarray(KEY_BYTES);
    else state = 'stale';
  } catch {
    // no cache (a build whose warm-up failed, or a copy without it): compile as usual
  }
  const script = new Script(Module.wrap(bytes.toString('utf8')), { filename: file, ...(cachedData ? { cachedData } : {}) });
  if (cachedData) state = script.cachedDataRejected ? 'rejected' : 'used';
  if (process.env[WRITE_CODE_CACHE_ENV] === '1') {
    // on exit, not after main(): a run may end through process.exit (yargs' --help does)
    process.once('exit', () => writeFileSync(cacheFile, Buffer.concat([key, script.createCachedData()])));
  }
  if (process.env.QUICKLOOP_DEBUG) process.stderr.write(`${binName()}: code cache ${state}\n`);
  const mod = { exports: {} as { main(): Promise<void> } };
  (script.runInThisContext() as (...args: unknown[]) => void)(mod.exports, createRequire(file), mod, file, dirname(file));
  await mod.exports.main();
}

function binName(): string {
  return basename(process.argv[1] ?? 'node').replace(/\.[cm]?js$/, '');
}
