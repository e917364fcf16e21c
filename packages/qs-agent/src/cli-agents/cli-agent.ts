// `--agent claude-code` and `--agent codex`: the model CLI runs inside the sandbox as the agent; its key stays outside, in the forwarder.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '@quickloop/cli-kit';
import type { Payload } from '@quickloop/events';
import { parseCliOutput, type ErrorKind } from '@quickloop/models/cli';
import { DEFAULT_PRICE_BOOK, usdFor } from '@quickloop/models/core';
import { omissionMarker, shownInside, type Forward } from '@quickloop/sandbox';
import type { Agent, AgentContext, AgentOutcome, Prepared } from '../agents/agent.js';
import { cliPrompt } from './prompt.js';
import { addUsage, startForwarder, ZERO, type Forwarder, type ModelCall, type RefusedRequest, type Usage5, type Vendor } from './forwarder.js';
import { findProgram, vendorCredentials } from './host.js';

/** Where the forwarder answers inside the sandbox: next to the proxy's 3128, away from the ports quickstarts serve on. */
export const FORWARD_PORT = 3129;
export const FORWARD_NAME = 'model-api';

/** What the CLI inside is given for a key: it is not one, and the forwarder drops it. */
export const PLACEHOLDER_KEY = 'quickloop-placeholder-key-not-a-secret';

/** The prefix of the run's folder under the sandbox's TMPDIR (the CLI's stderr), removed when it ends. */
const FILES = '.quickloop-agent';
/** Between the CLI's stdout (its JSON) and the tail of its stderr in the command's output. */
const STDERR_MARK = '--- quickloop: stderr of the CLI ---';
/** The CLI's JSON output kept (head and tail: the result is its last line). */
const MAX_CLI_OUTPUT = 32 * 1024 * 1024;

interface CliSpec {
  name: string;
  program: string;
  vendor: Vendor;
  mode: 'claude-json' | 'codex-json';
  /** The shell line run in the workspace (files are relative to TMPDIR's run folder `$Q`). */
  command(task: AgentContext['task'], port: number): string;
  /** Variables for the CLI (no secret among them). */
  env(port: number, home: string): Record<string, string>;
  /** Files the CLI needs before it starts, written by the command itself inside the sandbox: path (under $HOME) → text. */
  files?(port: number): Record<string, string>;
  /** Whether a tool name is the CLI's shell tool, and the command line it ran. */
  bashCommand(name: string, input: Record<string, unknown>): string | undefined;
  /** The CLI's own results of its shell tool calls, from its JSON output, keyed by call id or taken in order. */
  toolResults(stdout: string): { byId: Map<string, ToolOutcome>; inOrder: ToolOutcome[] };
}

interface ToolOutcome {
  exitCode: number;
  output: string;
}

const sh = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

function lines(stdout: string): any[] {
  const out: any[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // A line cut by a kill, or the CLI's own noise: the forwarder's record does not depend on it.
    }
  }
  return out;
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((c) => (typeof c?.text === 'string' ? c.text : '')).join('') : '';

const CLAUDE: CliSpec = {
  name: 'claude-code',
  program: 'claude',
  vendor: 'anthropic',
  mode: 'claude-json',
  command: (task) =>
    [
      'claude', '-p', '--output-format', 'stream-json', '--verbose', '--no-session-persistence',
      // The sandbox is the enforcement: inside it the CLI runs its tools without asking anyone.
      '--dangerously-skip-permissions',
      '--max-turns', String(task.budgets.max_turns),
    ].join(' '),
  env: (port) => ({
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
    ANTHROPIC_API_KEY: PLACEHOLDER_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    // Its own backoff would spend the run's deadline on an outage; a few retries, each recorded.
    CLAUDE_CODE_MAX_RETRIES: '3',
  }),
  bashCommand: (name, input) => (name === 'Bash' && typeof input.command === 'string' ? input.command : undefined),
  toolResults(stdout) {
    const byId = new Map<string, ToolOutcome>();
    for (const e of lines(stdout)) {
      if (e?.type !== 'user' || !Array.isArray(e.message?.content)) continue;
      for (const c of e.message.content) {
        if (c?.type !== 'tool_result' || typeof c.tool_use_id !== 'string') continue;
        const text = textOf(c.content);
        // Claude Code's Bash tool says a failure's status in words on the result's first line.
        const code = /^(?:Error: )?Exit code (\d+)/.exec(text);
        byId.set(c.tool_use_id, { exitCode: code ? Number(code[1]) : c.is_error === true ? 1 : 0, output: text });
      }
    }
    return { byId, inOrder: [] };
  },
};

