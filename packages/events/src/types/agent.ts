// Events of qs-agent: the agent's life, its tool calls and results, and the docs pages it read.
import { Type, type Static } from '@sinclair/typebox';
import { defineEvent } from '../define.js';

/** Why an agent stopped; `interrupted` is a signal, `skipped` a task with nothing for this agent to do, `spend_cap` the sweep's spend cap. */
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
    Type.Literal('context_overflow'),
    Type.Literal('spend_cap'),
  ],
  {
    description:
      'completed | command_failed (replay) | skipped | interrupted | error | refusal | max_turns | timeout | token_budget | context_overflow (the conversation outgrew the model\'s context window) | spend_cap (the sweep\'s --max-spend refused the next model call; not evidence).',
  },
);
export type StopReasonName = Static<typeof StopReason>;

/** The five token counters of a model call; `input_tokens` excludes cache reads and writes, `output_tokens` includes reasoning. */
export const TokenUsage = Type.Object({
  input_tokens: Type.Integer({ minimum: 0 }),
  cache_read_tokens: Type.Integer({ minimum: 0 }),
  cache_write_tokens: Type.Integer({ minimum: 0 }),
  output_tokens: Type.Integer({ minimum: 0 }),
  reasoning_tokens: Type.Integer({ minimum: 0 }),
});

/** Why a model call gave no usable answer (the models library's error kinds). */
export const ModelErrorKind = Type.Union([Type.Literal('infra'), Type.Literal('config'), Type.Literal('context_overflow'), Type.Literal('harness'), Type.Literal('refusal')], {
  description: 'infra: the provider or network · config: key, model or endpoint · context_overflow · harness: an answer we cannot read · refusal.',
});

/** A block of an assistant turn, the same for every vendor. */
export const TurnBlock = Type.Union([
  Type.Object({ type: Type.Literal('text'), text: Type.String() }),
  Type.Object({
    type: Type.Literal('tool_call'),
    id: Type.String({ minLength: 1, description: 'The model\'s id for the call; tool.call carries it as call_id.' }),
    name: Type.String({ description: 'The tool the model asked for (may be one that does not exist).' }),
    input: Type.Record(Type.String(), Type.Unknown(), { description: 'The arguments as the model gave them (unparseable arguments become {}; tool.error says why).' }),
  }),
]);

export const AgentStarted = defineEvent({
  type: 'agent.started',
  emittedBy: ['qs-agent'],
  doc: 'An agent began working on a run, after its sandbox was ready.',
  payload: Type.Object({
    agent: Type.String({ minLength: 1, description: 'The agent kind: `replay`, later a model adapter.' }),
    task: Type.String({ description: 'The task name.' }),
    model: Type.Optional(Type.String({ description: 'The model asked for, for model agents.' })),
    base_url: Type.Optional(Type.String({ description: 'The API endpoint, for model agents (never with credentials in it).' })),
    from: Type.Optional(Type.String({ description: 'For `recorded`: the stream its turns come from.' })),
    affordances: Type.Optional(Type.Union([Type.Literal('all'), Type.Literal('none')], { description: 'The affordance policy of the run (--affordances): none withholds llms.txt, llms-full.txt and .md variants that are not on the route. Absent in streams written before it was recorded.' })),
  }),
});

export const AgentTurn = defineEvent({
  type: 'agent.turn',
  emittedBy: ['qs-agent'],
  doc: 'One model turn of a model agent: what the model answered, with usage and cost (of all its attempts: one that failed after its stream reported usage was billed too). `id` is the parent of the turn\'s tool.call events; a recorded run re-drives these in order.',
  payload: Type.Object({
    turn: Type.Integer({ minimum: 1, description: 'Numbered from 1 within the run.' }),
    model: Type.String({ description: 'The model that served the turn, as the provider reported it (the one asked for when it reports none).' }),
    stop: Type.Union([Type.Literal('end_turn'), Type.Literal('tool_use'), Type.Literal('max_tokens'), Type.Literal('refusal'), Type.Literal('context_overflow'), Type.Literal('pause'), Type.Literal('other')]),
    blocks: Type.Array(TurnBlock, { description: 'The assistant\'s text and tool calls, in order.' }),
    usage: TokenUsage,
    usd: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: 'Cost of the turn from the price book; null when the model is not in it.' }),
    duration_ms: Type.Integer({ minimum: 0, description: 'Wall time of the turn, retries and waits included.' }),
    request_id: Type.Union([Type.String(), Type.Null()], { description: 'The provider\'s request id, when it sent one.' }),
    attempts: Type.Integer({ minimum: 1, description: 'Requests made for this turn (1 + retries).' }),
    refusal: Type.Optional(Type.Object({ category: Type.Optional(Type.String()), explanation: Type.Optional(Type.String()) })),
    reserved_usd: Type.Optional(Type.Number({ minimum: 0, description: "Under a sweep's --max-spend: what the spend ledger reserved for this turn's requests, each before it was sent (its most the request could cost; a retry is reserved too). The answer is settled at its usd, a failed attempt (or an answer that reports no usage at all) at its reservation." })),
  }),
});

