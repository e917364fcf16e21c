// The JSON Schema of the wire, generated from the catalog, and the validators compiled from it.
import { Ajv, type ValidateFunction, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { EVENT_DEFS, eventDef } from './catalog.js';
import { Envelope, PROTOCOL_VERSION } from './envelope.js';

// ajv-formats is CJS: under NodeNext its callable is the `default` property.
const addFormats = addFormatsModule.default;

const plain = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema));

/** schemas/events.schema.json: the envelope, then one definition per known event type. */
export function eventsJsonSchema(): Record<string, unknown> {
  const definitions: Record<string, unknown> = { envelope: plain(Envelope) };
  for (const def of EVENT_DEFS) {
    const payload = plain(def.payload) as { properties: Record<string, unknown>; required?: string[] };
    definitions[def.type] = {
      description: def.doc,
      'x-emitted-by': [...def.emittedBy],
      ...(def.terminal ? { 'x-terminal': true } : {}),
      allOf: [
        { $ref: '#/definitions/envelope' },
        {
          type: 'object',
          properties: { type: { const: def.type }, ...payload.properties },
          required: ['type', ...(payload.required ?? [])],
        },
      ],
    };
  }
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: `quickloop/events.v${PROTOCOL_VERSION}.schema.json`,
    title: 'quickloop event',
    description:
      'One line of a quickloop NDJSON stream. Every line carries the envelope; a line whose type is known must also match that type. Unknown types are passed through by every stage. Generated from packages/events/src/catalog.ts: do not edit by hand.',
    'x-protocol-version': PROTOCOL_VERSION,
    definitions,
    allOf: [
      { $ref: '#/definitions/envelope' },
      ...EVENT_DEFS.map((def) => ({
        if: { properties: { type: { const: def.type } }, required: ['type'] },
        then: { $ref: `#/definitions/${def.type}` },
      })),
    ],
  };
}

let ajv: Ajv | undefined;
const validators = new Map<string, ValidateFunction>();

function compiler(): Ajv {
  if (!ajv) {
    ajv = new Ajv({ allErrors: false, strict: false });
    addFormats(ajv, ['date-time']);
  }
  return ajv;
}

/** The validator for the envelope alone, or for a known type's envelope and payload. Compiled lazily. */
export function validatorFor(type: string | null): ValidateFunction {
  const key = type ?? '';
  let fn = validators.get(key);
  if (!fn) {
    const def = type === null ? undefined : eventDef(type);
    const schema = def
      ? { allOf: [plain(Envelope), { type: 'object', properties: { type: { const: def.type }, ...(plain(def.payload) as { properties: object }).properties }, required: (plain(def.payload) as { required?: string[] }).required ?? [] }] }
      : plain(Envelope);
    fn = compiler().compile(schema as object);
    validators.set(key, fn);
  }
  return fn;
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
