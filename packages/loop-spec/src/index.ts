// Public surface of @quickloop/loop-spec: the resolved-spec types, compile, load, render and lint.
export * from './types.js';
export { SpecError } from './errors.js';
export { compileSpec, lintSpecText, resolvedJson, type CompileOptions, type LintResult } from './compile.js';
export { compileFile, lintFile, loadResolved, readResolvedForRender, assertRunnable, absoluteSpecPath, readSpecText, type LoadedSpec } from './load.js';
export { lintSpec, findPlaceholders, placeholderWarningText, LINT_RULES, type LintOptions } from './lint.js';
export { renderLoopMd, renderAsciiDiagram, type RenderFlavour, type RenderOptions } from './render-loop.js';
export { renderRunInSessionMd } from './render-session.js';
export { isDict, pyStrip, pyRstrip, PyFloat, PyMap, PY_SPACE_CLASS, type PyDict, type PyValue } from './py.js';
export { shlexSplit, ShlexError } from './shlex.js';
export { fnmatch, isRedactedPath } from './glob.js';
export { cliOutputMode, type CliOutputMode } from './output-mode.js';
export { RESOLVED_SCHEMA_URL } from './normalize.js';
export { pyJsonDumps, pyJsonLoads, pyJsonDecodePrefix, type LoadOptions } from './py-json.js';
export { resolvedJsonSchema, RESOLVED_SCHEMA_ID } from './resolved-schema.js';
