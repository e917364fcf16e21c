// Events of the sandbox: the workspace made ready, setup commands, and every egress decision of the proxy.
import { Type } from '@sinclair/typebox';
import { defineEvent } from '../define.js';
import { EgressPolicy } from './task.js';

/** Which backend ran; `docker` is reserved for the container backend. */
export const BackendName = Type.Union([Type.Literal('bwrap'), Type.Literal('local'), Type.Literal('docker')], {
  description: 'bwrap: bubblewrap namespaces (enforced) · local: plain bash, nothing enforced · docker: containers.',
});

const LimitEnforcer = Type.Union([Type.Literal('cgroup_v2'), Type.Literal('cgroup_v1'), Type.Literal('rlimit'), Type.Literal('tmpfs'), Type.Literal('none')], {
  description: 'cgroup_v2 / cgroup_v1: a cgroup made for this sandbox holds it · rlimit: set on every process the sandbox starts (the harness may not make cgroups) · tmpfs: the mount\'s own size · none: nothing on this machine can enforce it.',
});

export const SandboxLimit = Type.Object({
  name: Type.String({ description: '`processes`, `memory`, or the folder a size-limited tmpfs is mounted on (`/tmp`, `/var/tmp`, `/dev/shm`).' }),
  value: Type.Integer({ minimum: 0, description: 'The limit, in `unit`.' }),
  unit: Type.Union([Type.Literal('count'), Type.Literal('bytes')]),
  enforced_by: LimitEnforcer,
  scope: Type.Union([Type.Literal('sandbox'), Type.Literal('process'), Type.Literal('user')], {
    description: 'What the limit counts: the whole sandbox, each process alone (an rlimit on memory), or every process of the sandbox\'s user (an rlimit on processes).',
  }),
});

export const SandboxReady = defineEvent({
  type: 'sandbox.ready',
  emittedBy: ['qs-sandbox', 'qs-agent'],
  doc: 'A workspace exists with its sibling home and tmp folders and the policy it runs under. Later stages re-open the same backend from this description, each with its own egress proxy.',
  payload: Type.Object({
    root: Type.String({ description: 'The folder holding workspace, home and tmp; the last stage removes it unless kept.' }),
    workspace: Type.String({ description: 'Where commands run (their cwd); starts empty.' }),
    home: Type.String({ description: 'HOME given to commands: a sibling of the workspace, never inside it.' }),
    tmp: Type.String({ description: 'TMPDIR given to commands: a sibling of the workspace, never inside it.' }),
    backend: BackendName,
    enforced: Type.Boolean({ description: 'True when the OS enforces the filesystem, network and process limits; false for `local`.' }),
    reason: Type.String({ description: 'Why this backend: asked for, or what `auto` found.' }),
    policy: EgressPolicy,
    keep: Type.Boolean({ description: 'True when the workspace must outlive the pipeline (--keep).' }),
    limits: Type.Optional(
      Type.Array(SandboxLimit, {
        description: 'The resource limits in force and what enforces each (absent in streams of older versions, and empty for `local`, which enforces none).',
      }),
    ),
    forwards: Type.Optional(
      Type.Array(
        Type.Object({
          name: Type.String({ minLength: 1, description: 'The harness service, e.g. `model-api` (the forwarder of a model CLI agent).' }),
          port: Type.Integer({ minimum: 1, maximum: 65535, description: 'Where commands reach it: http://127.0.0.1:PORT inside the sandbox.' }),
        }),
        { description: 'Harness services piped to the sandbox\'s loopback for this stage only (absent when none): the only host service a command can reach besides the proxy.' },
      ),
    ),
  }),
});

export const SandboxUsage = defineEvent({
  type: 'sandbox.usage',
  emittedBy: ['qs-sandbox', 'qs-agent', 'qs-check'],
  doc: 'What the sandbox\'s folders hold on disk when a stage is done with it (the workspace is on the host\'s disk, so it is measured, not capped). One per stage that opened the sandbox.',
  payload: Type.Object({
    workspace_bytes: Type.Integer({ minimum: 0, description: 'Bytes of the files under the workspace (apparent sizes, links not followed).' }),
    home_bytes: Type.Integer({ minimum: 0 }),
    tmp_bytes: Type.Integer({ minimum: 0, description: 'Bytes under TMPDIR (the layout\'s tmp folder; the private /tmp tmpfs dies with the stage).' }),
    files: Type.Integer({ minimum: 0, description: 'Files and folders counted in the three.' }),
    complete: Type.Boolean({ description: 'False when the walk stopped at its limit (1,000,000 entries) or hit unreadable folders; the numbers are then lower bounds.' }),
  }),
});

