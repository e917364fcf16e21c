// quickloop.yaml: a project's defaults, found from the working folder upward. `tasks:` is merged under
// every task file; `run:` fills qs run flags that were not typed. Settings that change what a result
// means (the agent, the model, repeats, affordances, what the sandbox enforces) are refused here:
// they stay on the command line, where a reader of the command sees them.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { InputError } from '@quickloop/cli-kit/errors';
import { located } from './finding.js';
import { parseSource } from './parse.js';

export const CONFIG_NAMES = ['quickloop.yaml', 'quickloop.yml'] as const;

/** `run:` keys and the kind of value each takes. */
export const RUN_SETTINGS = {
  backend: 'backend',
  workers: 'count',
  out: 'path',
  junit: 'path',
  summary: 'path',
  docs_map: 'list',
  allow_registry: 'list',
  keep_sandbox: 'boolean',
  prices: 'path',
  cache_dir: 'path',
  install_cache: 'path',
  rate_limit: 'seconds',
} as const;

/** Refused in `run:` with the reason, so a stranger learns where the setting goes instead. */
const MEANINGFUL = ['agent', 'model', 'base_url', 'repeat', 'affordances', 'probe_affordances', 'strict_inconclusive', 'allow_unenforced', 'max_spend', 'ignore_robots', 'offline', 'refresh', 'from', 'example'];

export type RunSettings = Partial<{
  backend: 'auto' | 'bwrap' | 'local';
  workers: number;
  out: string;
  junit: string;
  summary: string;
  docs_map: string[];
  allow_registry: string[];
  keep_sandbox: boolean;
  prices: string;
  cache_dir: string;
  install_cache: string;
  rate_limit: number;
}>;

export interface ProjectConfig {
  /** The file, absolute. */
  path: string;
  /** As shown to people: relative to the working folder. */
  display: string;
  sha256: string;
  run: RunSettings;
  /** Merged under each task (the task wins; mappings merge, lists and scalars replace). */
  tasks: Record<string, unknown>;
}

/** The nearest quickloop.yaml from `cwd` up to the root, or undefined. */
export function findProjectConfig(cwd: string): string | undefined {
  let dir = resolve(cwd);
  for (;;) {
    for (const name of CONFIG_NAMES) {
      const file = join(dir, name);
      if (existsSync(file) && statSync(file).isFile()) return file;
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads and checks a config file; every problem is an InputError naming file:line:col. */
export function loadProjectConfig(path: string, cwd: string): ProjectConfig {
  const display = relative(cwd, path) || path;
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new InputError(`${display}: cannot read it: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const parsed = parseSource({ path, display, text: bytes.toString('utf8'), format: 'yaml', sha256: '' } as never);
  if (!parsed.ok) throw new InputError(located(display, parsed.error));
  const { value, locate } = parsed.parsed;
  const fail = (at: readonly (string | number)[], message: string, key = false): never => {
    const p = locate(at, key);
    throw new InputError(`${display}${p ? `:${p.line}:${p.column}` : ''}: ${message}`);
  };
  const doc = value ?? {};
  if (!isMapping(doc)) fail([], 'the top level must be a mapping with run: and/or tasks:');
  const top = doc as Record<string, unknown>;
  for (const key of Object.keys(top)) if (key !== 'run' && key !== 'tasks') fail([key], `unknown key '${key}' (the keys are run and tasks)`, true);
  const runRaw = top.run ?? {};
  const tasks = top.tasks ?? {};
  if (!isMapping(runRaw)) fail(['run'], 'run: must be a mapping of qs run settings');
  if (!isMapping(tasks)) fail(['tasks'], 'tasks: must be a mapping of task fields, merged under every task');
  const run: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(runRaw as Record<string, unknown>)) {
    const at = ['run', key];
    // Spelt as its flag (`strict-inconclusive`), a setting is still that setting to the reader.
    const snake = key.replace(/-/g, '_');
    if (MEANINGFUL.includes(snake)) fail(at, `run.${key}: settings that change what a result means stay on the command line (--${snake.replace(/_/g, '-')})`, true);
    const kind = (RUN_SETTINGS as Record<string, string>)[key];
    const spelt = snake !== key && snake in RUN_SETTINGS ? `; the file spells it ${snake}` : '';
    if (kind === undefined) fail(at, `run.${key}: unknown setting${spelt} (known: ${Object.keys(RUN_SETTINGS).join(', ')})`, true);
    switch (kind) {
      case 'backend':
        if (v !== 'auto' && v !== 'bwrap' && v !== 'local') fail(at, `run.${key}: must be auto, bwrap or local`);
        run[key] = v;
        break;
      case 'count':
        if (!Number.isInteger(v) || (v as number) < 1 || (v as number) > 64) fail(at, `run.${key}: must be a whole number from 1 to 64`);
        run[key] = v;
        break;
      case 'seconds':
        if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) fail(at, `run.${key}: must be a number of seconds, 0 or more`);
        run[key] = v;
        break;
      case 'boolean':
        if (typeof v !== 'boolean') fail(at, `run.${key}: must be true or false`);
        run[key] = v;
        break;
      case 'path':
        if (typeof v !== 'string' || v === '') fail(at, `run.${key}: must be a path`);
        // Relative to the config file, so the setting means the same from any subfolder.
        run[key] = resolve(dirname(path), v as string);
        break;
      case 'list': {
        const list = Array.isArray(v) ? v : [v];
        if (!list.every((x) => typeof x === 'string' && x !== '')) fail(at, `run.${key}: must be a string or a list of strings`);
        run[key] = key === 'docs_map' ? (list as string[]).map((m) => docsMapFromConfig(m, dirname(path))) : list;
        break;
      }
    }
  }
  return { path, display, sha256: createHash('sha256').update(bytes).digest('hex'), run: run as RunSettings, tasks: tasks as Record<string, unknown> };
}

/** A docs map's folder is relative to the config file, like every path in it. */
function docsMapFromConfig(spec: string, base: string): string {
  const eq = spec.lastIndexOf('=');
  if (eq <= 0) return spec;
  return `${spec.slice(0, eq)}=${resolve(base, spec.slice(eq + 1))}`;
}

/** `defaults` under `task`: the task wins; mappings merge key by key, lists and scalars replace. */
export function mergeUnder(defaults: Record<string, unknown>, task: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...defaults };
  for (const [k, v] of Object.entries(task)) {
    const d = out[k];
    out[k] = isMapping(d) && isMapping(v) ? mergeUnder(d, v) : v;
  }
  return out;
}

/** True when the task itself writes the field at `path` (else it came from the config). */
export function writtenIn(task: unknown, path: readonly (string | number)[]): boolean {
  let node: unknown = task;
  for (const seg of path) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node as object, seg)) return false;
    node = (node as Record<string | number, unknown>)[seg];
  }
  return true;
}
