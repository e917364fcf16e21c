// Events of qs-validate: a task loaded and normalised, and a finding about a task file.
import { Type } from '@sinclair/typebox';
import { defineEvent } from '../define.js';

const StringOrList = Type.Union([Type.String(), Type.Array(Type.String())]);

/** The success block as the author wrote it (the compiled script is in `check`). */
export const Success = Type.Object(
  {
    script: Type.Optional(Type.String()),
    file: Type.Optional(Type.String()),
    serve: Type.Optional(Type.String()),
    expect_output: Type.Optional(Type.Object({ contains: Type.Optional(StringOrList), matches: Type.Optional(StringOrList) })),
    wait_http: Type.Optional(
      Type.Object({
        path: Type.Optional(Type.String()),
        url: Type.Optional(Type.String()),
        status: Type.Optional(Type.Integer()),
        contains: Type.Optional(StringOrList),
        matches: Type.Optional(StringOrList),
        json: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        timeout: Type.Optional(Type.Integer()),
      }),
    ),
  },
  { description: 'The success block as written in the task file.' },
);

export const Budgets = Type.Object(
  {
    max_turns: Type.Integer({ minimum: 1, description: 'Agent turns (default 20).' }),
    max_seconds: Type.Integer({ minimum: 1, description: 'Wall clock of the agent phase, seconds (default 480).' }),
    max_command_seconds: Type.Integer({ minimum: 1, description: 'Per command, setup and check included (default 300).' }),
    max_output_chars: Type.Integer({ minimum: 1, description: 'Per command output kept, head and tail (default 20000).' }),
    max_tokens: Type.Integer({ minimum: 0, description: 'Billable tokens, cache included; 0 = unlimited.' }),
  },
  { description: 'Budgets with every default filled in.' },
);

/** A task after normalisation: defaults filled, lists trimmed, `entrypoint` folded into `path`. */
export const NormalizedTask = Type.Object({
  name: Type.String({ minLength: 1, description: 'Identifier, safe as a directory name.' }),
  goal: Type.String({ minLength: 1, description: 'The only instruction the agent receives (trimmed).' }),
  image: Type.Optional(Type.String({ description: 'Container image for the docker backend.' })),
  docs: Type.Object({
    path: Type.Array(Type.String(), { minItems: 1, description: 'The ordered docs route (entrypoint folded in).' }),
    allow: Type.Array(Type.String(), { description: 'Every docs host: the route hosts first, then docs.allow.' }),
  }),
  network: Type.Object({
    allow: Type.Array(Type.String(), { description: 'Hosts added to the default registries.' }),
    only: Type.Optional(Type.Array(Type.String(), { description: 'Hosts that replace the default registries.' })),
  }),
  setup: Type.Array(Type.String(), { description: 'Commands run before the agent.' }),
  replay: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'The documented commands; null when the task is agent-only.' }),
  success: Success,
  budgets: Budgets,
});

/** What the shell may reach, by host and port: explicit → docs (deny) → registries → install hosts → deny. */
export const EgressPolicy = Type.Object({
  explicit: Type.Array(Type.String(), { description: 'Hosts named in network.allow or network.only: allowed on ports 443 and 80, subdomains included.' }),
  docs_hosts: Type.Array(Type.String(), { description: 'Docs hosts (and their subdomains): denied to the shell, readable only through read_docs.' }),
  registries: Type.Array(Type.String(), {
    description:
      'Package registry endpoints `host:port` (`[v6]:port`), each from a configured registry URL (https 443, http 80, or its explicit port) or --allow-registry; matched exactly, and the only destinations that may resolve to a loopback or private address. A bare host (streams written before ports were carried) means 443 and 80.',
  }),
  install_hosts: Type.Optional(
    Type.Array(Type.String(), { description: 'Hosts ordinary installs reach besides the registries (added by the sandbox): exact host, ports 443 and 80.' }),
  ),
  registries_source: Type.Union([Type.Literal('default'), Type.Literal('only')], {
    description: '`default`: the package managers\' configured registries plus network.allow; `only`: network.only.',
  }),
});

export const TaskLoaded = defineEvent({
  type: 'task.loaded',
  emittedBy: ['qs-validate'],
  doc: 'A task file (or one task of it) passed validation and was normalised; its run_id names the attempt the later stages work on.',
  payload: Type.Object({
    source: Type.Object({
      path: Type.String({ description: 'The task file as given (or `-` for stdin).' }),
      sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'sha256 of the file bytes.' }),
      format: Type.Union([Type.Literal('yaml'), Type.Literal('json')]),
      config: Type.Optional(
        Type.Object(
          {
            path: Type.String({ description: 'The project config (quickloop.yaml) whose tasks: defaults were merged under this task.' }),
            sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'sha256 of its bytes: with the task file\'s, what this task is.' }),
          },
          { description: 'Absent when no project config applied.' },
        ),
      ),
    }),
    task: NormalizedTask,
    mode: Type.Union([Type.Literal('replay+agent'), Type.Literal('agent-only')], { description: 'agent-only when the task has no replay commands.' }),
    policy: EgressPolicy,
    check: Type.Object({
      script: Type.String({ description: 'The whole check: QS_PORT_BASE, the helper prelude, then the compiled success block.' }),
      body: Type.String({ description: 'The compiled success block alone (what `qs check --show` prints after the prelude).' }),
      port_base: Type.Integer({ minimum: 1024, maximum: 65535, description: 'First port QS_PORT is probed from; stable per task name.' }),
      success_file: Type.Optional(
        Type.Object({
          path: Type.String({ description: 'success.file resolved against the task file.' }),
          sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
        }),
      ),
    }),
  }),
});

export const Diagnostic = defineEvent({
  type: 'diagnostic',
  emittedBy: ['qs-validate'],
  doc: 'A finding about a task file: an error that made it invalid, or a lint warning or note that did not.',
  payload: Type.Object({
    severity: Type.Union([Type.Literal('error'), Type.Literal('warning'), Type.Literal('note')]),
    code: Type.String({ pattern: '^QS[0-9]{3}$', description: 'Stable code, documented in the README (QS0xx errors, QS1xx warnings, QS2xx notes).' }),
    message: Type.String({ minLength: 1, description: 'One line for people.' }),
    path: Type.String({ description: 'The task file.' }),
    task: Type.Optional(Type.String({ description: 'The task name, when it was read.' })),
    field: Type.Optional(Type.String({ description: 'The field it concerns, dotted (`docs.path[1]`).' })),
    line: Type.Optional(Type.Integer({ minimum: 1 })),
    column: Type.Optional(Type.Integer({ minimum: 1 })),
  }),
});
