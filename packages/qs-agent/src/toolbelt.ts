// The agent's two tools, bash and read_docs, each call recorded as events in the order it happened.
import { unrunnable, type Emitter } from '@quickloop/events';
import type { Denial, LimitHit } from '@quickloop/sandbox';
import { createDocsReader, redactUrl, type Affordances, type Clock, type DocsMapping, type ReadResult } from '@quickloop/docs';

export interface BashResult {
  exitCode: number;
  output: string;
  timedOut: boolean;
  durationMs: number;
  originalChars: number;
  truncated: boolean;
  /** Filesystem accesses the enforced sandbox refused (absent or empty for an executor that refuses nothing). */
  denials?: readonly Denial[];
  /** The sandbox limits it ran into (sandbox.limit_hit payloads). */
  limitHits?: readonly LimitHit[];
  /** Set when the command was never run because bash cannot be given it (a NUL byte…): why, in one clause. */
  refused?: string;
}

/** What a refused command reports: 126, the shell's "found but cannot be executed". */
export const REFUSED_EXIT = 126;

/** What runs a command in the sandbox: a fresh `bash -c` in the workspace (the sandbox library's Sandbox). */
export interface Executor {
  exec(command: string, options: { timeoutMs: number; maxOutputChars: number; signal?: AbortSignal }): Promise<BashResult>;
}

/** How a model agent's call is recorded and bounded; the replay agent passes none. */
export interface CallRef {
  /** The id to give the tool.call event (the loop names it, so its hook can point at it). */
  id?: string;
  /** The agent.turn the call belongs to. */
  parentId?: string;
  /** The model's own id for the call. */
  callId?: string;
  /** A shorter limit than max_command_seconds: what is left of max_seconds. */
  timeoutMs?: number;
  /** Aborted at the run's deadline as well as on a signal. */
  signal?: AbortSignal;
}

export interface Toolbelt {
  bash(command: string, ref?: CallRef): Promise<BashResult>;
  /** `text` (when ok) and `error` (when not) are exactly what the model is shown. */
  readDocs(url: string, page?: number, ref?: CallRef): Promise<ReadResult>;
  /** --probe-affordances: records what the site offers agents (a docs.affordances event). */
  probeAffordances(entrypoint: string): Promise<void>;
  /** bash calls made so far. */
  readonly commands: number;
}

export interface ToolbeltOptions {
  runId: string;
  emitter: Emitter;
  newId: () => string;
  executor: Executor;
  maxCommandSeconds: number;
  maxOutputChars: number;
  docsAllow: readonly string[];
  /** The task's docs.path: never withheld under --affordances none. */
  docsRoute: readonly string[];
  docs: DocsSettings;
  signal: AbortSignal;
}

/** The docs reader's flags, as qs-agent (and qs run) take them. */
export interface DocsSettings {
  maps: readonly DocsMapping[];
  cacheDir?: string;
  refresh?: boolean;
  offline?: boolean;
  ignoreRobots?: boolean;
  /** Seconds between requests to one host. */
  rateLimit?: number;
  affordances?: Affordances;
  probeAffordances?: boolean;
  /** For tests: the rate limiter's clock, so a wait is observed rather than timed. */
  clock?: Clock;
  now?: () => Date;
}

