// The JSON Schema of the wire (schemas/events.schema.json), generated from the catalog.
import { EVENT_DEFS } from './catalog.js';
import { Envelope } from './envelope-schema.js';
import { PROTOCOL_VERSION } from './envelope.js';

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

// Validators need no prose: dropping descriptions keeps the generated code (parsed at every start-up) small.
const bare = (schema: unknown): unknown =>
  JSON.parse(JSON.stringify(schema), (key, value: unknown) => (key === 'description' ? undefined : value));

/** The schema each validator checks: the envelope, or the envelope and one known type's payload. */
export function validatorSchemas(): Record<string, unknown> {
  const out: Record<string, unknown> = { envelope: bare(Envelope) };
  for (const def of EVENT_DEFS) {
    const payload = bare(def.payload) as { properties: object; required?: string[] };
    out[def.type] = {
      allOf: [
        bare(Envelope),
        { type: 'object', properties: { type: { const: def.type }, ...payload.properties }, required: payload.required ?? [] },
      ],
    };
  }
  return out;
}
