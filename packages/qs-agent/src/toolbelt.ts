// The agent's two tools, bash and read_docs, each call recorded as events in the order it happened.
import { unrunnable, type Emitter } from '@quickloop/events';
import type { Denial } from '@quickloop/sandbox';
import { readDocsPage, type DocsResult } from './docs/client.js';
import type { DocsMapping } from './docs/docs-map.js';

export interface BashResult {
  exitCode: number;
  output: string;
  timedOut: boolean;
  durationMs: number;
  originalChars: number;
  truncated: boolean;
  /** Filesystem accesses the enforced sandbox refused (absent or empty for an executor that refuses nothing). */
  denials?: readonly Denial[];
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
  readDocs(url: string, page?: number, ref?: CallRef): Promise<DocsResult>;
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
  docsMaps: readonly DocsMapping[];
  signal: AbortSignal;
}

export function createToolbelt(o: ToolbeltOptions): Toolbelt {
  let commands = 0;
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
    async readDocs(url, part, ref = {}) {
      const id = ref.id ?? o.newId();
      await o.emitter.emit(
        'tool.call',
        { run_id: o.runId, id, ...(ref.parentId !== undefined ? { parent_id: ref.parentId } : {}) },
        { tool: 'read_docs', url, ...(part !== undefined ? { page: part } : {}), ...(ref.callId !== undefined ? { call_id: ref.callId } : {}) },
      );
      const page = await readDocsPage(url, { maps: o.docsMaps, allow: o.docsAllow, signal: ref.signal ?? o.signal });
      // docs.read / docs.error is read_docs' result event: it pairs with the call by parent_id.
      const meta = { run_id: o.runId, id: o.newId(), parent_id: id };
      if (page.ok) {
        await o.emitter.emit('docs.read', meta, {
          url: page.url,
          ...(page.resolvedTo !== undefined ? { resolved_to: page.resolvedTo } : {}),
          status: page.status,
          from: page.from,
          chars: page.text.length,
          original_chars: page.originalChars,
          truncated: page.truncated,
          sha256: page.sha256,
        });
      } else {
        await o.emitter.emit('docs.error', meta, { url: page.url, error: page.error, from: page.from, ...(page.status !== undefined ? { status: page.status } : {}) });
      }
      return page;
    },
  };
}
