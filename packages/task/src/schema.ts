// The task schema: the seed verbatim, the schema actually enforced (derived from it here), and ajv errors as one-line findings.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { finding, fieldPath, quote, type Finding, type Position } from './finding.js';
import type { Code } from './codes.js';
import type { Segment } from './parse.js';

export const SEED_SCHEMA_PATH = fileURLToPath(new URL('../../../schemas/task.schema.json', import.meta.url));
export const ENFORCED_SCHEMA_PATH = fileURLToPath(new URL('../../../schemas/task.enforced.schema.json', import.meta.url));

type Json = Record<string, unknown>;

let seedCache: Json | undefined;

/** schemas/task.schema.json exactly as given. */
export function seedSchema(): Json {
  seedCache ??= JSON.parse(readFileSync(SEED_SCHEMA_PATH, 'utf8')) as Json;
  return seedCache;
}

/**
 * The schema the tool enforces: the seed with one more `success` branch. The seed demands `script`
 * or `file`, yet its own `wait_http` and `expect_output` descriptions promise checks that need
 * neither (and the prior art runs them), so a success block of only those (plus `serve`) is valid.
 * Nothing else differs; a test holds it to that.
 */
export function enforcedSchema(seed: Json = seedSchema()): Json {
  const schema = structuredClone(seed);
  const success = (schema.properties as Record<string, Json>).success!;
  success.anyOf = [
    ...(success.anyOf as unknown[]),
    {
      $comment: 'quickloop: a declarative-only success block (wait_http and/or expect_output, optionally with serve) decides the verdict on its own.',
      not: { anyOf: [{ required: ['script'] }, { required: ['file'] }] },
      anyOf: [{ required: ['wait_http'] }, { required: ['expect_output'] }],
    },
  ];
  return schema;
}

export function renderEnforcedSchema(): string {
  return `${JSON.stringify(enforcedSchema(), null, 2)}\n`;
}

let validate: ValidateFunction | undefined;

/**
 * The enforced schema's validator, compiled ahead of time into task-validator.generated.ts: loading
 * ajv and compiling at start-up cost qs-validate more than everything else it does for one task.
 */
async function validator(): Promise<ValidateFunction> {
  validate ??= (await import('./task-validator.generated.js')).default as unknown as ValidateFunction;
  return validate;
}

type Locate = (path: readonly Segment[], key?: boolean) => Position | undefined;