export function createToolbelt(o: ToolbeltOptions): Toolbelt {
  let commands = 0;
  const d = o.docs;
  // One reader per run: its robots.txt answers and per-host slots last as long as the run.
  const reader = createDocsReader({
    allow: o.docsAllow,
    route: o.docsRoute,
    maps: d.maps,
    ...(d.cacheDir !== undefined ? { cacheDir: d.cacheDir } : {}),
    refresh: d.refresh === true,
    offline: d.offline === true,
    ignoreRobots: d.ignoreRobots === true,
    rateLimitSeconds: d.rateLimit ?? 1,
    affordances: d.affordances ?? 'all',
    ...(d.clock ? { clock: d.clock } : {}),
    ...(d.now ? { now: d.now } : {}),
    signal: o.signal,
  });
  return {
    get commands() {
      return commands;
    },
    async bash(command, ref = {}) {
      commands += 1;
      const id = ref.id ?? o.newId();
      await o.emitter.emit('tool.call', { run_id: o.runId, id, ...(ref.parentId !== undefined ? { parent_id: ref.parentId } : {}) }, { tool: 'bash', command, ...(ref.callId !== undefined ? { call_id: ref.callId } : {}) });
      const why = unrunnable(command);
      const refusal = `qs-agent: this command was not run: ${why ?? ''}\n`;
      // Returned to the agent as the tool's answer (a model reads it and can retry), never thrown.
      const result: BashResult =
        why !== undefined
          ? { exitCode: REFUSED_EXIT, output: refusal, timedOut: false, durationMs: 0, originalChars: refusal.length, truncated: false, refused: why }
          : await o.executor.exec(command, { timeoutMs: Math.min(o.maxCommandSeconds * 1000, ref.timeoutMs ?? Infinity), maxOutputChars: o.maxOutputChars, signal: ref.signal ?? o.signal });
      // Before tool.result, like the egress events of the same command: the result closes the command.
      for (const denial of result.denials ?? []) await o.emitter.emit('sandbox.denied', { run_id: o.runId, parent_id: id }, denial);
      for (const hit of result.limitHits ?? []) await o.emitter.emit('sandbox.limit_hit', { run_id: o.runId, parent_id: id }, hit);
      await o.emitter.emit(
        'tool.result',
        { run_id: o.runId, id: o.newId(), parent_id: id },
        {
          tool: 'bash',
          exit_code: result.exitCode,
          timed_out: result.timedOut,
          duration_ms: Math.max(0, Math.round(result.durationMs)),
          output: result.output,
          original_chars: result.originalChars,
          truncated: result.truncated,
        },
      );
      return result;
    },
    async readDocs(url, page, ref = {}) {
      const id = ref.id ?? o.newId();
      // The URL is recorded without credentials: the reader refuses such a URL, but the call is recorded first.
      await o.emitter.emit(
        'tool.call',
        { run_id: o.runId, id, ...(ref.parentId !== undefined ? { parent_id: ref.parentId } : {}) },
        { tool: 'read_docs', url: redactUrl(url), ...(Number.isInteger(page) && page! >= 1 ? { page } : {}), ...(ref.callId !== undefined ? { call_id: ref.callId } : {}) },
      );
      const result = await reader.read(url, page, ref.signal);
      // docs.read / docs.error is read_docs' result event: it pairs with the call by parent_id.
      const meta = { run_id: o.runId, id: o.newId(), parent_id: id };
      if (result.ok) {
        if (result.changed) {
          await o.emitter.emit('docs.changed', { run_id: o.runId, parent_id: id }, {
            url: result.url,
            previous_sha256: result.changed.previousSha256,
            sha256: result.sha256,
            ...(result.changed.previousFetchedAt ? { previous_fetched_at: result.changed.previousFetchedAt } : {}),
          });
        }
        await o.emitter.emit('docs.read', meta, {
          url: result.url,
          ...(result.finalUrl !== result.url ? { resolved_to: result.finalUrl } : {}),
          status: result.status,
          from: result.from,
          chars: result.text.length,
          original_chars: result.markdown.length,
          truncated: result.pages > 1,
          sha256: result.sha256,
          page: result.page,
          pages: result.pages,
          ...(result.hops.length > 0 ? { hops: result.hops } : {}),
          ...(result.robotsIgnored ? { robots_ignored: true } : {}),
        });
      } else {
        await o.emitter.emit('docs.error', meta, {
          url: result.url,
          error: result.error,
          from: result.from,
          reason: result.reason,
          ...(result.status !== undefined ? { status: result.status } : {}),
          ...(result.hops.length > 0 ? { hops: result.hops } : {}),
        });
      }
      return result;
    },
    async probeAffordances(entrypoint) {
      const probes = await reader.probe(entrypoint);
      await o.emitter.emit('docs.affordances', { run_id: o.runId }, { entrypoint: redactUrl(entrypoint), affordances: o.docs.affordances ?? 'all', probes });
    },
  };
}
