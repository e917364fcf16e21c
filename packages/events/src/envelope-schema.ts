// The envelope as a schema (typebox): used to generate the JSON Schema and validators, never at run time.
import { Type } from '@sinclair/typebox';
import { EVENT_TYPE_PATTERN, TS_PATTERN } from './envelope.js';

export const Envelope = Type.Object(
  {
    v: Type.Integer({ minimum: 1, description: 'Protocol major version of the line (PROTOCOL_VERSION).' }),
    type: Type.String({ pattern: EVENT_TYPE_PATTERN, description: 'Dotted lifecycle name of the event.' }),
    ts: Type.String({ pattern: TS_PATTERN, description: 'When it was emitted, ISO-8601 UTC.' }),
    run_id: Type.String({ minLength: 1, description: 'One per task attempt or loop run.' }),
    stage: Type.String({ minLength: 1, description: 'The binary that emitted it, e.g. qs-validate.' }),
    id: Type.Optional(Type.String({ minLength: 1, description: 'Identifies the event where others pair with or nest under it.' })),
    parent_id: Type.Optional(Type.String({ minLength: 1, description: 'The id of the event this one completes or nests under.' })),
  },
  // Payload keys sit beside the envelope on the same object; unknown ones are tolerated so that
  // additive changes in a minor release never break an older reader.
  { additionalProperties: true, description: 'Fields every event carries.' },
);
