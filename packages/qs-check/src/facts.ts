// Folds one run's events into what the check and the classification need.
import type { Payload, StopReasonName, WireEvent } from '@quickloop/events';
import { LIMIT_FLAGS, limitKeyOf } from '@quickloop/sandbox';
import { firstMatch } from '@quickloop/sandbox/hosts';

export type TaskLoaded = Payload<'task.loaded'>;
export type SandboxReady = Payload<'sandbox.ready'>;

/** A sandbox limit a failed command (or the failed check) ran into, with the command it stopped. */
export type LimitHitFact = Payload<'sandbox.limit_hit'> & {
  /** The event that started the command (tool.call, setup.started); absent for the check. */
  parent_id?: string;
  /** The command as run (a bash call), `setup step N: COMMAND`, or `the success check`. */
  command: string;
  kind: 'bash' | 'setup' | 'check';
};

export interface RunFacts {
  runId: string;
  loaded?: TaskLoaded;
  ready?: SandboxReady;
  setupFailure?: string;
  agent?: { stopReason: StopReasonName; detail: string; errorKind?: string; name?: string };
  /** An agent.started was seen: an agent stage began this run (whether or not it finished). */
  agentStarted?: boolean;
  /**
   * A recorded run's tool results that differ from the recording in what a model acts on (an exit
   * code, a timeout, a tool error, a page's status or content), in order; differing output alone
   * (a timestamp, a path) is not here.
   */
  divergences: Array<{ turn: number; callId: string; tool: string; field: string; recorded: string; actual: string }>;
  /** Connections let through to a docs host (a CLI agent reads the docs with its own tools: no docs.read). */
  docsHostConnections: number;
  /** Output of successful bash calls, in order: the session output for expect_output. */
  okOutputs: string[];
  /** Bash calls so far, and those among the successful ones whose output was cut to max_output_chars (head and tail kept). */
  bashCalls: number;
  cutOutputs: Array<{ command: number; originalChars: number }>;
  pagesRead: string[];
  /** Pages that could not be read (docs.error), in order: a route page among them, never read after, leaves the run without evidence. */
  docsErrors: Array<{ url: string; error: string; reason?: string; status?: number }>;
  /**
   * Egress errors and blocks the harness answers for: those of a command that failed (a setup
   * command, a bash tool call) and those of the check. See `attribute` for how each is tied to its command.
   */
  egressErrors: number;
  egressBlocked: number;
  /** The first of those, in words (what the proxy said, host and port included): a detail names the connection that decided. */
  egressErrorNote?: string;
  egressBlockedNote?: string;
  /** sandbox.denied of a command that failed, or of the check. */
  denied: number;
  docsBypass: number;
  /** The command running now (its tool.call or setup.started id) and what it met so far. */
  open?: { id: string; egressErrors: number; egressBlocked: number; errorNote?: string; blockedNote?: string };
  /** sandbox.denied counts by the id of the command they name (parent_id). */
  deniedBy: Map<string, number>;
  /** Sandbox limits that failed commands, or the failed check, ran into, in order (see `end` for which count). */
  limitHits: LimitHitFact[];
  /** sandbox.limit_hit events by the id of the command they name, and each command's words by its id. */
  limitBy: Map<string, Array<Payload<'sandbox.limit_hit'>>>;
  commands: Map<string, { command: string; kind: 'bash' | 'setup' }>;
  /** An upstream stage already ended this run (run.failed / run.interrupted / run.completed). */
  upstreamTerminal?: string;
  /** The check's result; `limitHits` are its own (sandbox.limit_hit of the check), whatever it exited with. */
  check?: { exitCode: number; passed: boolean; reason: string; syntaxError?: string; timedOut?: boolean; limitHits?: ReadonlyArray<Payload<'sandbox.limit_hit'>> };
  /** The first error diagnostic of the run: its task did not validate, so nothing was meant to run. */
  invalid?: string;
  finished: boolean;
  /** Its folders were dealt with (harvested, then removed or kept): once, whatever happened after. */
  cleaned?: boolean;
}

export function newFacts(runId: string): RunFacts {
  return { runId, okOutputs: [], bashCalls: 0, cutOutputs: [], pagesRead: [], docsErrors: [], divergences: [], docsHostConnections: 0, egressErrors: 0, egressBlocked: 0, denied: 0, docsBypass: 0, deniedBy: new Map(), limitHits: [], limitBy: new Map(), commands: new Map(), finished: false };
}

