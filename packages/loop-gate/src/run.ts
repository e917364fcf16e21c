// run(opts, io): loop-gate as tests call it — one gate round on an artifact named in args or in the event stream.
import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { InputError, UsageError } from '@quickloop/cli-kit/errors';
import { LoopExit } from '@quickloop/cli-kit/exit-codes';
import type { Io } from '@quickloop/cli-kit/io';
import { createLogger, type LogLevel } from '@quickloop/cli-kit/logger';
import { terminalSafe } from '@quickloop/cli-kit/safe-text';
import { readEvents } from '@quickloop/events';
import type { GateName } from '@quickloop/loop-spec';
import { LineReader, LoopStop, Session, answerOrInterrupt, checkConsentIds, loadSpec, openEvents, refusePlaceholders, runGateRound, namedFailures, type ConsentRecord } from '@quickloop/loop-engine';

export interface RunOptions {
  spec: string;
  /** plan, delivery, plan_gate or delivery_gate. */
  gate: string;
  /** The artifact; without it, artifacts come from `artifact.written` events on stdin. */
  artifact?: string;
  /** Written when the round does not pass. */
  review?: string;
  round: number;
  iteration?: number;
  /** Host revisions so far: fixed_passes asks for another pass while this is below max_revisions. */
  revision: number;
  consent: string[];
  retries: number;
  retryDelayMs: number;
  level: LogLevel;
  /** Also write the events to this file (NDJSON), whatever stdout is. */
  events?: string;
}

export function gateName(value: string): GateName {
  const g = value.endsWith('_gate') ? value : `${value}_gate`;
  if (g !== 'plan_gate' && g !== 'delivery_gate') throw new UsageError(`gate must be plan or delivery (got '${value}')`);
  return g;
}

/** delivery-3.md → 3; plan.md → 0: the `{n}` a check sees. */
const iterationOf = (path: string): number => Number(/delivery-(\d+)\.md$/.exec(basename(path))?.[1] ?? 0);

export async function run(opts: RunOptions, io: Io): Promise<number> {
  const gate = gateName(opts.gate);
  const log = createLogger({ stream: io.stderr, env: io.env, level: opts.level });
  const loaded = loadSpec(opts.spec, io.cwd, io.env);
  checkConsentIds(loaded.spec, opts.consent);
  refusePlaceholders(loaded);
  const answers = new LineReader(() => io.stdin);
  const consent = new Map<string, ConsentRecord>();
  const warnings: string[] = [];
  let runId = io.newId();
  // A reader that went away stops the events, not the verdict: exit 0 must keep meaning "pass".
  // On a terminal a person reads a progress view instead of NDJSON (which goes to --events FILE).
  const events = openEvents({ io, stage: 'loop-gate', runId: () => runId, ...(opts.events ? { eventsFile: opts.events } : {}) });
  const flush = events.flush;
  const session = new Session(
    loaded,
    {
      emit: events.emit,
      log: () => undefined,
      addWarning: (w) => {
        if (!warnings.includes(w)) warnings.push(w);
      },
      warnings: () => warnings,
      consentGet: (id) => consent.get(id),
      consentSet: (id, r) => void consent.set(id, r),
      // With events on stdin there is nobody to ask: consent must come from --consent or the spec.
      ask: async (question) => {
        if (!opts.artifact) return null;
        // A prompt quotes the spec (commands, file names): shown with its controls made visible.
        io.stderr.write(terminalSafe(question.endsWith(' ') ? question : `${question}\n`, 'block'));
        return answerOrInterrupt(answers, io.signal);
      },
      onUsage: () => undefined,
      info: (l) => {
        if (!events.viewing) log.info(l);
      },
      // Warnings quote models and their CLIs (issues, stderr); the logger keeps SGR, so make them text first.
      warn: (l) => log.warn(log.color.yellow(terminalSafe(l, 'block'))),
      now: io.now,
      newId: io.newId,
    },
    { env: io.env, signal: io.signal, retries: opts.retries, retryBaseMs: opts.retryDelayMs, consentFlags: new Set(opts.consent) },
  );

  const gateOne = async (artifact: string, iteration: number): Promise<number> => {
    if (!existsSync(artifact)) throw new InputError(`artifact not found: ${artifact}`);
    const r = await runGateRound(session, {
      gate,
      artifact,
      iteration,
      round: opts.round,
      revision: opts.revision,
      ...(opts.review ? { reviewPath: resolve(io.cwd, opts.review) } : {}),
    });
    if (events.view) events.view.verdictLine(r.passed);
    else log.info(`${gate}: ${r.passed ? 'pass' : 'revise'}${r.failures.length ? ` (${namedFailures(r).join('; ')})` : ''}${!r.passed && r.reviewRel ? ` (see ${r.reviewRel})` : ''}`);
    return r.passed ? LoopExit.passed : LoopExit.failed;
  };

  try {
    let code: number;
    if (opts.artifact) {
      const artifact = resolve(io.cwd, opts.artifact);
      code = await gateOne(artifact, opts.iteration ?? iterationOf(artifact));
    } else {
      let last: number | undefined;
      for await (const line of readEvents(io.stdin)) {
        await events.forward(line.raw);
        const e = line.event;
        if (e.type !== 'artifact.written') continue;
        const path = String(e.path);
        const isPlan = basename(path) === 'plan.md';
        if ((gate === 'plan_gate') !== isPlan) continue;
        runId = e.run_id;
        last = await gateOne(resolve(loaded.loopDir, path), typeof e.iteration === 'number' ? e.iteration : iterationOf(path));
      }
      if (last === undefined) throw new InputError(`stdin: no artifact.written event for ${gate}`);
      code = last;
    }
    await flush();
    return code;
  } catch (error) {
    await flush().catch(() => undefined);
    if (error instanceof LoopStop) {
      // A model CLI's failure quotes its stderr: text, not escapes, on the operator's terminal.
      log.error(`loop-gate: ${terminalSafe(error.message, 'block')}`);
      return error.exitCode ?? LoopExit.error;
    }
    throw error;
  } finally {
    answers.close();
  }
}