/** Every schema violation as a finding, earliest in the file first; empty when the task is valid. */
export async function schemaFindings(task: unknown, locate: Locate, prefix: readonly Segment[] = []): Promise<Finding[]> {
  const check = await validator();
  if (check(task)) return [];
  const seen = new Set<string>();
  const out: Finding[] = [];
  for (const error of check.errors ?? []) {
    // Errors inside a oneOf/anyOf branch only say why that branch failed; the oneOf/anyOf error
    // itself is translated below into what the author should do.
    if (/\/(anyOf|oneOf)\/\d+\//.test(error.schemaPath) || /\/(anyOf|oneOf)\/\d+\/not$/.test(error.schemaPath)) continue;
    const f = translate(error, locate, prefix);
    const key = `${f.field ?? ''}|${f.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(f);
  }
  // A field of the wrong type says all there is to say about it: what its branches or members
  // would need (`docs: ~` is not a mapping, so it has no 'path') only repeats it.
  const wrongType = out.filter((f) => f.code === 'QS011' && f.field).map((f) => f.field!);
  const within = (f: Finding, t: string): boolean => f.field === t || (f.field ?? '').startsWith(`${t}.`) || (f.field ?? '').startsWith(`${t}[`);
  const kept = out.filter((f) => f.code === 'QS011' || !wrongType.some((t) => within(f, t)));
  // Earliest in the file first; at one spot, the most basic complaint (wrong type) first.
  const rank = (f: Finding): number => ['QS011', 'QS012', 'QS010'].indexOf(f.code) >>> 0;
  return kept.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0) || rank(a) - rank(b));
}

function segmentsOf(instancePath: string): Segment[] {
  if (instancePath === '') return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

const TYPE_NAMES: Record<string, string> = {
  object: 'a mapping',
  array: 'a list',
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  null: 'empty',
};

/** What a value is, for `…, got X`. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  // What YAML's own tags read as: !!binary, !!timestamp, !!set, !!omap.
  if (value instanceof Uint8Array) return 'binary data (!!binary)';
  if (value instanceof Date) return 'a timestamp';
  if (value instanceof Set) return 'a set (!!set)';
  if (value instanceof Map) return 'an ordered mapping (!!omap)';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `the string ${quote(value, 40)}`;
  if (typeof value === 'number') return `the number ${value}`;
  return String(value);
}

function translate(error: ErrorObject, locate: Locate, prefix: readonly Segment[]): Finding {
  const segs = segmentsOf(error.instancePath);
  const full = [...prefix, ...segs];
  const field = fieldPath(full);
  const at = locate(full);
  const make = (code: Code, message: string, where: Position | undefined = at, f = field): Finding => finding(code, message, { field: f, at: where });
  const data = error.data as unknown;
  const parent = (error.parentSchema ?? {}) as Json;
  switch (error.keyword) {
    case 'additionalProperties': {
      const name = String(error.params.additionalProperty);
      const known = Object.keys((parent.properties as Json | undefined) ?? {});
      const guess = nearest(name, known);
      const where = field === '' ? '' : ` in ${field}`;
      const hint = guess ? `; did you mean '${guess}'?` : `; known fields: ${known.join(', ')}`;
      return make('QS010', `unknown field '${name}'${where}${hint}`, locate([...full, name], true), fieldPath([...full, name]));
    }
    case 'required': {
      const name = String(error.params.missingProperty);
      return make('QS012', `missing required field '${fieldPath([...segs, name])}'`, at, fieldPath([...full, name]));
    }
    case 'type': {
      const want = String(error.params.type).split(',').map((t) => TYPE_NAMES[t] ?? t).join(' or ');
      return make('QS011', `${field || 'the task'} must be ${want}, got ${describeValue(data)}`);
    }
    case 'pattern':
    case 'format': {
      if (/\/(path|entrypoint)\//.test(error.schemaPath) || /\/entrypoint\/(pattern|format)$/.test(error.schemaPath)) {
        return make('QS013', `${field} must be an http(s) URL, got ${quote(data)}${urlHint(data)}`);
      }
      return make('QS022', `${field} must be a bare host name like docs.example.com, got ${quote(data)}`);
    }
    case 'minItems':
      return make('QS013', `${field} is empty; list at least one entry`);
    case 'minProperties':
      return make(segs[segs.length - 1] === 'wait_http' ? 'QS033' : 'QS034', `${field} is empty; give it something to assert`);
    case 'oneOf':
    case 'anyOf':
      return branches(error, data, field, make);
    default:
      return make('QS013', `${field || 'the task'} ${error.message ?? 'is invalid'}`);
  }
}

/** Why a string that looks like an http(s) URL is not one, for the few ways a pasted one goes wrong. */
function urlHint(data: unknown): string {
  if (typeof data !== 'string' || !/^https?:\/\//i.test(data.trim())) return '';
  if (/\s/.test(data)) return `: it holds whitespace${/\s$/.test(data) && !/\s/.test(data.trimEnd()) ? ' (here at its end)' : ''}, which a URL cannot; remove it or write it as %20`;
  if (!/^https?:\/\//.test(data)) return `: write its scheme in lower case (${data.slice(0, data.indexOf(':')).toLowerCase()}://)`;
  if (/[^\x21-\x7e]/.test(data)) {
    try {
      return `: it holds characters beyond ASCII, which a URL writes encoded: ${new URL(data).href}`;
    } catch {
      return ': it holds characters beyond ASCII, which a URL writes percent-encoded (and a host in punycode)';
    }
  }
  return '';
}

function branches(error: ErrorObject, data: unknown, field: string, make: (code: Code, message: string) => Finding): Finding {
  const obj = (data ?? {}) as Json;
  const has = (k: string): boolean => Object.prototype.hasOwnProperty.call(obj, k);
  if (/\/docs\/oneOf$/.test(error.schemaPath)) {
    if (has('path') && has('entrypoint')) return make('QS020', "docs has both 'path' and 'entrypoint'; keep 'path' (entrypoint is its legacy one-page form)");
    return make('QS020', "docs needs 'path' (the ordered list of pages) or the legacy 'entrypoint'");
  }
  if (/\/success\/anyOf$/.test(error.schemaPath)) {
    if (has('script') && has('file')) return make('QS030', "success has both 'script' and 'file'; use one or the other");
    if (has('serve')) return make('QS032', "success.serve starts a server but nothing checks it; add 'wait_http', 'expect_output' or a 'script'");
    return make('QS030', "success needs something that decides the verdict: 'script', 'file', 'wait_http' or 'expect_output'");
  }
  if (Array.isArray(data)) {
    const bad = data.findIndex((item) => typeof item !== 'string');
    return make('QS011', `${field}[${bad}] must be a string, got ${describeValue(data[bad])}`);
  }
  return make('QS011', `${field} must be a string or a list of strings, got ${describeValue(data)}`);
}

/** The known name closest to a misspelt one, when it is close enough to be a likely typo. */
export function nearest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = distance(name.toLowerCase(), k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(best.length / 3)) ? best : undefined;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i += 1) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}