/** Adds one event to its run's facts; events of types it does not know are ignored. */
export function observe(f: RunFacts, event: WireEvent): void {
  const e = event as Record<string, unknown>;
  switch (event.type) {
    case 'task.loaded':
      f.loaded = event as unknown as TaskLoaded;
      break;
    case 'sandbox.ready':
      f.ready = event as unknown as SandboxReady;
      break;
    case 'setup.failed':
      f.setupFailure = String(e.detail);
      break;
    case 'agent.started':
      f.agentStarted = true;
      break;
    case 'agent.completed':
      f.agent = { stopReason: e.stop_reason as StopReasonName, detail: String(e.detail), ...(typeof e.error_kind === 'string' ? { errorKind: e.error_kind } : {}), ...(typeof e.agent === 'string' ? { name: e.agent } : {}) };
      break;
    case 'replay.diverged':
      if (e.field !== 'output') f.divergences.push({ turn: Number(e.turn), callId: String(e.call_id), tool: String(e.tool), field: String(e.field), recorded: String(e.recorded), actual: String(e.actual) });
      break;
    case 'tool.call':
      if (e.tool === 'bash') f.bashCalls += 1;
      if (e.tool === 'bash' && typeof e.id === 'string') {
        begin(f, e.id);
        f.commands.set(e.id, { command: String(e.command), kind: 'bash' });
      }
      break;
    case 'setup.started':
      if (typeof e.id === 'string') {
        begin(f, e.id);
        f.commands.set(e.id, { command: `setup step ${Number(e.index) + 1}: ${String(e.command)}`, kind: 'setup' });
      }
      break;
    case 'tool.result':
      if (e.tool === 'bash' && e.exit_code === 0) f.okOutputs.push(String(e.output));
      if (e.tool === 'bash' && e.exit_code === 0 && e.truncated === true) f.cutOutputs.push({ command: f.bashCalls, originalChars: Number(e.original_chars) });
      end(f, e.parent_id, e.exit_code !== 0 || e.timed_out === true);
      break;
    case 'setup.completed':
      end(f, e.parent_id, e.exit_code !== 0 || e.timed_out === true);
      break;
    case 'sandbox.denied': {
      const by = typeof e.parent_id === 'string' ? e.parent_id : f.open?.id;
      if (by !== undefined) f.deniedBy.set(by, (f.deniedBy.get(by) ?? 0) + 1);
      break;
    }
    case 'sandbox.limit_hit': {
      const by = typeof e.parent_id === 'string' ? e.parent_id : f.open?.id;
      if (by !== undefined) f.limitBy.set(by, [...(f.limitBy.get(by) ?? []), event as unknown as Payload<'sandbox.limit_hit'>]);
      break;
    }
    case 'diagnostic':
      if (e.severity === 'error' && f.invalid === undefined) f.invalid = `${String(e.path ?? '')}${e.line !== undefined ? `:${String(e.line)}` : ''}: ${String(e.message)}`;
      break;
    case 'docs.read':
      f.pagesRead.push(String(e.url));
      break;
    case 'docs.error':
      f.docsErrors.push({ url: String(e.url), error: String(e.error), ...(typeof e.reason === 'string' ? { reason: e.reason } : {}), ...(typeof e.status === 'number' ? { status: e.status } : {}) });
      break;
    case 'egress.error':
      if (f.open) {
        f.open.egressErrors += 1;
        f.open.errorNote ??= egressNote(e, e.error);
      }
      break;
    case 'egress.allowed':
      if (isDocsHost(f, String(e.host))) f.docsHostConnections += 1;
      break;
    case 'egress.blocked':
      if (e.reason === 'docs_host') f.docsBypass += 1;
      if (f.open) {
        f.open.egressBlocked += 1;
        f.open.blockedNote ??= egressNote(e, e.message);
      }
      break;
    case 'run.completed':
    case 'run.failed':
    case 'run.interrupted':
      f.upstreamTerminal = event.type;
      break;
  }
}

/** One connection in words: what the proxy said, with the host and port in front unless it names them. */
function egressNote(e: Record<string, unknown>, said: unknown): string {
  const at = `${String(e.host)}:${String(e.port)}`;
  if (typeof said !== 'string' || said === '') return at;
  return said.includes(String(e.host)) ? said : `${at}: ${said}`;
}

