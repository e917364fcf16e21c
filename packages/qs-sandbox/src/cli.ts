// qs-sandbox's command line: flags to SandboxStageOptions, then run() under runBin.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { logLevel, parseArgs, runBin, UsageError, type Io } from '@quickloop/cli-kit';
import { allowRegistry, DEFAULT_LIMITS, installCacheDir, limitsFromFlags, type BackendChoice } from '@quickloop/sandbox';
import { run } from './run.js';

export { VERSION } from './version.generated.js';
import { VERSION } from './version.generated.js';

export async function cli(argv: string[], io: Io): Promise<number> {
  const args = parseArgs(argv, { name: 'qs-sandbox', version: VERSION, usage: '$0 [--backend auto|bwrap|local] [--allow-registry HOST]... [--keep] [--install-cache DIR] [--max-processes N] [--max-memory SIZE] [--max-tmp SIZE] [--max-shm SIZE] < events', out: io.stdout }, (y) =>
    y
      .option('backend', { type: 'string', default: 'auto', choices: ['auto', 'bwrap', 'local'], describe: 'Sandbox backend; auto picks the best available and says why' })
      .option('allow-unenforced', { type: 'boolean', default: false, describe: 'Allow the local backend, which enforces nothing' })
      .option('allow-registry', { type: 'string', array: true, default: [] as string[], describe: 'Also allow this registry: a URL, HOST:PORT, or HOST (port 443) (repeatable)' })
      .option('keep', { type: 'boolean', default: false, describe: 'Keep the workspace after the last stage' })
      .option('base-dir', { type: 'string', describe: 'Make workspaces under this folder (default: the OS temp folder)' })
      .option('install-cache', { type: 'string', describe: "Copy this install cache's verified npm blobs and pip files into each new home's caches before setup (qs run --install-cache)" })
      .option('max-processes', { type: 'string', describe: `Processes alive at once in the sandbox (default ${DEFAULT_LIMITS.processes})` })
      .option('max-memory', { type: 'string', describe: 'Memory of the whole sandbox, its tmpfs included (default 4G)' })
      .option('max-tmp', { type: 'string', describe: 'Size of /tmp and of /var/tmp, each (default 1G)' })
      .option('max-shm', { type: 'string', describe: 'Size of /dev/shm (default 256M)' }),
  );
  const limits = limitsFromFlags(args);
  return run(
    {
      backend: args.backend as BackendChoice,
      allowUnenforced: args['allow-unenforced'],
      allowRegistries: args['allow-registry'].map((h) => allowRegistry(String(h))),
      keep: args.keep,
      ...(args['base-dir'] ? { baseDir: baseDir(String(args['base-dir']), io.cwd) } : {}),
      ...(args['install-cache'] !== undefined ? { installCache: installCacheDir(String(args['install-cache']), io.cwd) } : {}),
      ...(Object.keys(limits).length > 0 ? { limits } : {}),
      level: logLevel(args),
    },
    io,
  );
}

/** `--base-dir` must be a folder that exists: a typo must not become a tree of folders elsewhere, nor a failed run per task. */
export function baseDir(value: string, cwd: string): string {
  const dir = resolve(cwd, value);
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    throw new UsageError(`--base-dir ${value}: no such folder`);
  }
  if (!isDir) throw new UsageError(`--base-dir ${value}: not a folder`);
  return dir;
}

export async function main(): Promise<void> {
  await runBin(cli, { name: 'qs-sandbox', family: 'qs' });
}
