// Loads one task file end to end: bytes → parse → schema → semantic rules → normalised payloads and lint findings.
import { describeValue, schemaFindings } from './schema.js';
import { duplicateName, lintTask } from './lint.js';
import { finding, type Finding, type Position } from './finding.js';
import { normalise, type TaskLoadedPayload } from './normalise.js';
import { parseSource, type Segment } from './parse.js';
import type { RawTask } from './raw.js';
import { mergeUnder, writtenIn } from './project-config.js';
import { semanticFindings } from './rules.js';
import { readSource, stdinSource, type SourceResult } from './source.js';

export interface LoadOptions {
  /** Registry endpoints (`host:port`) the shell may reach by default (discoverRegistries().endpoints). */
  registries: readonly string[];
  /** A project config's `tasks:` block, merged under every task (the task wins). */
  defaults?: { tasks: Record<string, unknown>; display: string; path: string; sha256: string };
}

export interface LoadedTask {
  payload: TaskLoadedPayload;
  /** Where the task's name is written, for findings that concern the task as a whole. */
  nameAt?: Position;
  /** Warnings and notes about this task. */
  findings: Finding[];
}

export interface FileResult {
  /** As given (`-` for stdin). */
  path: string;
  /** As shown to people (`stdin` for `-`). */
  display: string;
  /** False when any error was found: then no task of the file is loaded. */
  ok: boolean;
  tasks: LoadedTask[];
  /** Errors, earliest in the file first. */
  errors: Finding[];
}

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function loadTaskFile(path: string, cwd: string, opts: LoadOptions): Promise<FileResult> {
  return loadSource(readSource(path, cwd), opts);
}

export function loadTaskStdin(bytes: Buffer, cwd: string, opts: LoadOptions): Promise<FileResult> {
  return loadSource(stdinSource(bytes, cwd), opts);
}

export async function loadSource(read: SourceResult, opts: LoadOptions): Promise<FileResult> {
  if (!read.ok) return { path: read.path, display: read.display, ok: false, tasks: [], errors: [read.error] };
  const source = read.source;
  const base = { path: source.path, display: source.display };
  const failed = (errors: Finding[]): FileResult => ({ ...base, ok: false, tasks: [], errors });
  const parsed = parseSource(source);
  if (!parsed.ok) return failed([parsed.error]);
  const { value, locate } = parsed.parsed;

  let entries: { raw: unknown; prefix: Segment[] }[];
  if (value === null || value === undefined) return failed([finding('QS002', 'has no content (only comments); a task needs at least name, goal, docs and success')]);
  if (isMapping(value)) entries = [{ raw: value, prefix: [] }];
  else if (Array.isArray(value)) {
    // One task per file: a file's path is the task's identity in reports, and a list would make one
    // bad entry sink its siblings.
    return failed([finding('QS006', `the top level is a list (${value.length} item${value.length === 1 ? '' : 's'}); a task file holds one task mapping; put each task in its own file`, { at: locate([]) })]);
  } else {
    return failed([finding('QS006', `the top level must be a task mapping, got ${describeValue(value)}`, { at: locate([]) })]);
  }

  const errors: Finding[] = [];
  const tasks: LoadedTask[] = [];
  const names = new Map<string, string>();
  const defaults = opts.defaults;
  for (const { raw: own, prefix } of entries) {
    const raw = defaults && Object.keys(defaults.tasks).length > 0 ? mergeUnder(defaults.tasks, own as Record<string, unknown>) : own;
    // A field the task does not write came from the config: its finding says so rather than point into the task file.
    const fromConfig = (f: Finding): Finding => {
      if (!defaults || f.field === undefined) return f;
      const path = f.field.split(/\.|\[(\d+)\]/).filter((x) => x !== undefined && x !== '').map((x) => (/^\d+$/.test(x) ? Number(x) : x));
      if (writtenIn(own, path) || !writtenIn(defaults.tasks, path.slice(0, 1))) return f;
      const { line: _l, column: _c, ...rest } = f;
      return { ...rest, message: `${f.message} (set in ${defaults.display} tasks: ${f.field})` };
    };
    const schemaErrors = (await schemaFindings(raw, locate, prefix)).map(fromConfig);
    if (schemaErrors.length > 0) {
      errors.push(...schemaErrors);
      continue;
    }
    const task = raw as unknown as RawTask;
    const rules = semanticFindings(task, source, locate, prefix);
    if (rules.errors.length > 0) {
      errors.push(...rules.errors.map(fromConfig));
      continue;
    }
    const normalised = normalise(task, source, opts.registries, rules.successFile);
    const payload = defaults ? { ...normalised, source: { ...normalised.source, config: { path: defaults.path, sha256: defaults.sha256 } } } : normalised;
    const findings = [...rules.warnings, ...lintTask(task, payload, rules.successFile?.text, locate, prefix)];
    const here = prefix.length > 0 ? `${source.display} [${String(prefix[0])}]` : source.display;
    const dup = duplicateName(payload.task.name, names, here);
    if (dup) findings.push(finding('QS110', dup, { field: prefix.length ? `[${String(prefix[0])}].name` : 'name', at: locate([...prefix, 'name']), task: payload.task.name }));
    const nameAt = locate([...prefix, 'name']);
    tasks.push(nameAt ? { payload, findings, nameAt } : { payload, findings });
  }
  if (errors.length > 0) return failed(errors);
  return { ...base, ok: true, tasks, errors: [] };
}