/**
 * Attribution. A stage runs its commands one after another and the proxy reports each decision
 * before it answers the connection, so an egress event that sits between a command's start
 * (tool.call, setup.started) and its end (tool.result, setup.completed) in the stream is that
 * command's. It counts against the harness only when that command failed: a telemetry call that
 * failed quietly inside a step that succeeded changes nothing. Egress outside every command
 * (a server a finished step left running in the background, between steps) is nobody's and
 * counts for nothing; when such a server is asked by a later command, its egress falls inside
 * that command and counts with it. sandbox.denied names its command by parent_id.
 */
function begin(f: RunFacts, id: string): void {
  f.open = { id, egressErrors: 0, egressBlocked: 0 };
}

function end(f: RunFacts, parentId: unknown, failed: boolean): void {
  const open = f.open;
  const id = typeof parentId === 'string' ? parentId : open?.id;
  if (open && open.id === id) {
    f.open = undefined;
    if (failed) {
      f.egressErrors += open.egressErrors;
      f.egressBlocked += open.egressBlocked;
      f.egressErrorNote ??= open.errorNote;
      f.egressBlockedNote ??= open.blockedNote;
    }
  }
  if (failed && id !== undefined) f.denied += f.deniedBy.get(id) ?? 0;
  if (id === undefined) return;
  const command = f.commands.get(id);
  if (failed) {
    for (const hit of f.limitBy.get(id) ?? []) f.limitHits.push({ ...payloadOf(hit), parent_id: id, command: command?.command ?? '(a command)', kind: command?.kind ?? 'bash' });
  } else if (command?.kind === 'bash') {
    // The same command run again and got through: what stopped it the first time decided nothing
    // (an agent that retried `npm test` after an OOM kill). Any other command's success excuses nothing.
    f.limitHits = f.limitHits.filter((h) => !(h.kind === 'bash' && h.command === command.command));
  }
}

/** The payload of a sandbox.limit_hit event, without its envelope. */
function payloadOf(hit: Payload<'sandbox.limit_hit'>): Payload<'sandbox.limit_hit'> {
  const { limit, value, unit, enforced_by, exit_code, detected_from, counter, count, line } = hit;
  return { limit, value, unit, enforced_by, exit_code, detected_from, ...(counter !== undefined ? { counter } : {}), ...(count !== undefined ? { count } : {}), ...(line !== undefined ? { line } : {}) };
}

