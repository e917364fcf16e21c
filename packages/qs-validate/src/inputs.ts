// Turns the arguments into task sources: files, directories, globs, `-`, or the default places when none are given.
import { readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '@quickloop/cli-kit/errors';
import { expandGlob, GLOB_CHARS } from './glob.js';

export const TASK_EXTENSIONS = /\.(ya?ml|json)$/i;

export type Input =
  | { kind: 'file'; path: string }
  | { kind: 'stdin' }
  /** Nothing to load where the user pointed: a directory or glob with no task files. */
  | { kind: 'none'; path: string; message: string };

const stat = (path: string): ReturnType<typeof statSync> | undefined => {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
};

/**
 * A name that is a task file's unless it is a folder: a broken link or a loop of links is one the
 * author meant to run, so it is loaded (and reported), never passed over in silence.
 */
const notDir = (path: string): boolean => stat(path)?.isDirectory() !== true;

/** Task files directly in a directory (not recursive), sorted; hidden files are skipped. */
export function taskFilesIn(dir: string, cwd: string): string[] {
  let names: string[];
  try {
    names = readdirSync(resolve(cwd, dir)).sort();
  } catch {
    return [];
  }
  return names.filter((n) => !n.startsWith('.') && TASK_EXTENSIONS.test(n) && notDir(resolve(cwd, dir, n))).map((n) => (dir === '.' ? n : join(dir, n)));
}

/**
 * In `./` a project keeps package.json, tsconfig.json and the like, so a file there counts as a
 * task only when it mentions both `goal` and `success`; tasks/ is taken whole.
 */
function looksLikeTask(path: string, cwd: string): boolean {
  try {
    const head = readFileSync(resolve(cwd, path), 'utf8').slice(0, 65536);
    return /\bgoal\b/.test(head) && /\bsuccess\b/.test(head);
  } catch {
    return false;
  }
}

export function resolveInputs(args: readonly string[], cwd: string): Input[] {
  if (args.length === 0) {
    const inTasks = taskFilesIn('tasks', cwd);
    if (inTasks.length > 0) return inTasks.map((path) => ({ kind: 'file', path }));
    const here = taskFilesIn('.', cwd).filter((p) => looksLikeTask(p, cwd));
    if (here.length > 0) return here.map((path) => ({ kind: 'file', path }));
    return [{ kind: 'none', path: '.', message: 'no task files found in tasks/ or ./ (looked for *.yaml, *.yml and *.json)' }];
  }
  if (args.filter((a) => a === '-').length > 1) throw new UsageError("'-' (stdin) can be given only once");
  const out: Input[] = [];
  const seen = new Set<string>();
  const push = (path: string): void => {
    // One file reached by two names (a link, a repeated argument) is one task, not two runs of it.
    let key = resolve(cwd, path);
    try {
      key = realpathSync(key);
    } catch {
      // missing: reported when it is loaded
    }
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ kind: 'file', path });
  };
  for (const arg of args) {
    if (arg === '-') {
      out.push({ kind: 'stdin' });
      continue;
    }
    const st = stat(resolve(cwd, arg));
    if (st?.isDirectory()) {
      const files = taskFilesIn(arg.replace(/[\\/]+$/, '') || '/', cwd);
      if (files.length === 0) out.push({ kind: 'none', path: arg, message: 'directory holds no task files (*.yaml, *.yml, *.json)' });
      files.forEach(push);
    } else if (!st && GLOB_CHARS.test(arg)) {
      const files = expandGlob(arg, cwd).filter((p) => TASK_EXTENSIONS.test(p) && notDir(resolve(cwd, p)));
      if (files.length === 0) out.push({ kind: 'none', path: arg, message: 'the pattern matches no task files (*.yaml, *.yml, *.json)' });
      files.forEach(push);
    } else push(arg);
  }
  return out;
}