const CODEX: CliSpec = {
  name: 'codex',
  program: 'codex',
  vendor: 'openai',
  mode: 'codex-json',
  // codex's own sandbox needs namespaces this one does not give; the sandbox it runs in is the enforcement.
  command: () => ['codex', 'exec', '--json', '--skip-git-repo-check', '--ephemeral', '--dangerously-bypass-approvals-and-sandbox', '-'].join(' '),
  env: (_port, home) => ({ CODEX_HOME: join(home, '.codex'), QUICKLOOP_PLACEHOLDER_KEY: PLACEHOLDER_KEY }),
  files: (port) => ({
    '.codex/config.toml': [
      'model_provider = "quickloop"',
      '[model_providers.quickloop]',
      'name = "quickloop forwarder"',
      `base_url = "http://127.0.0.1:${port}/v1"`,
      // The placeholder's variable; the forwarder puts the real key on the way out.
      'env_key = "QUICKLOOP_PLACEHOLDER_KEY"',
      'wire_api = "responses"',
      '',
    ].join('\n'),
  }),
  bashCommand(name, input) {
    if (name !== 'exec_command' && name !== 'shell' && name !== 'local_shell') return undefined;
    const c = input.cmd ?? input.command;
    if (typeof c === 'string') return c;
    if (Array.isArray(c) && c.every((a) => typeof a === 'string')) return c.join(' ');
    return undefined;
  },
  toolResults(stdout) {
    const inOrder: ToolOutcome[] = [];
    for (const e of lines(stdout)) {
      if (e?.type === 'item.completed' && e.item?.type === 'command_execution') {
        inOrder.push({ exitCode: typeof e.item.exit_code === 'number' ? e.item.exit_code : 1, output: String(e.item.aggregated_output ?? '') });
      }
    }
    return { byId: new Map(), inOrder };
  },
};

/** What prepare made for one run: the forwarder and its private socket folder. */
interface CliPrepared extends Prepared {
  forwarder: Forwarder;
  vendorHost: { host: string; port: number };
  /** Where the forwarder's refusals and budget go once the run is known. */
  sink: { onRefused?: (r: RefusedRequest) => void; onBudget?: (which: 'token_budget' | 'max_turns') => void; onStripped?: (removed: string[], target: string) => void };
  baseUrl: string;
}

function cutOutput(text: string, max: number): { output: string; original: number; truncated: boolean } {
  if (text.length <= max) return { output: text, original: text.length, truncated: false };
  const head = text.slice(0, Math.ceil(max / 2));
  const tail = text.slice(text.length - Math.floor(max / 2));
  return { output: head + omissionMarker(text.length - head.length - tail.length) + tail, original: text.length, truncated: true };
}

