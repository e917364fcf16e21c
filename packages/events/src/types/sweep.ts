// Events of a sweep as a whole (qs run, qs merge, qs worker): the plan its attempts come from.
import { Type } from '@sinclair/typebox';
import { defineEvent } from '../define.js';

export const SweepPlan = defineEvent({
  type: 'sweep.plan',
  emittedBy: ['qs'],
  doc: 'The head of a sweep\'s --out folder (its plan.ndjson): which attempts make up the whole sweep, and which of them this folder holds (a shard, a fleet\'s producer, or all). Folders of one sweep have the same plan_sha256; qs merge refuses folders whose plans differ, and an attempt of the plan that no folder ran is reported as not run.',
  payload: Type.Object({
    plan_sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'sha256 of the canonical JSON of tasks, repeat, agent, model and versions: the identity of the sweep.' }),
    tasks: Type.Array(
      Type.Object({
        name: Type.String(),
        slug: Type.String({ description: 'Its folder under --out.' }),
        source: Type.String({ description: 'The task file as given.' }),
        sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'sha256 of the task file.' }),
        config_sha256: Type.Union([Type.String({ pattern: '^[0-9a-f]{64}$' }), Type.Null()], { description: 'The project config merged under it, if any.' }),
      }),
    ),
    repeat: Type.Integer({ minimum: 1 }),
    agent: Type.String(),
    model: Type.Union([Type.String(), Type.Null()]),
    versions: Type.Record(Type.String(), Type.String(), { description: 'quickloop package versions that ran it (`qs`, …).' }),
    attempts: Type.Integer({ minimum: 0, description: 'Attempts in the whole plan: tasks × repeat.' }),
    share: Type.Union(
      [
        Type.Object({ kind: Type.Literal('shard'), index: Type.Integer({ minimum: 1 }), total: Type.Integer({ minimum: 1 }) }),
        Type.Object({ kind: Type.Literal('all') }),
        Type.Object({ kind: Type.Literal('queue'), queue: Type.String({ description: 'The queue, without credentials.' }) }),
      ],
      { description: 'What this folder runs of the plan.' },
    ),
    assigned: Type.Array(Type.Object({ slug: Type.String(), attempt: Type.Integer({ minimum: 1 }) }), { description: 'The attempts this folder is to run (all of them for `all` and `queue`).' }),
  }),
});

export const SweepStopped = defineEvent({
  type: 'sweep.stopped',
  emittedBy: ['qs'],
  doc: "A sweep a signal stopped before its folder's share of the plan was run (its stopped.ndjson, beside plan.ndjson). The attempts that finished are in the folder as they ran; the rest are not run, and this says why: results.json is then `interrupted`, whether or not an attempt was cut in the middle, and qs merge exits 130 for it rather than asking for a missing shard.",
  payload: Type.Object({
    signal: Type.String({ description: 'The signal that stopped it (SIGINT, SIGTERM, SIGHUP).' }),
    recorded: Type.Integer({ minimum: 0, description: 'Attempts of its share that are in the folder.' }),
    assigned: Type.Integer({ minimum: 0, description: 'Attempts the folder was to run.' }),
  }),
});