export const SetupStarted = defineEvent({
  type: 'setup.started',
  emittedBy: ['qs-sandbox'],
  doc: 'A setup command of the task started in the sandbox; `id` pairs it with setup.completed.',
  payload: Type.Object({
    index: Type.Integer({ minimum: 0, description: 'Position in task.setup, from 0.' }),
    command: Type.String({ description: 'The command, run as a fresh `bash -c` in the workspace.' }),
  }),
});

export const SetupCompleted = defineEvent({
  type: 'setup.completed',
  emittedBy: ['qs-sandbox'],
  doc: 'A setup command finished; parent_id is its setup.started id. Output is stdout and stderr merged, head+tail truncated.',
  payload: Type.Object({
    index: Type.Integer({ minimum: 0 }),
    command: Type.String(),
    exit_code: Type.Integer({ description: '124 when it timed out, 128+N when killed by signal N.' }),
    timed_out: Type.Boolean(),
    duration_ms: Type.Integer({ minimum: 0 }),
    output: Type.String({ description: 'Merged output, at most max_output_chars plus the truncation marker.' }),
    original_chars: Type.Integer({ minimum: 0 }),
    truncated: Type.Boolean(),
  }),
});

export const SetupFailed = defineEvent({
  type: 'setup.failed',
  emittedBy: ['qs-sandbox'],
  doc: 'A setup command failed, so the run cannot say anything about the docs: later setup commands were not run, the agent must not start, and the run is classified harness_error.',
  payload: Type.Object({
    index: Type.Integer({ minimum: 0, description: 'The setup command that failed.' }),
    command: Type.String(),
    exit_code: Type.Integer(),
    detail: Type.String({ minLength: 1, description: 'One line: `setup step 1 exited 2: make deps`.' }),
  }),
});

const EgressFields = {
  host: Type.String({ description: 'The host asked for, lower-cased, trailing dot stripped (`(relative-url)` for a request without one).' }),
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  method: Type.String({ description: 'CONNECT for tunnels (HTTPS), the HTTP method of an absolute-URI request, or DNS / TCP for what bypassed the proxy.' }),
  path: Type.Optional(Type.String({ description: 'The path of a plain-HTTP request (a tunnel shows only its host).' })),
};

export const EgressAllowed = defineEvent({
  type: 'egress.allowed',
  emittedBy: ['qs-sandbox', 'qs-agent', 'qs-check'],
  doc: 'The egress proxy let a connection from the shell through.',
  payload: Type.Object({
    ...EgressFields,
    reason: Type.Union([Type.Literal('explicit'), Type.Literal('registry'), Type.Literal('install_host')], {
      description: 'explicit: named in network.allow/only (ports 443 and 80) · registry: a configured registry endpoint, host and port exactly · install_host: one of the install hosts (ports 443 and 80).',
    }),
    rule: Type.String({ description: 'The allowlist entry that matched (`host:port` for a registry).' }),
  }),
});

export const EgressBlocked = defineEvent({
  type: 'egress.blocked',
  emittedBy: ['qs-sandbox', 'qs-agent', 'qs-check'],
  doc: 'The egress proxy refused a connection from the shell (403 with a one-line reason). A docs host reached for from the shell is a bypass attempt.',
  payload: Type.Object({
    ...EgressFields,
    reason: Type.Union(
      [Type.Literal('docs_host'), Type.Literal('not_allowlisted'), Type.Literal('ip_literal'), Type.Literal('private_address'), Type.Literal('bad_request'), Type.Literal('bypassed_proxy')],
      {
        description:
          'docs_host: use read_docs (a bypass attempt) · not_allowlisted: the host, or the port (the message names it), is on no list · ip_literal: a raw IP not explicitly listed · private_address: the name resolved to a loopback, private, link-local or other non-public address and is not a configured registry endpoint · bad_request: no usable host · bypassed_proxy: a DNS lookup (method DNS) or a dial to port 80/443 (method TCP) by a tool that ignored the proxy; the enforced backend refuses and records it.',
      },
    ),
    message: Type.String({ description: 'The one line the 403 told the command.' }),
  }),
});