export const AgentRetry = defineEvent({
  type: 'agent.retry',
  emittedBy: ['qs-agent'],
  doc: 'A model request failed transiently (408, 409, 429, 5xx, 529, a dropped connection) and will be retried after `wait_ms`, inside the run\'s deadline.',
  payload: Type.Object({
    turn: Type.Integer({ minimum: 1 }),
    attempt: Type.Integer({ minimum: 1, description: 'The attempt that failed.' }),
    status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status; null for a connection failure.' }),
    error_kind: ModelErrorKind,
    error: Type.String({ description: 'One line, with no credential in it.' }),
    wait_ms: Type.Integer({ minimum: 0 }),
  }),
});

export const ToolError = defineEvent({
  type: 'tool.error',
  emittedBy: ['qs-agent'],
  doc: 'A tool call that could not be carried out as asked (an unknown tool, missing or malformed arguments): the error went back to the model as the tool\'s answer. parent_id is the tool.call.',
  payload: Type.Object({
    tool: Type.String(),
    error: Type.String({ minLength: 1, description: 'What the model was told.' }),
  }),
});

export const ReplayDiverged = defineEvent({
  type: 'replay.diverged',
  emittedBy: ['qs-agent'],
  doc: 'A recorded run (`--agent recorded`) got a different tool result than the recording: which call and how. parent_id is the tool.call.',
  payload: Type.Object({
    turn: Type.Integer({ minimum: 1 }),
    call_id: Type.String({ description: 'The recorded model call id.' }),
    tool: Type.String(),
    field: Type.Union([Type.Literal('exit_code'), Type.Literal('output'), Type.Literal('timed_out'), Type.Literal('docs'), Type.Literal('error')], {
      description: 'exit_code / output / timed_out of a bash call; docs: a page read with a different status or content; error: one side was a tool error.',
    }),
    recorded: Type.String({ description: 'The recorded value (output head+tail cut to 2000 characters).' }),
    actual: Type.String({ description: 'The value this run got, cut the same way.' }),
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
    model: Type.Optional(Type.String({ description: 'Model agents: the model that served the last turn.' })),
    turns: Type.Optional(Type.Integer({ minimum: 0, description: 'Model agents: model turns taken.' })),
    usage: Type.Optional(TokenUsage),
    usd: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: 'Cost of the run, attempts that failed after their stream reported usage included; null when some turn\'s model is not in the price book.' })),
    final_text: Type.Optional(Type.String({ description: 'Model agents: the text of the last turn (the agent\'s summary).' })),
    error_kind: Type.Optional(ModelErrorKind),
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
    tool: Type.String({ minLength: 1, description: '`bash` or `read_docs`; a model may ask for a tool that does not exist (then tool.error answers).' }),
    command: Type.Optional(Type.String({ description: 'bash: the command, run as a fresh `bash -c` in the workspace.' })),
    url: Type.Optional(Type.String({ description: 'read_docs: the page asked for.' })),
    page: Type.Optional(Type.Integer({ minimum: 1, description: 'read_docs: the part of a long page asked for.' })),
    call_id: Type.Optional(Type.String({ description: 'Model agents: the model\'s id for the call (agent.turn blocks).' })),
    input: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The arguments of a call that is not a well-formed bash or read_docs call.' })),
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
