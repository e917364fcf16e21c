// Turns a valid raw task into the task.loaded payload: defaults, the docs hosts, the egress policy, the compiled check.
import type { Payload } from '@quickloop/events';
import { checkScript, compileSuccess, portBase } from './check.js';
import type { RawTask } from './raw.js';
import { normaliseHost, type SuccessFile } from './rules.js';
import type { Source } from './source.js';

export type TaskLoadedPayload = Payload<'task.loaded'>;

/** The seed schema's budget defaults (also its `default` keywords): 20 turns, 480 s, 300 s per command, 20k chars, unlimited tokens. */
export const BUDGET_DEFAULTS = { max_turns: 20, max_seconds: 480, max_command_seconds: 300, max_output_chars: 20000, max_tokens: 0 } as const;

const unique = (items: Iterable<string>): string[] => [...new Set(items)];

const commands = (items: string[] | undefined): string[] => (items ?? []).map((c) => c.trim()).filter((c) => c !== '');

/** `registries`: the discovered registry endpoints, `host:port` (discoverRegistries().endpoints). */
export function normalise(task: RawTask, source: Source, registries: readonly string[], successFile?: SuccessFile): TaskLoadedPayload {
  const name = task.name.trim();
  const path = task.docs.path ? task.docs.path.map((p) => p.trim()) : [task.docs.entrypoint!.trim()];
  // The route's hosts come first, in route order, then the extra docs hosts.
  const docsHosts = unique([...path.map((p) => normaliseHost(new URL(p).hostname)), ...(task.docs.allow ?? []).map(normaliseHost)]);
  const allow = unique((task.network?.allow ?? []).map(normaliseHost));
  const only = task.network?.only ? unique(task.network.only.map(normaliseHost)) : undefined;
  const replay = commands(task.replay);
  const body = compileSuccess(task.success, successFile?.text);
  const success = structuredClone(task.success);
  const normalised: TaskLoadedPayload['task'] = {
    name,
    goal: task.goal.trim(),
    ...(task.image !== undefined && task.image.trim() !== '' ? { image: task.image.trim() } : {}),
    docs: { path, allow: docsHosts },
    network: { allow, ...(only ? { only } : {}) },
    setup: commands(task.setup),
    replay: replay.length > 0 ? replay : null,
    success,
    budgets: { ...BUDGET_DEFAULTS, ...(task.budgets ?? {}) },
  };
  return {
    source: { path: source.path, sha256: source.sha256, format: source.format },
    task: normalised,
    mode: replay.length > 0 ? 'replay+agent' : 'agent-only',
    policy: {
      explicit: unique([...(only ?? []), ...allow]),
      docs_hosts: docsHosts,
      // Endpoints (host:port) of the configured registries; network.allow/only hosts are `explicit`.
      registries: only ? [] : unique(registries),
      registries_source: only ? 'only' : 'default',
    },
    check: {
      script: checkScript(name, body),
      body,
      port_base: portBase(name),
      ...(successFile ? { success_file: { path: successFile.path, sha256: successFile.sha256 } } : {}),
    },
  };
}