export const EgressError = defineEvent({
  type: 'egress.error',
  emittedBy: ['qs-sandbox', 'qs-agent', 'qs-check'],
  doc: 'An allowed connection failed upstream (DNS, refused, reset, timeout): infrastructure, not the docs.',
  payload: Type.Object({
    ...EgressFields,
    error: Type.String({ minLength: 1, description: 'One line, e.g. `getaddrinfo ENOTFOUND …`.' }),
  }),
});

export const SandboxDenied = defineEvent({
  type: 'sandbox.denied',
  emittedBy: ['qs-sandbox', 'qs-agent', 'qs-check'],
  doc: 'The enforced backend refused a command a filesystem access: a write outside the writable folders, or an access to a host path the sandbox does not show (its root is assembled from an allow-list: the host homes, /root, /srv, /run, most of /etc and every other folder are absent). The kernel tells only the command, so this is read from the error line the command printed (coreutils, bash, node, python shapes); an error the tool swallowed is not seen. parent_id is the command: its tool.call, setup.started or check.started. One event per distinct path and operation per command, at most 20.',
  payload: Type.Object({
    path: Type.String({ minLength: 1, description: 'The path as the tool printed it (relative paths are relative to where the command was).' }),
    operation: Type.Union([Type.Literal('write'), Type.Literal('read')], { description: 'write: create, change or remove · read: open, list or stat.' }),
    reason: Type.Union([Type.Literal('read_only'), Type.Literal('hidden')], {
      description: 'read_only: outside the workspace, home and tmp everything is mounted read-only (EROFS) · hidden: the host has this path, the sandbox does not show it (ENOENT).',
    }),
    detected_from: Type.Union([Type.Literal('stderr'), Type.Literal('stdout')], { description: 'The stream the error line came on; an error line on stdout is usually a tool run with 2>&1.' }),
    line: Type.String({ description: 'The error line, trimmed, at most 300 characters.' }),
  }),
});

export const SandboxLimitHit = defineEvent({
  type: 'sandbox.limit_hit',
  emittedBy: ['qs-sandbox', 'qs-agent', 'qs-check'],
  doc: 'A command ran into one of the sandbox\'s own resource limits (sandbox.ready limits): a fork or thread refused at the process limit, an allocation refused or a process killed at the memory limit, a private tmpfs full, or the host\'s disk under the workspace full (`disk`). With cgroups it is read from the sandbox\'s own counters, before and after the command (so a background process of an earlier command that hits the limit meanwhile counts too); otherwise, and for what no counter sees, from the error lines of a command that failed (bash, dash, python, node, C++, Go, Java shapes). parent_id is the command: its tool.call, setup.started or check.started. At most one event per limit per command.',
  payload: Type.Object({
    limit: Type.String({ minLength: 1, description: 'The limit as sandbox.ready lists it: `processes`, `memory`, `/tmp`, `/var/tmp` or `/dev/shm`; or `disk`, the host\'s disk that holds the workspace, home and tmp (no limit of the sandbox\'s and not in sandbox.ready: `value` is the disk\'s size, `enforced_by` none).' }),
    value: Type.Integer({ minimum: 0, description: 'The limit in force, in `unit`.' }),
    unit: Type.Union([Type.Literal('count'), Type.Literal('bytes')]),
    enforced_by: LimitEnforcer,
    exit_code: Type.Integer({ description: 'The command\'s exit code: a hit in a command that still exited 0 is on the record but decided nothing.' }),
    detected_from: Type.Union([Type.Literal('counter'), Type.Literal('stderr'), Type.Literal('stdout'), Type.Literal('statfs')], {
      description: 'counter: the sandbox\'s cgroup counter moved while the command ran (`counter` names it) · stderr / stdout: an error line of a command that failed, on that stream (the text fallback: rlimits count nothing) · statfs: a failed command said `No space left on device` and that tmpfs (or the host disk under the layout) was full when it ended.',
    }),
    counter: Type.Optional(Type.String({ description: 'The cgroup file and key that moved: `pids.events max`, `memory.events oom_kill`, `memory.oom_control oom_kill`….' })),
    count: Type.Optional(Type.Integer({ minimum: 1, description: 'How much it moved over the command: forks refused, OOM kills.' })),
    line: Type.Optional(Type.String({ description: 'The first error line that says so, trimmed, at most 300 characters (also with a counter, when the command printed one).' })),
  }),
});
