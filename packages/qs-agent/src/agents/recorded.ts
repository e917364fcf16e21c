// `--agent recorded --from run.ndjson`: the model turns of an earlier run, re-driven in order through the
// same tool loop with no model, key or cost; each tool result that differs from the recorded one is a
// replay.diverged event, so a failed paid run is debugged for free and a docs change is tried against
// yesterday's agent.
import { ZERO_USAGE, type ModelAdapter, type PriceBook, type TurnRequest, type TurnResult } from '@quickloop/models/core';
import type { Agent, AgentContext, AgentOutcome } from './agent.js';
import { createModelAgent } from './model.js';
import { cut, diverges, loadRecording, pickRun, type RecordedRun, type Recording } from './recording.js';

/** The recording has no turn left while the loop still asks for one. */
class RecordingEnded extends Error {}

/** Answers each request with the next recorded turn, whatever was sent: the tool results are this run's own. */
class RecordedAdapter implements ModelAdapter {
  readonly name = 'recorded';
  next = 0;
  ended = false;
  constructor(private readonly run: RecordedRun) {}

  async turn(request: TurnRequest): Promise<TurnResult> {
    const t = this.run.turns[this.next];
    if (request.signal?.aborted) throw request.signal.reason instanceof Error ? request.signal.reason : new Error('aborted');
    if (!t) {
      this.ended = true;
      throw new RecordingEnded(`the recording has ${this.run.turns.length} turns`);
    }
    this.next += 1;
    return {
      blocks: t.blocks.map((b) => ({ ...b })),
      stop: t.stop,
      usage: { ...ZERO_USAGE },
      ...(t.refusal !== undefined ? { refusal: t.refusal } : {}),
      model: t.model,
      attempts: 1,
      durationMs: 0,
    };
  }
}

/** Every model the recording names, at no cost: a re-driven turn spends nothing. */
function freeBook(rec: Recording): PriceBook {
  const models: PriceBook['models'] = {};
  for (const r of rec.runs) for (const t of r.turns) models[t.model] = { input: 0, cache_read: 0, cache_write: 0, output: 0 };
  return { as_of: 'recorded', models };
}

export interface RecordedOptions {
  /** The stream file's text and its name (for messages and agent.started). */
  text: string;
  file: string;
  /** --from-run: which recorded run, when the file holds several of the task. */
  runId?: string;
}

/** Parses the recording at once, so a bad file is a usage error before any sandbox is made. */
export function createRecordedAgent(o: RecordedOptions): Agent {
  const recording = loadRecording(o);
  const prices = freeBook(recording);
  return {
    name: 'recorded',
    started: { from: o.file, ...(recording.runs.length === 1 ? { model: recording.runs[0]?.turns[0]?.model ?? '' } : {}) },
    async run(ctx: AgentContext): Promise<AgentOutcome> {
      let recorded: RecordedRun;
      try {
        recorded = pickRun(recording, ctx.task.name, o.runId);
      } catch (error) {
        const why = (error as Error).message;
        return { stopReason: 'error', detail: why, usageError: `--from ${why}` };
      }
      const adapter = new RecordedAdapter(recorded);
      let diverged = 0;
      const inner = createModelAgent('recorded', () => adapter, { model: recorded.turns[0]?.model ?? 'recorded', prices, stream: false }, {
        async afterTool(info) {
          for (const d of diverges(recorded.results.get(info.callId), info.outcome)) {
            diverged += 1;
            await ctx.emitter.emit('replay.diverged', { run_id: ctx.runId, parent_id: info.toolCallEventId }, { turn: info.turn, call_id: info.callId, tool: info.tool, field: d.field, recorded: cut(d.recorded), actual: cut(d.actual) });
          }
        },
      });
      const outcome = await inner.run(ctx);
      const tally = `${adapter.next} of ${recorded.turns.length} recorded turns re-driven from ${o.file} (run ${recorded.runId}); ${diverged === 0 ? 'every tool result matched the recording' : `${diverged} tool result${diverged === 1 ? '' : 's'} diverged`}`;
      if (!adapter.ended) return { ...outcome, detail: `${outcome.detail}; ${tally}` };
      // The loop asked for a turn the recording does not have: the recorded run stopped here, and why it did is this run's end too.
      const then = recorded.completed;
      if (then === undefined) return { ...outcome, stopReason: 'error', detail: `the recording ends after turn ${recorded.turns.length} with no agent.completed (was the recorded run cut short?); ${tally}`, report: { ...outcome.report, error_kind: 'harness' } };
      const { error_kind: _ignored, ...report } = outcome.report ?? {};
      const kind = then.errorKind as NonNullable<AgentOutcome['report']>['error_kind'] | undefined;
      return { stopReason: then.stopReason, detail: `the recorded run stopped here: ${then.detail}; ${tally}`, report: { ...report, ...(kind !== undefined ? { error_kind: kind } : {}) } };
    },
  };
}
