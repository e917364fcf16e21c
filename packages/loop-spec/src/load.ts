// Reading specs from disk: loop.yaml compiled in memory, or loop.resolved.json exactly as Looper wrote it.
import { readFileSync, realpathSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { compileSpec, lintSpecText, type CompileOptions, type LintResult } from './compile.js';
import { SpecError } from './errors.js';
import type { LintOptions } from './lint.js';
import { pyJsonLoads } from './py-json.js';
import { isDict, toPlain, type PyDict, type PyValue } from './py.js';
import type { CompileResult, ResolvedSpec } from './types.js';

const ERRNO: Record<string, [number, string]> = {
  ENOENT: [2, 'No such file or directory'],
  EACCES: [13, 'Permission denied'],
  EISDIR: [21, 'Is a directory'],
  ENOTDIR: [20, 'Not a directory'],
  ELOOP: [40, 'Too many levels of symbolic links'],
};

/** Looper resolves the spec path (symlinks too) before reading it and names it that way in errors. */
export function absoluteSpecPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolvePath(path);
  }
}

/** Reads a UTF-8 file; failures read like Python's OSError text: `Could not read <path>: [Errno 2] …`. */
export function readSpecText(path: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    const known = ERRNO[code];
    const detail = known ? `[Errno ${known[0]}] ${known[1]}: ${pyQuote(path)}` : (error as Error).message;
    throw new SpecError(`Could not read ${path}: ${detail}`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new SpecError(`Could not parse YAML in ${path}: the file is not valid UTF-8`);
  }
}

function pyQuote(s: string): string {
  return s.includes("'") && !s.includes('"') ? `"${s}"` : `'${s.replaceAll("'", "\\'")}'`;
}

/** Compiles a loop.yaml file. `displayPath` (what the user typed) is used for `file:line` locations. */
export function compileFile(path: string, options: Omit<CompileOptions, 'path'> = {}): CompileResult {
  const source = absoluteSpecPath(path);
  return compileSpec(readSpecText(source), { displayPath: path, ...options, path: source });
}

export function lintFile(path: string, options: Omit<CompileOptions, 'path'> & LintOptions = {}): LintResult {
  const source = absoluteSpecPath(path);
  return lintSpecText(readSpecText(source), { displayPath: path, ...options, path: source });
}

/** The fields the runner contract says a runner must refuse to guess: missing, the run stops before any work. */
const REQUIRED: readonly string[][] = [
  ['goal', 'statement'],
  ['gates', 'plan_gate'],
  ['gates', 'delivery_gate'],
  ['loop_control', 'max_iterations'],
  ['workspace', 'dir'],
  ['host', 'invoke'],
];

/** Throws SpecError naming the first missing required field, before any work (and any paid call). */
export function assertRunnable(spec: Record<string, unknown>, name = 'loop.resolved.json'): asserts spec is ResolvedSpec {
  for (const path of REQUIRED) {
    let node: unknown = spec;
    for (const key of path) {
      node = node !== null && typeof node === 'object' && !Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined;
    }
    if (node === undefined || node === null) throw new SpecError(`${name} is missing required field: ${path.join('.')}`);
  }
}

export interface LoadedSpec {
  spec: ResolvedSpec;
  /** The absolute spec path; its directory is the loop directory. */
  path: string;
  /** True when the input was loop.yaml, compiled in memory. */
  compiled: boolean;
}

/**
 * Loads what a runner is given: a loop.resolved.json written by Looper's compiler or ours (used as
 * is, BOM tolerated), or a loop.yaml (compiled in memory, nothing written).
 */
export function loadResolved(path: string, options: Omit<CompileOptions, 'path'> = {}): LoadedSpec {
  const absolute = absoluteSpecPath(path);
  if (/\.ya?ml$/i.test(absolute)) {
    const { resolved } = compileFile(path, options);
    return { spec: resolved, path: absolute, compiled: true };
  }
  const raw = readSpecText(absolute);
  let data: unknown;
  try {
    // Python's json, as Looper's runner reads it: `.inf` and `.nan` in a loop.yaml are written as
    // Infinity and NaN, which JSON.parse refuses.
    data = toPlain(pyJsonLoads(raw.startsWith('\uFEFF') ? raw.slice(1) : raw));
  } catch (error) {
    throw new SpecError(`Could not parse JSON in ${absolute}: ${(error as Error).message}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new SpecError(`${absolute} must contain a JSON object`);
  const spec = data as Record<string, unknown>;
  assertRunnable(spec);
  return { spec, path: absolute, compiled: false };
}

/**
 * Looper's `load_json` for `session-prompt`: the resolved JSON with Python's values (floats stay
 * floats), a BOM tolerated, and Looper's error texts.
 */
export function readResolvedForRender(path: string): PyDict {
  const raw = readSpecText(path);
  let data: PyValue;
  try {
    data = pyJsonLoads(raw.startsWith('\uFEFF') ? raw.slice(1) : raw);
  } catch (error) {
    throw new SpecError(`Could not parse JSON in ${path}: ${(error as Error).message}`);
  }
  if (!isDict(data)) throw new SpecError(`${path} must contain a JSON object`);
  return data;
}
