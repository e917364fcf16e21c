// Validators for the envelope and every known event type, precompiled so that no stage loads ajv or
// typebox, or compiles a schema, at start-up.
import type { ErrorObject } from 'ajv';
import { VALIDATORS, TERMINAL_TYPES } from './validators.generated.js';

export interface Validator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

const table = VALIDATORS as unknown as Record<string, Validator>;

/** The validator for the envelope alone (`null`), or for a known type's envelope and payload. */
export function validatorFor(type: string | null): Validator {
  const fn = table[type === null ? 'envelope' : type];
  if (!fn) throw new Error(`no validator for event type ${type}`);
  return fn;
}

/** True when the type is in this build's catalog. */
export function isKnownType(type: string): boolean {
  return type !== 'envelope' && Object.hasOwn(table, type);
}

/** True when the event ends its run's stream (run.completed, run.failed, loop.completed …). */
export function isTerminal(type: string): boolean {
  return TERMINAL_TYPES.includes(type);
}

/** One line per error: `field: message`, the field dotted the way task authors write it. */
export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (!first) return 'invalid';
  const where = first.instancePath.replace(/^\//, '').replace(/\/(\d+)(?=\/|$)/g, '[$1]').replace(/\//g, '.');
  let what = first.message ?? 'invalid';
  if (first.keyword === 'additionalProperties') what = `unknown field '${String(first.params.additionalProperty)}'`;
  if (first.keyword === 'required') return `${where ? `${where}: ` : ''}missing field '${String(first.params.missingProperty)}'`;
  return where ? `${where}: ${what}` : what;
}
