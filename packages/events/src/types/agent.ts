// Events of qs-agent: the agent's life, its tool calls and results, and the docs pages it read.
import { Type, type Static } from '@sinclair/typebox';
import { defineEvent } from '../define.js';

/** Why an agent stopped; `interrupted` is a signal, `skipped` a task with nothing for this agent to do. */
export const StopReason = Type.Union(
  [
    Type.Literal('completed'),
    Type.Literal('command_failed'),
    Type.Literal('skipped'),
    Type.Literal('interrupted'),
    Type.Literal('error'),
    Type.Literal('refusal'),
    Type.Literal('max_turns'),
    Type.Literal('timeout'),
    Type.Literal('token_budget'),
  ],
  { description: 'completed | command_failed (replay) | skipped | interrupted | error | refusal | max_turns | timeout | token_budget.' },
);
export type StopReasonName = Static<typeof StopReason>;

export const AgentStarted = defineEvent({
  type: 'agent.started',
  emittedBy: ['qs-agent'],
  doc: 'An agent began working on a run, after its sandbox was ready.',
  payload: Type.Object({
    agent: Type.String({ minLength: 1, description: 'The agent kind: `replay`, later a model adapter.' }),
    task: Type.String({ description: 'The task name.' }),
    model: Type.Optional(Type.String({ description: 'The model asked for, for model agents.' })),
  }),
});

export const AgentCompleted = defineEvent({
  type: 'agent.completed',
  emittedBy: ['qs-agent'],
  doc: 'The agent stopped. Always emitted once per run that qs-agent started, interrupted or not.',
  payload: Type.Object({
    agent: Type.String({ minLength: 1 }),
    stop_reason: StopReason,
    detail: Type.String({ description: 'One line on why it stopped, e.g. `replay step 2 exited 1: npm install`.' }),
    commands: Type.Integer({ minimum: 0, description: 'bash tool calls made.' }),
    duration_ms: Type.Integer({ minimum: 0 }),
    left_running: Type.Optional(
      Type.Array(Type.String(), {
        maxItems: 20,
        description: 'Command lines of processes the agent\'s commands left running (background jobs, daemons), killed when the stage closed its sandbox: nothing outlives its stage. Absent when none was.',
      }),
    ),
  }),
});

export const ToolCall = defineEvent({
  type: 'tool.call',
  emittedBy: ['qs-agent'],
  doc: 'The agent called a tool; `id` pairs it with its tool.result (whose parent_id is this id).',
  payload: Type.Object({
    tool: Type.Union([Type.Literal('bash'), Type.Literal('read_docs')]),
    command: Type.Optional(Type.String({ description: 'bash: the command, run as a fresh `bash -c` in the workspace.' })),
    url: Type.Optional(Type.String({ description: 'read_docs: the page asked for.' })),
  }),
});

export const ToolResult = defineEvent({
  type: 'tool.result',
  emittedBy: ['qs-agent'],
  doc: 'What a bash tool call returned; parent_id is the id of its tool.call. Output is stdout and stderr merged, head+tail truncated.',
  payload: Type.Object({
    tool: Type.Literal('bash'),
    exit_code: Type.Integer({ description: 'The exit code; 124 when the command timed out, 128+N when killed by signal N.' }),
    timed_out: Type.Boolean(),
    duration_ms: Type.Integer({ minimum: 0 }),
    output: Type.String({ description: 'Merged output, at most max_output_chars plus the truncation marker.' }),
    original_chars: Type.Integer({ minimum: 0, description: 'Length of the output before truncation.' }),
    truncated: Type.Boolean(),
  }),
});

export const DocsRead = defineEvent({
  type: 'docs.read',
  emittedBy: ['qs-agent'],
  doc: 'A docs page was read for the agent (through read_docs, or the replay route). The text is not in the event, its hash is.',
  payload: Type.Object({
    url: Type.String({ description: 'The URL as requested.' }),
    resolved_to: Type.Optional(Type.String({ description: 'Where HTTP redirects ended, when not the URL itself.' })),
    status: Type.Integer({ description: 'HTTP status, or 200 for a page served from a --docs-map folder.' }),
    from: Type.Union([Type.Literal('fetch'), Type.Literal('map'), Type.Literal('cache')], {
      description: 'fetch: over the network; map: a --docs-map folder; cache: a docs cache.',
    }),
    chars: Type.Integer({ minimum: 0, description: 'Characters given to the agent.' }),
    original_chars: Type.Integer({ minimum: 0, description: 'Characters of the page text before truncation.' }),
    truncated: Type.Boolean(),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'sha256 of the page text (UTF-8) before truncation.' }),
  }),
});

export const DocsError = defineEvent({
  type: 'docs.error',
  emittedBy: ['qs-agent'],
  doc: 'A docs page could not be read: an HTTP error status, a network failure, a file missing from a --docs-map folder, or a host off the docs allow list.',
  payload: Type.Object({
    url: Type.String(),
    error: Type.String({ minLength: 1, description: 'One line.' }),
    status: Type.Optional(Type.Integer({ description: 'HTTP status, when there was an answer.' })),
    from: Type.Union([Type.Literal('fetch'), Type.Literal('map'), Type.Literal('cache'), Type.Literal('policy')]),
  }),
});
