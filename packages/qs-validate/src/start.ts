// The bin's entry: runs the one-file bundle through a V8 code cache made at build time (Node 20 has no compile cache).
import { readFileSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/**
 * Compiling the bundle is most of a cold start. V8 checks the cache against the source and its own
 * version and flags, and compiles from scratch when they differ, so a stale cache is only slower.
 */
export async function start(): Promise<void> {
  const file = fileURLToPath(new URL('./bundle.cjs', import.meta.url));
  const cacheFile = `${file}.cache`;
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // no cache (a fresh checkout before its build finished): compile as usual
  }
  const script = new Script(Module.wrap(readFileSync(file, 'utf8')), { filename: file, ...(cachedData ? { cachedData } : {}) });
  const mod = { exports: {} as { main(): Promise<void> } };
  (script.runInThisContext() as (...args: unknown[]) => void)(mod.exports, createRequire(file), mod, file, dirname(file));
  await mod.exports.main();
  // The build runs the bin once with this set, so the cache holds the functions a real run compiles.
  if (process.env.QUICKLOOP_WRITE_CODE_CACHE === '1') writeFileSync(cacheFile, script.createCachedData());
  if (process.env.QUICKLOOP_DEBUG) process.stderr.write(`qs-validate: code cache ${cachedData ? (script.cachedDataRejected ? 'rejected' : 'used') : 'absent'}\n`);
}
