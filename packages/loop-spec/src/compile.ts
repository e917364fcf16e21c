// compileSpec / lintSpecText: loop.yaml text in; the resolved spec, its JSON, LOOP.md, RUN_IN_SESSION.md out.
import { resolve as resolvePath } from 'node:path';
import { SpecError } from './errors.js';
import { findPlaceholders, lintSpec, type LintOptions } from './lint.js';
import { normalizeSpec } from './normalize.js';
import { pyJsonDumps } from './py-json.js';
import { get, isDict, toPlain, truthy, type PyDict, type PyValue } from './py.js';
import { renderLoopMd } from './render-loop.js';
import { renderRunInSessionMd } from './render-session.js';
import type { CompileResult, Finding, ResolvedSpec } from './types.js';
import { YamlSyntaxError, loadYaml, type LineIndex } from './yaml-load.js';

export interface CompileOptions {
  /** The spec's path: made absolute for `source` and the error messages, as Looper does. */
  path: string;
  /** The path as the user typed it, for `file:line` locations; defaults to `path`. */
  displayPath?: string;
  /** compiled_at; defaults to SOURCE_DATE_EPOCH when set (reproducible builds), else the clock. */
  now?: Date;
  env?: Record<string, string | undefined>;
}

function clock(options: CompileOptions): Date {
  if (options.now) return options.now;
  const epoch = (options.env ?? process.env).SOURCE_DATE_EPOCH;
  if (epoch !== undefined && /^[0-9]+$/.test(epoch)) return new Date(Number(epoch) * 1000);
  return new Date();
}

interface Parsed {
  spec: PyDict;
  lines: LineIndex;
  source: string;
}

function parse(yamlText: string, options: CompileOptions): Parsed {
  const source = resolvePath(options.path);
  // utf-8-sig: a BOM left by a Windows editor is not content.
  const text = yamlText.startsWith('\uFEFF') ? yamlText.slice(1) : yamlText;
  let loaded;
  try {
    loaded = loadYaml(text);
  } catch (error) {
    if (error instanceof YamlSyntaxError) throw new SpecError(`Could not parse YAML in ${source}: ${error.message}`);
    throw error;
  }
  if (!isDict(loaded.value)) throw new SpecError(`${source} must contain a YAML mapping at the top level`);
  return { spec: loaded.value, lines: loaded.lines, source };
}

function compileParsed(parsed: Parsed, options: CompileOptions): { resolved: PyDict } {
  const resolved = normalizeSpec(parsed.spec, {
    source: parsed.source,
    file: options.displayPath ?? options.path,
    lines: parsed.lines,
    now: clock(options),
  });
  return { resolved };
}

/** The exact bytes Looper writes to loop.resolved.json. */
export function resolvedJson(resolved: PyDict): string {
  return `${pyJsonDumps(resolved, { indent: 2, sortKeys: true })}\n`;
}

/** Compiles loop.yaml text. Throws SpecError (exit 2) with Looper's message on any invalid spec. */
export function compileSpec(yamlText: string, options: CompileOptions): CompileResult {
  const { resolved } = compileParsed(parse(yamlText, options), options);
  return {
    resolved: toPlain(resolved) as ResolvedSpec,
    json: resolvedJson(resolved),
    loopMd: renderLoopMd(resolved),
    runInSessionMd: renderRunInSessionMd(resolved),
    looper: { loopMd: renderLoopMd(resolved, { flavour: 'looper' }), runInSessionMd: renderRunInSessionMd(resolved, { flavour: 'looper' }) },
    placeholders: findPlaceholders(resolved),
  };
}

export interface LintResult {
  findings: Finding[];
  errors: number;
  warnings: number;
}

/** Compiles, then lints. A spec that does not compile throws SpecError, exactly like compile. */
export function lintSpecText(yamlText: string, options: CompileOptions & LintOptions): LintResult {
  const parsed = parse(yamlText, options);
  // Compilation rewrites string checks into argv, so note which were strings first.
  const goal = get(parsed.spec, 'goal');
  const rawCriteria = isDict(goal) ? get(goal, 'verification') : undefined;
  const rawStringChecks: PyValue[] = [];
  for (const item of truthy(rawCriteria) && Array.isArray(rawCriteria) ? rawCriteria : []) {
    if (isDict(item) && get(item, 'type') === 'programmatic' && typeof get(item, 'check') === 'string') rawStringChecks.push(get(item, 'id') ?? null);
  }
  const { resolved } = compileParsed(parsed, options);
  const findings = lintSpec(resolved, rawStringChecks, options);
  const errors = findings.filter((f) => f.severity === 'error').length;
  return { findings, errors, warnings: findings.length - errors };
}