/** The failed check's own limit hits: they count as a failed command's do. */
export function observeCheckLimits(f: RunFacts, hits: ReadonlyArray<Payload<'sandbox.limit_hit'>>): void {
  for (const hit of hits) f.limitHits.push({ ...payloadOf(hit), command: 'the success check', kind: 'check' });
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

function bytesText(n: number): string {
  if (n >= GiB && n % GiB === 0) return `${n / GiB} GiB`;
  if (n >= MiB && n % MiB === 0) return `${n / MiB} MiB`;
  return `${n} bytes`;
}

/**
 * One limit hit in words, for run.completed's detail: who ran into which limit, its value and what
 * enforces it, the evidence, and how it could be raised (it cannot, from a task).
 */
export function limitHitDetail(hit: LimitHitFact): string {
  const words = hit.command.replace(/\s+/g, ' ').trim();
  const who = hit.kind === 'bash' ? `the command \`${words.length > 120 ? `${words.slice(0, 117)}...` : words}\`` : words.slice(0, 160);
  if (hit.limit === 'disk') {
    // The host's disk under the layout (sandbox limit-hits.ts DISK): no limit of the sandbox's, no flag raises it.
    const said = hit.line !== undefined ? `"${hit.line.slice(0, 160)}"` : 'No space left on device';
    const seen = hit.detected_from === 'statfs' ? `it said ${said} and the disk was full when it ended` : `its output says ${said} of a file in the sandbox's folders`;
    return `${who} ran out of the host's disk that holds the sandbox's folders (${bytesText(hit.value)}, which the sandbox does not cap): ${seen}. That disk is the machine's, not the docs', so the run says nothing about the docs; free space on that disk, or move the sandboxes to a larger one (TMPDIR), if the quickstart needs more`;
  }
  const what = hit.limit === 'processes' ? 'process limit' : hit.limit === 'memory' ? 'memory limit' : `size of its private ${hit.limit}`;
  const value = hit.unit === 'count' ? `${hit.value} processes and threads at once${hit.enforced_by === 'rlimit' ? ' for the sandbox user' : ''}` : `${bytesText(hit.value)}${hit.enforced_by === 'rlimit' ? ' per process' : ''}`;
  const said = hit.line !== undefined ? `"${hit.line.slice(0, 160)}"` : '';
  const evidence =
    hit.detected_from === 'counter'
      ? `${hit.counter ?? 'its cgroup counter'} rose by ${hit.count ?? 1}${said ? ` and its output says ${said}` : ''}`
      : hit.detected_from === 'statfs'
        ? `it said ${said} and ${hit.limit} was full when it ended`
        : `its output says ${said} (read from the text${hit.enforced_by === 'rlimit' ? ': rlimits count nothing' : ''})`;
  return `${who} ran into the sandbox's ${what} (${value}, enforced by ${hit.enforced_by}): ${evidence}. That limit is the harness's, not the docs', so the run says nothing about the docs; raise it with qs run --${LIMIT_FLAGS[limitKeyOf(hit.limit) ?? 'tmpBytes']} (or qs-sandbox's) if the quickstart needs more`;
}

/** A command that never reported its end did not succeed: what it met counts (called before classifying). */
export function closeOpen(f: RunFacts): void {
  if (f.open) end(f, f.open.id, true);
}

/** The check's own egress and denials: the harness answers for all of them (qs-check's proxy, during the check). */
export function observeCheckEgress(f: RunFacts, event: { type: string } & Record<string, unknown>): void {
  if (event.type === 'egress.error') {
    f.egressErrors += 1;
    f.egressErrorNote ??= egressNote(event, event.error);
  } else if (event.type === 'egress.blocked') {
    f.egressBlocked += 1;
    f.egressBlockedNote ??= egressNote(event, event.message);
  }
}

/** The same page whatever the fragment: a route entry `page.html#install` is read as `page.html`. */
function samePage(url: string): string {
  try {
    const u = new URL(url);
    u.hash = '';
    return u.href;
  } catch {
    return url;
  }
}

/** A docs answer that is the site's failure, not the task's: a 5xx, a 429 or 408, or no answer at all. */
function siteFailed(e: RunFacts['docsErrors'][number]): boolean {
  if (e.reason === 'network') return true;
  return e.reason === 'http_status' && e.status !== undefined && (e.status >= 500 || e.status === 429 || e.status === 408);
}

/**
 * The first page of the task's docs route that the run tried to read and never could. A run that
 * failed without the quickstart it was to follow says nothing about that quickstart: the site was
 * down (infra), or the route, the allow list or the robots.txt do not fit the site (the task's).
 */
export function unreadRoute(f: RunFacts): { infra: boolean; detail: string; page: string; error: string } | undefined {
  const read = new Set(f.pagesRead.map(samePage));
  for (const page of f.loaded?.task.docs.path ?? []) {
    const key = samePage(page);
    if (read.has(key)) continue;
    const failure = f.docsErrors.find((e) => samePage(e.url) === key);
    if (failure === undefined) continue;
    const infra = siteFailed(failure);
    const reader = failure.reason === 'not_text' || failure.reason === 'too_large';
    const whose = infra ? 'the docs site failed' : reader ? 'the docs reader gives an agent no page that is not text or is too large' : "the task's route, docs.allow or the site's robots.txt do not fit the site";
    return { infra, detail: `docs route page ${page} could not be read (${failure.error}): ${whose}, so the run says nothing about the docs`, page, error: failure.error };
  }
  return undefined;
}

/**
 * The reasons the check's helpers (packages/task/prelude.sh) give when they could not check at all:
 * a helper called without what it needs or with what it cannot use (a success script's own call),
 * or a sandbox without what the helper runs (a fetcher, a temporary folder, the session log). None
 * looked at what the run left, so none is a verdict on the docs. facts.test.ts holds this list to
 * every qs_fail of the prelude.
 */
export const HELPER_FAILURES: readonly RegExp[] = [
  /^cannot create a temporary directory$/,
  /^qs_serve needs a command$/,
  /^qs_wait_http needs a URL or a path$/,
  /^qs_wait_http: .* needs a value$/,
  /^qs_wait_http: unknown option .*$/,
  /^qs_wait_http: --json-ere needs what to show and a pattern$/,
  /^qs_wait_http needs curl, python3, node or wget in the sandbox$/,
  /^qs_wait_http: grep could not use the pattern .*$/,
  /^qs_expect_output needs --contains or --matches$/,
  /^there is no session log \(.*\), so nothing the run printed can be checked$/,
  /^qs_expect_output: .* needs a value$/,
  /^qs_expect_output: .* has an empty pattern, which matches anything$/,
  /^qs_expect_output: unknown option .*$/,
  /^qs_expect_output: grep could not use the pattern .*$/,
];

/** The failed check's reason, when it is one of its helpers' own failures (`HELPER_FAILURES`), without its `check failed: `. */
export function helperFailure(f: RunFacts): string | undefined {
  const reason = f.check?.passed === false ? f.check.reason : undefined;
  if (reason === undefined || !reason.startsWith('check failed: ')) return undefined;
  const why = reason.slice('check failed: '.length);
  return HELPER_FAILURES.some((m) => m.test(why)) ? why : undefined;
}

/** The last line qs_expect_output (packages/task/prelude.sh) prints when a pattern is nowhere in the session log. */
const EXPECT_OUTPUT_MISS = 'check failed: nothing the run printed ';

/**
 * expect_output reads the session log, made of the outputs the stream carries, which are cut to
 * max_output_chars (head and tail kept). When it missed and some output was cut, the text may well
 * have been printed in the part nobody kept: the budget, not the docs, decided. Says why, or undefined.
 */
export function sessionCut(f: RunFacts): string | undefined {
  const reason = f.check?.reason;
  if (f.check?.passed !== false || reason === undefined || !reason.startsWith(EXPECT_OUTPUT_MISS) || f.cutOutputs.length === 0) return undefined;
  const limit = f.loaded?.task.budgets.max_output_chars;
  const cut = f.cutOutputs.map((c) => `command ${c.command} printed ${c.originalChars} characters`).join(', ');
  return `${reason}; but ${cut}, cut to max_output_chars (${limit ?? '?'}) with the middle dropped, so the check never saw all of it (raise budgets.max_output_chars)`;
}

/** A host the task reads its docs from (docs.allow, which holds the route's hosts): the name or a subdomain of it. */
function isDocsHost(f: RunFacts, host: string): boolean {
  return firstMatch(host, f.loaded?.task.docs.allow ?? []) !== undefined;
}

/** One line of the check's reason, for a detail that says why the run is no evidence. */
const because = (f: RunFacts): string => (f.check?.reason ? ` (${f.check.reason})` : '');

/**
 * A run whose agent read none of the docs: no page read through read_docs, and no connection to a
 * docs host (how a CLI agent reads them). Whatever it did, it did not follow these docs, so a
 * check that failed after it says nothing about them. The replay agent runs the documented
 * commands, so what it reads is beside the point; an agent stage that names no agent is not judged.
 */
export function docsUnread(f: RunFacts): { infra: boolean; detail: string } | undefined {
  const agent = f.agent?.name;
  if (agent === undefined || agent === 'replay' || f.pagesRead.length > 0 || f.docsHostConnections > 0) return undefined;
  // Reads that all failed for the site's reasons (5xx, no answer): the site, not the agent, kept the docs from it.
  const site = f.docsErrors.find(siteFailed);
  if (site !== undefined) return { infra: true, detail: `the agent could read no page of the docs (${site.url}: ${site.error}): the docs site failed, so the run says nothing about the docs${because(f)}` };
  const tried = f.docsErrors.length > 0 ? `; the ${f.docsErrors.length === 1 ? 'one page it asked for' : `${f.docsErrors.length} pages it asked for`} could not be read (${f.docsErrors[0]?.url}: ${f.docsErrors[0]?.error})` : '';
  return { infra: false, detail: `the agent read no page of the docs (no read_docs call answered, no connection to a docs host${tried}): it gave up or worked without them, so its failure says nothing about them${because(f)}` };
}

/**
 * A recorded run whose re-driven tool results differ from the recording where a model acts on them:
 * the turns after that answer what the recording saw, not what this run saw (a model would have
 * read the new exit code or page), so a failure after it says nothing about the docs.
 */
export function recordedDiverged(f: RunFacts): string | undefined {
  const d = f.divergences[0];
  if (d === undefined) return undefined;
  const cut = (v: string): string => {
    const line = v.replace(/\s+/g, ' ').trim();
    return line.length > 80 ? `${line.slice(0, 77)}...` : line;
  };
  const more = f.divergences.length > 1 ? ` (and ${f.divergences.length - 1} more)` : '';
  return `the recorded run's turn ${d.turn} ${d.tool} call ${d.callId} got another result than the recording (${d.field}: recorded ${cut(d.recorded)}, now ${cut(d.actual)})${more}, and the turns after it answer the recording, not this run, so its failure says nothing about the docs${because(f)}`;
}
