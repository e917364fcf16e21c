// The model registry Looper keeps in ~/.looper/models.json: what `detect-models --write` and
// `register-model` write, in Looper's format (sorted keys, two-space indent, a final newline).
import { accessSync, constants, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { makeDirs } from '@quickloop/cli-kit/dirs';
import { SpecError, isDict, pyJsonDumps, pyJsonLoads, type PyDict, type PyValue } from '@quickloop/loop-spec';

export function defaultRegistryPath(env: Record<string, string | undefined>): string {
  return join(env.HOME || homedir(), '.looper', 'models.json');
}

/** Looper's registry, or `{}` when the file does not exist yet. */
export function readRegistry(path: string): PyDict {
  if (!existsSync(path)) return Object.create(null) as PyDict;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new SpecError(`Could not read ${path}: ${(error as Error).message}`);
  }
  let data: PyValue;
  try {
    data = pyJsonLoads(text.startsWith('\uFEFF') ? text.slice(1) : text);
  } catch (error) {
    throw new SpecError(`Could not parse JSON in ${path}: ${(error as Error).message}`);
  }
  if (!isDict(data)) throw new SpecError(`Registry ${path} must contain a JSON object`);
  return data;
}

export function registryJson(registry: PyDict): string {
  return pyJsonDumps(registry, { indent: 2, sortKeys: true });
}

export function writeRegistry(path: string, registry: PyDict): void {
  try {
    makeDirs(dirname(path));
    writeFileSync(path, `${registryJson(registry)}\n`, 'utf8');
  } catch (error) {
    throw new SpecError(`Could not write ${path}: ${(error as Error).message}`);
  }
}

/**
 * Python's shutil.which on POSIX: the first PATH entry holding an executable non-directory of that
 * name, joined as PATH spells it; a name with a slash is checked as it stands.
 */
export function which(cmd: string, env: Record<string, string | undefined>, cwd: string): string | null {
  const usable = (candidate: string): boolean => {
    const full = candidate.startsWith('/') ? candidate : join(cwd, candidate);
    try {
      accessSync(full, constants.X_OK);
      return !statSync(full).isDirectory();
    } catch {
      return false;
    }
  };
  if (cmd.includes('/')) return usable(cmd) ? cmd : null;
  const path = env.PATH ?? '/bin:/usr/bin';
  if (path === '') return null;
  const seen = new Set<string>();
  for (const dir of path.split(delimiter)) {
    if (seen.has(dir)) continue;
    seen.add(dir);
    const name = dir === '' ? cmd : dir.endsWith('/') ? `${dir}${cmd}` : `${dir}/${cmd}`;
    if (usable(name)) return name;
  }
  return null;
}

// The registry stores invocation metadata only: a value that looks like a credential is refused
// before it can reach the disk.
const SECRET_PATTERNS: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{16,}/,
  /\bghp_[A-Za-z0-9]{20,}/,
  /\bxox[a-z]-[A-Za-z0-9-]{10,}/,
  /\bAKIA[0-9A-Z]{16}\b/,
  /\b(api[-_]?key|token|secret|password)\s*[=:]\s*\S{8,}/i,
];

export function rejectSecretMaterial(values: readonly string[], context: string): void {
  for (const value of values) {
    if (SECRET_PATTERNS.some((pattern) => pattern.test(value))) {
      throw new SpecError(
        `${context} looks like it contains a credential; the model registry must never store secrets. Configure auth in the CLI's own config or keychain instead.`,
      );
    }
  }
}
