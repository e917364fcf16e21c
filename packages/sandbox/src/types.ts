// The public shape of the sandbox library: options, the Sandbox handle, command results and descriptions.
import type { Payload } from '@quickloop/events';
import type { Denial } from './denials.js';
import type { LimitHit } from './limit-hits.js';
import type { LimitInForce, SandboxLimits } from './limits.js';
import type { Forward, ForwardInForce } from './forwards.js';

export type { Forward, ForwardInForce } from './forwards.js';

export type { LimitInForce, SandboxLimits } from './limits.js';

export type { Denial } from './denials.js';

export type { LimitHit } from './limit-hits.js';

/** What the shell may reach (the `policy` of task.loaded and sandbox.ready). */
export type EgressPolicy = Payload<'task.loaded'>['policy'];

/** A backend that can be asked for; `auto` picks the best one available and says why. */
export type BackendChoice = 'auto' | 'bwrap' | 'local';

/** A backend that ran; `docker` is reserved for the container backend of a later release. */
export type BackendName = 'bwrap' | 'local' | 'docker';

/** The folders of one sandbox: the workspace and its siblings, never nested in one another. */
export interface WorkspaceLayout {
  /** Holds the three folders below; removing it removes the sandbox. */
  root: string;
  /** Where commands run; starts empty. */
  workspace: string;
  /** HOME of commands. */
  home: string;
  /** TMPDIR of commands. */
  tmp: string;
}

/** Every egress decision, shaped as the payload of the egress.* event it becomes. */
export type EgressEvent =
  | ({ type: 'egress.allowed' } & Payload<'egress.allowed'>)
  | ({ type: 'egress.blocked' } & Payload<'egress.blocked'>)
  | ({ type: 'egress.error' } & Payload<'egress.error'>);

export interface OpenOptions {
  /** Re-open an existing workspace (from a sandbox.ready description); by default a fresh one is made. */
  workspace?: WorkspaceLayout;
  /** Where a fresh workspace's root is made (default: the OS temp folder). */
  baseDir?: string;
  policy: EgressPolicy;
  /**
   * A fresh sandbox adds the install hosts (INSTALL_HOSTS: what ordinary installs reach besides the
   * registries) to `policy.registries` unless this is false or the task said network.only. A
   * re-opened one uses `policy` as given: it is the effective policy its sandbox.ready carried.
   */
  installHosts?: boolean;
  /** Default `auto`. */
  backend?: BackendChoice;
  /** `local` enforces nothing and is refused unless this is true. */
  allowUnenforced?: boolean;
  /** The host environment PATH, LANG and LC_ALL are copied from (nothing else is). Default process.env. */
  env?: Record<string, string | undefined>;
  /** Called for every egress decision, synchronously, in the order decisions are made. */
  onEgress?: (event: EgressEvent) => void;
  /** Resource limits of the enforced backend (DEFAULT_LIMITS for what is not given); a re-opened sandbox passes the ones its sandbox.ready listed. */
  limits?: Partial<SandboxLimits>;
  /**
   * Harness services the commands may dial on 127.0.0.1 (a model forwarder): each port inside is
   * piped to the harness's Unix socket. Under `local` a free host port is used; `describe().forwards`
   * says which.
   */
  forwards?: Forward[];
  /**
   * Let the proxy through to the policy's docs hosts (recorded as `explicit`, the docs host the
   * rule), for an agent that reads the docs with its own tools. The described policy is unchanged.
   */
  docsReachable?: boolean;
}

export interface ExecOptions {
  /** Killed (with everything it started) after this long; the result then has exitCode 124. */
  timeoutMs?: number;
  /** Output kept, head and tail, with a marker between (default 20000). */
  maxOutputChars?: number;
  /** Aborting kills the command like a timeout does, but the result says timedOut: false. */
  signal?: AbortSignal;
  /** Variables added to the scrubbed environment (e.g. QS_PORT for a check); never secrets. */
  env?: Record<string, string>;
}

export interface ExecResult {
  /** The exit code; 124 on timeout, 128+N when killed by signal N. */
  exitCode: number;
  /** stdout and stderr merged in arrival order, head+tail truncated. */
  output: string;
  /** Length of the merged output before truncation. */
  originalChars: number;
  truncated: boolean;
  /** The last non-empty line of the whole output, trimmed (its first 4096 characters), even where truncation cut it. */
  lastLine?: string;
  timedOut: boolean;
  durationMs: number;
  /**
   * Filesystem accesses the enforced backend refused, read from the command's error lines before any
   * truncation (sandbox.denied payloads): distinct by path and operation, at most 20. Always empty
   * under `local`, which refuses nothing.
   */
  denials: Denial[];
  /**
   * The sandbox limits the command ran into (sandbox.limit_hit payloads, at most one per limit): the
   * sandbox's cgroup counters read before and after it, else the error lines of a command that
   * failed (limit-hits.ts). Always empty under `local`, which enforces none.
   */
  limitHits: LimitHit[];
}

/** What goes into sandbox.ready (besides `keep`, which is the stage's business). */
export interface SandboxDescription extends WorkspaceLayout {
  backend: BackendName;
  enforced: boolean;
  /** Why this backend: asked for, or what `auto` found. */
  reason: string;
  policy: EgressPolicy;
  /** The limits in force and what enforces each; empty under `local`. */
  limits: LimitInForce[];
  /** The harness services on the commands' loopback (OpenOptions.forwards); absent when none. */
  forwards?: ForwardInForce[];
}

export interface Sandbox {
  describe(): SandboxDescription;
  /** Runs `bash -c command` in the workspace under the policy. Never throws for a failing command. */
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  /**
   * Kills every process the sandbox started (background ones included), stops the egress proxy and
   * waits for its last events. The folders stay: removing them is `removeWorkspace`'s job.
   */
  close(): Promise<CloseReport>;
}

export interface CloseReport {
  /**
   * Command lines of the processes that had outlived the command that started them (background
   * jobs, daemons), at most 20: close() killed them, since nothing outlives its stage.
   */
  leftRunning: string[];
  /**
   * Egress decisions of this session the record left out: past its first 5000, only the first of
   * each kind (type, method, host, port, reason) is an event (egress-record.ts). Zero for a session
   * that made fewer.
   */
  egressUnrecorded: number;
}
