// Builds task.loaded lines by hand for tests, in the shape qs-validate emits (until a test goes through it).
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseDocsMap } from '@quickloop/docs';
import type { AgentOptions } from '../run.js';

export interface TaskSpec {
  name?: string;
  docs?: string[];
  docsAllow?: string[];
  replay?: string[] | null;
  setup?: string[];
  script?: string;
  explicit?: string[];
  registries?: string[];
  budgets?: Partial<{ max_turns: number; max_seconds: number; max_command_seconds: number; max_output_chars: number; max_tokens: number }>;
  portBase?: number;
}

export const GREETER_DOCS = ['https://docs.greeter.test/install.html', 'https://docs.greeter.test/quickstart.html'];

/** One task.loaded event (an object; JSON.stringify it for a line). The check script is used as is. */
export function taskLoaded(runId: string, spec: TaskSpec = {}): Record<string, unknown> {
  const docs = spec.docs ?? GREETER_DOCS;
  const hosts = [...new Set(docs.map((u) => new URL(u).hostname))];
  const allow = spec.docsAllow ?? hosts;
  const script = spec.script ?? 'true';
  const name = spec.name ?? `task-${runId}`;
  const replay = spec.replay === undefined ? ['true'] : spec.replay;
  return {
    v: 1,
    type: 'task.loaded',
    ts: '2026-01-01T00:00:00.000Z',
    run_id: runId,
    stage: 'qs-validate',
    source: { path: `${name}.yaml`, sha256: createHash('sha256').update(name).digest('hex'), format: 'yaml' },
    task: {
      name,
      goal: 'Follow the quickstart.',
      docs: { path: docs, allow },
      network: { allow: spec.explicit ?? [] },
      setup: spec.setup ?? [],
      replay,
      success: { script },
      budgets: { max_turns: 20, max_seconds: 480, max_command_seconds: 30, max_output_chars: 20000, max_tokens: 0, ...spec.budgets },
    },
    mode: replay === null ? 'agent-only' : 'replay+agent',
    policy: { explicit: spec.explicit ?? [], docs_hosts: allow, registries: spec.registries ?? [], registries_source: 'default' },
    check: { script, body: script, port_base: spec.portBase ?? 23000 },
  };
}

export const ndjson = (events: readonly object[]): string => events.map((e) => `${JSON.stringify(e)}\n`).join('');

/** Parses a stage's stdout into events. */
export const parseOut = (text: string): Array<Record<string, unknown> & { type: string; run_id: string }> =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown> & { type: string; run_id: string });

/** The docs fixture site, served to read_docs by a docs map. */
export const SITE = fileURLToPath(new URL('../../../../fixtures/docs-site', import.meta.url));

/** A model agent as the tests run it: the local backend, the fixture site's docs with no rate limit, quiet. */
export function localAgentOptions(agent: string, modelFlags: NonNullable<AgentOptions['modelFlags']>): AgentOptions {
  return {
    agent,
    modelFlags,
    docs: { maps: [parseDocsMap(`https://docs.greeter.test/=${SITE}`, '/')], rateLimit: 0 },
    backend: 'local',
    allowUnenforced: true,
    keep: false,
    allowRegistries: [],
    level: 'quiet',
  };
}