function cliAgent(spec: CliSpec): Agent {
  return {
    name: spec.name,
    preflight(env, backend) {
      const found = findProgram(spec.program, env.PATH ?? '');
      if (!found) throw new UsageError(`--agent ${spec.name} needs \`${spec.program}\` on PATH, and it is not there`);
      // Unenforced, the CLI would run as the harness's user on the host and could read the key
      // from the harness's own /proc/PID/environ: the forwarder would keep nothing out.
      if (backend === 'local') throw new UsageError(`--agent ${spec.name} runs only in the enforced sandbox (bwrap): under local the CLI could read the key from this process`);
      // Under the enforced sandbox the CLI and its interpreter must be among what it shows.
      {
        for (const file of [found.path, ...(found.interpreter ? [found.interpreter] : [])]) {
          if (!shownInside(file, env.PATH ?? '')) throw new UsageError(`--agent ${spec.name}: ${file} is in a folder the sandbox never shows (a home or /var); install ${spec.program} under /usr/local, /opt or another prefix`);
        }
      }
      vendorCredentials(spec.vendor, env);
    },
    async prepare(task, env) {
      const creds = vendorCredentials(spec.vendor, env);
      const dir = mkdtempSync(join(tmpdir(), 'quickloop-forwarder-'));
      const socketPath = join(dir, 'model.sock');
      const sink: CliPrepared['sink'] = {};
      const forwarder = await startForwarder({
        vendor: spec.vendor,
        upstream: creds.baseUrl,
        key: creds.key,
        socketPath,
        maxTokens: task.budgets.max_tokens,
        maxTurns: task.budgets.max_turns,
        onRefused: (r) => sink.onRefused?.(r),
        onBudgetSpent: (which) => sink.onBudget?.(which),
        onStripped: (removed, target) => sink.onStripped?.(removed, target),
      });
      const url = new URL(creds.baseUrl);
      const forwards: Forward[] = [{ name: FORWARD_NAME, port: FORWARD_PORT, socketPath }];
      const baseUrl = `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
      const prepared: CliPrepared = {
        forwards,
        started: { base_url: baseUrl },
        docsReachable: true,
        forwarder,
        sink,
        baseUrl,
        vendorHost: { host: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) },
        release: async () => {
          await forwarder.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
      return prepared;
    },
    run: (ctx) => runCli(spec, ctx),
  };
}

async function runCli(spec: CliSpec, ctx: AgentContext): Promise<AgentOutcome> {
  const p = ctx.prepared as CliPrepared;
  const { task, emitter, runId } = ctx;
  const d = ctx.sandbox.describe();
  const port = d.forwards?.find((f) => f.name === FORWARD_NAME)?.port;
  if (port === undefined) return { stopReason: 'error', detail: 'the sandbox has no model forwarder', report: { error_kind: 'harness' } };
  // A local sandbox from the stream: the same reason preflight refuses --backend local.
  if (!d.enforced) return { stopReason: 'error', detail: `${spec.name} runs only in the enforced sandbox: this one is ${d.backend}, where the CLI could read the key from the harness`, report: { error_kind: 'config' } };
  const stopper = new AbortController();
  let budget: 'token_budget' | 'max_turns' | undefined;
  const onAbort = (): void => stopper.abort();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  p.sink.onBudget = (which) => {
    budget = which;
    stopper.abort();
  };
  // A closed downstream is noticed at the stage's next awaited emit, as for the proxy's decisions.
  const record = (payload: Payload<'egress.blocked'>): void => {
    try {
      emitter.emit('egress.blocked', { run_id: runId }, payload)?.catch(() => undefined);
    } catch {
      // the writer is closed
    }
  };
  // A refused request is an egress decision of the sandbox: something inside asked the vendor for
  // more than a model call (or past the budget).
  p.sink.onRefused = (r) => {
    if (r.reason === 'token_budget' || r.reason === 'max_turns') return;
    record({ host: p.vendorHost.host, port: p.vendorHost.port, method: r.method || '?', path: r.target, reason: 'not_allowlisted', message: `the model forwarder passes only model calls; ${r.method} ${r.target} answered ${r.status} (${r.reason})` });
  };
  // Vendor-side tools would fetch from the web past the proxy: what was taken out is on the record.
  p.sink.onStripped = (removed, target) => {
    record({ host: p.vendorHost.host, port: p.vendorHost.port, method: 'POST', path: target, reason: 'not_allowlisted', message: `the model forwarder took vendor-side tools out of a model call (they would reach the web from the vendor, unrecorded): ${removed.join(', ')}` });
  };
  // Everything the run puts into the sandbox or takes out of it goes through a command inside it:
  // the harness never opens a path there, so a link planted by setup or the agent leads nowhere.
  const extra = Object.entries(spec.files?.(port) ?? {});
  const env: Record<string, string> = { ...spec.env(port, d.home), QUICKLOOP_PROMPT: cliPrompt(task) };
  const writes = extra.map(([rel, text], i) => {
    env[`QUICKLOOP_FILE_${i}`] = text;
    return `mkdir -p "$(dirname "$HOME/${rel}")" && printf '%s' "$QUICKLOOP_FILE_${i}" > "$HOME/${rel}" && `;
  });
  // A fresh folder of an unguessable name: nothing planted beforehand can stand in for it.
  const command = [
    `Q=$(mktemp -d "$TMPDIR/${FILES}.XXXXXXXX") && ${writes.join('')}printf '%s' "$QUICKLOOP_PROMPT" | ${spec.command(task, port)} 2> "$Q/stderr"`,
    `rc=$?; printf '\n%s\n' '${STDERR_MARK}'; tail -c 8000 "$Q/stderr" 2>/dev/null; rm -rf "$Q"; exit $rc`,
  ].join('; ');
  const left = task.budgets.max_seconds * 1000 - ctx.elapsedMs();
  let result;
  try {
    result = left <= 0 ? undefined : await ctx.sandbox.exec(command, { timeoutMs: Math.max(1, Math.floor(left)), maxOutputChars: MAX_CLI_OUTPUT, signal: stopper.signal, env });
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
  const output = result?.output ?? '';
  const mark = output.lastIndexOf(`\n${STDERR_MARK}\n`);
  const stdout = mark >= 0 ? output.slice(0, mark) : output;
  const stderr = mark >= 0 ? output.slice(mark + STDERR_MARK.length + 2) : '';

  const counted = await emitTurns(spec, ctx, p.forwarder.calls, stdout);
  const report: NonNullable<AgentOutcome['report']> = { turns: counted.turns, usage: counted.usage, usd: counted.usd, ...(counted.model !== undefined ? { model: counted.model } : {}) };
  const outcome = (o: Omit<AgentOutcome, 'report' | 'commands'>, extra: Partial<NonNullable<AgentOutcome['report']>> = {}): AgentOutcome => ({
    ...o,
    report: { ...report, ...extra },
    commands: counted.commands,
  });
  if (ctx.signal.aborted) return outcome({ stopReason: 'interrupted', detail: `interrupted while ${spec.program} ran` });
  if (result === undefined || result.timedOut) return outcome({ stopReason: 'timeout', detail: `max_seconds (${task.budgets.max_seconds}) reached: ${spec.program} and everything it started were killed` });
  if (budget === 'token_budget') return outcome({ stopReason: 'token_budget', detail: `max_tokens (${task.budgets.max_tokens}) spent: the forwarder refused the next model call and ${spec.program} was stopped` });
  if (budget === 'max_turns') return outcome({ stopReason: 'max_turns', detail: `max_turns (${task.budgets.max_turns}) reached: the forwarder refused the next model call and ${spec.program} was stopped` });
  const parsed = parseCliOutput(spec.mode, stdout, stderr, result.exitCode);
  const final = parsed.text ? { final_text: parsed.text } : {};
  if (spec.mode === 'claude-json' && /"subtype"\s*:\s*"error_max_turns"/.test(stdout)) {
    return outcome({ stopReason: 'max_turns', detail: `max_turns (${task.budgets.max_turns}) reached (${spec.program} --max-turns)` }, final);
  }
  const lastFailed = [...p.forwarder.calls].reverse().find((c) => c.error !== undefined);
  if (parsed.errorKind !== undefined) {
    // The forwarder saw the vendor's status: it says more than the CLI's words about it.
    const kind: ErrorKind = parsed.errorKind === 'refusal' || parsed.errorKind === 'context_overflow' ? parsed.errorKind : lastFailed?.errorKind ?? parsed.errorKind;
    const why = lastFailed?.error !== undefined && parsed.errorKind !== 'refusal' ? `${parsed.message ?? ''} (last model call: HTTP ${lastFailed.status} ${lastFailed.error})` : parsed.message ?? `${spec.program} failed`;
    if (kind === 'refusal') return outcome({ stopReason: 'refusal', detail: oneLine(why) }, { ...final, error_kind: 'refusal' });
    if (kind === 'context_overflow') return outcome({ stopReason: 'context_overflow', detail: oneLine(why) }, { ...final, error_kind: 'context_overflow' });
    return outcome({ stopReason: 'error', detail: oneLine(why) }, { ...final, error_kind: kind });
  }
  return outcome({ stopReason: 'completed', detail: `${spec.program} finished after ${counted.turns} model call${counted.turns === 1 ? '' : 's'} and ${counted.commands} shell command${counted.commands === 1 ? '' : 's'}` }, final);
}

const oneLine = (s: string): string => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 299)}…` : flat;
};

/**
 * One agent.turn per answered model call, in the order the forwarder saw them, each followed by the
 * tool calls it asked for and, for the CLI's shell tool, what the CLI reported the command did.
 * A failed call is an agent.retry of the turn that follows it.
 */
/** The price book's cost of one call, from the counters the forwarder read. */
const priced = (model: string, u: Usage5, cacheWrite1h = 0): number | null =>
  usdFor(DEFAULT_PRICE_BOOK, model, { input: u.input_tokens, cache_read: u.cache_read_tokens, cache_write: u.cache_write_tokens, output: u.output_tokens, reasoning: u.reasoning_tokens, cache_write_1h: cacheWrite1h });

async function emitTurns(spec: CliSpec, ctx: AgentContext, calls: readonly ModelCall[], stdout: string): Promise<{ turns: number; usage: Usage5; usd: number | null; model?: string; commands: number }> {
  const { emitter, runId, newId, task } = ctx;
  const results = spec.toolResults(stdout);
  let order = 0;
  let turn = 0;
  let attempts = 1;
  let usage: Usage5 = { ...ZERO };
  let model: string | undefined;
  let commands = 0;
  let usd: number | null = 0;
  for (const [i, call] of calls.entries()) {
    usage = addUsage(usage, call.usage);
    // A failed call may still have been billed: it counts, and an unpriced model makes the total unknown.
    const cost = priced(call.model, call.usage, call.cacheWrite1h);
    usd = usd === null || cost === null ? null : Math.round((usd + cost) * 1e6) / 1e6;
    if (call.error !== undefined && call.stop !== 'refusal') {
      // The last failure was not retried: agent.completed says what it was.
      if (i === calls.length - 1) continue;
      await emitter.emit('agent.retry', { run_id: runId }, { turn: turn + 1, attempt: attempts, status: call.status, error_kind: call.errorKind ?? 'infra', error: call.error, wait_ms: 0 });
      attempts += 1;
      continue;
    }
    turn += 1;
    model = call.model;
    const id = newId();
    await emitter.emit(
      'agent.turn',
      { run_id: runId, id },
      { turn, model: call.model, stop: call.stop, blocks: call.blocks, usage: call.usage, usd: cost, duration_ms: call.durationMs, request_id: call.requestId, attempts, ...(call.refusal ? { refusal: call.refusal } : {}) },
    );
    attempts = 1;
    for (const block of call.blocks) {
      if (block.type !== 'tool_call') continue;
      const command = spec.bashCommand(block.name, block.input);
      const callId = newId();
      await emitter.emit('tool.call', { run_id: runId, id: callId, parent_id: id }, { tool: block.name, call_id: block.id, input: block.input, ...(command !== undefined ? { command } : {}) });
      if (command === undefined) continue;
      commands += 1;
      const r = results.byId.get(block.id) ?? results.inOrder[order];
      order += 1;
      if (!r) continue;
      const cut = cutOutput(r.output, task.budgets.max_output_chars);
      await emitter.emit(
        'tool.result',
        { run_id: runId, id: newId(), parent_id: callId },
        // The CLI ran it and timed it; what it printed is all there is (duration unknown: 0).
        { tool: 'bash', exit_code: r.exitCode, timed_out: false, duration_ms: 0, output: cut.output, original_chars: cut.original, truncated: cut.truncated },
      );
    }
  }
  return { turns: turn, usage, usd, ...(model !== undefined ? { model } : {}), commands };
}

export const claudeCodeAgent = cliAgent(CLAUDE);
export const codexAgent = cliAgent(CODEX);
