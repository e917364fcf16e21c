// The model agent: one tool loop over any ModelAdapter, the same prompt, tools, budgets and events for every vendor.
import { performance } from 'node:perf_hooks';
import { InterruptedError } from '@quickloop/cli-kit';
import type { Payload } from '@quickloop/events';
import { addUsage, billedUsage, DEFAULT_PRICE_BOOK, ModelError, usage, usageTokens, usdFor, ZERO_USAGE, type Block, type Message, type ModelAdapter, type PriceBook, type ToolSpec, type TurnResult, type Usage } from '@quickloop/models/core';
import { connectSpendLedger, estimateCallUsd, type LedgerClient } from '../spend.js';
import type { Agent, AgentContext, AgentOutcome } from './agent.js';

export type ToolOutcome =
  | { kind: 'bash'; exitCode: number; output: string; timedOut: boolean }
  | { kind: 'read_docs'; ok: boolean; status?: number; sha256?: string; text: string }
  | { kind: 'error'; error: string };

export interface AfterToolInfo {
  turn: number;
  callId: string;
  tool: string;
  toolCallEventId: string;
  outcome: ToolOutcome;
}

export interface ModelLoopHooks {
  /** Called once each tool call has completed (its result events emitted), before the next call. */
  afterTool?(info: AfterToolInfo): Promise<void>;
}

export interface ModelLoopOptions {
  /** The model asked for. */
  model: string;
  /** The endpoint, as agent.started shows it (no credentials). */
  baseUrl?: string;
  prices?: PriceBook;
  /** Stream responses (default true: long turns stay under proxies' idle limits). */
  stream?: boolean;
  /** The most output tokens one turn may ask for (default 16384); the token budget can lower it. */
  maxOutputTokens?: number;
  /** Applied to every string the loop emits or logs: removes credentials. */
  redact?: (text: string) => string;
  /** The sweep's spend ledger (a Unix socket, `--spend-ledger`): every call is reserved before it starts and settled after. */
  spendLedger?: string;
}

/** Makes the adapter for one run; called once per run, after the sandbox is ready. */
export type AdapterFactory = () => ModelAdapter | Promise<ModelAdapter>;

const BASH_TOOL: ToolSpec = {
  name: 'bash',
  description:
    'Run one shell command with `bash -c` in the workspace. Each call is a fresh shell: cd, exports and shell variables do not carry over (chain with && or write a script). You get the exit code and the output (stdout and stderr merged; long output keeps its head and tail).',
  schema: { type: 'object', properties: { command: { type: 'string', description: 'The command line.' } }, required: ['command'] },
};

const READ_DOCS_TOOL: ToolSpec = {
  name: 'read_docs',
  description: 'Read a documentation page as text. Only the docs hosts you were given can be read, and only through this tool. A long page comes in numbered parts: ask for the next one with page.',
  schema: {
    type: 'object',
    properties: { url: { type: 'string', description: 'The absolute URL of the page.' }, page: { type: 'integer', minimum: 1, description: 'The part of a long page, from 1.' } },
    required: ['url'],
  },
};

export const TOOLS: readonly ToolSpec[] = [BASH_TOOL, READ_DOCS_TOOL];

export const SYSTEM_PROMPT = `You are checking a product's quickstart documentation by following it as a careful newcomer would, in a disposable Linux sandbox.

You have two tools. read_docs reads a documentation page; it is the only way to reach the docs, since the shell cannot connect to the docs hosts. bash runs one command in the workspace, each call in a fresh shell.

Follow the docs in the order given. Do what they say, and when a step is unclear or fails, try what a sensible newcomer would try, using only what the docs and the error messages tell you. Do not work around a problem with knowledge the docs do not give, and do not fake a result: the point is to find out whether the docs alone are enough.

Leave any server the docs have you start running in the background (for example with nohup … &), so it can be checked after you finish.

When the goal is reached, or you cannot get further, stop calling tools and answer with a short summary: what you did, what worked, and where the docs were missing, wrong or unclear.`;

export function kickoff(ctx: Pick<AgentContext, 'task' | 'setup'>): string {
  const { task } = ctx;
  const b = task.budgets;
  const lines = [`Goal: ${task.goal}`, '', 'Docs to follow, in this order:', ...task.docs.path.map((u, i) => `${i + 1}. ${u}`), '', `Docs hosts read_docs can read: ${task.docs.allow.join(', ')}`, ''];
  if (ctx.setup.length === 0) lines.push('Nothing was set up in the workspace before you.');
  else lines.push('Already run in the workspace before you, in order:', ...ctx.setup.map((c) => `$ ${c}`));
  lines.push('', `Limits: ${b.max_turns} turns, ${b.max_seconds} s in all, ${b.max_command_seconds} s per command, ${b.max_output_chars} characters of output per command.`);
  return lines.join('\n');
}

const billable = (u: Usage): number => u.input + u.cache_read + u.cache_write + u.output;

/**
 * The smallest output limit a turn asks for: OpenAI's Responses API refuses a `max_output_tokens`
 * under 16 (a 400, which would end a run the budget ended as a config error), and fewer would not
 * hold a tool call anyway.
 */
const MIN_OUTPUT_TOKENS = 16;

const oneLine = (s: string, n = 300): string => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > n ? `${flat.slice(0, n - 1)}…` : flat;
};

type ToolCallBlock = Extract<Block, { type: 'tool_call' }>;

/** The spend ledger refused the reservation a retry needs (thrown from onRetry, which ends the adapter's retries). */
class RetryRefused extends Error {
  constructor(
    readonly why: string,
    /** Set when the ledger failed rather than refused (then no call may be made unaccounted). */
    readonly errorKind?: 'harness',
  ) {
    super(why);
  }
}

/** Checks a call's arguments against the tool it names: the parsed call, or what the model is told. */
function parseCall(b: ToolCallBlock): { tool: 'bash'; command: string } | { tool: 'read_docs'; url: string; page?: number } | { error: string } {
  if (b.invalid !== undefined) return { error: `${b.name}: ${b.invalid}` };
  if (b.name === 'bash') {
    const c = b.input.command;
    if (typeof c !== 'string' || c.trim() === '') return { error: `bash needs {"command": "<a shell command>"}: command is ${c === undefined ? 'missing' : typeof c !== 'string' ? `a ${Array.isArray(c) ? 'list' : typeof c}, not a string` : 'empty'}` };
    return { tool: 'bash', command: c };
  }
  if (b.name === 'read_docs') {
    const { url, page } = b.input;
    if (typeof url !== 'string' || url.trim() === '') return { error: `read_docs needs {"url": "<an absolute URL>"}: url is ${url === undefined ? 'missing' : typeof url !== 'string' ? 'not a string' : 'empty'}` };
    if (page !== undefined && page !== null && (typeof page !== 'number' || !Number.isInteger(page) || page < 1)) return { error: 'read_docs: page must be a whole number from 1' };
    return typeof page === 'number' ? { tool: 'read_docs', url, page } : { tool: 'read_docs', url };
  }
  return { error: `unknown tool '${b.name}': the tools are bash and read_docs` };
}

/**
 * The model agent `name`: each turn asks the model (through the adapter the factory makes), emits
 * agent.turn, runs its tool calls in order, and answers them; budgets are checked before each turn
 * and the deadline cuts a model call or a command in flight.
 */
export function createModelAgent(name: string, adapterFactory: AdapterFactory, options: ModelLoopOptions, hooks: ModelLoopHooks = {}): Agent {
  const prices = options.prices ?? DEFAULT_PRICE_BOOK;
  const redact = options.redact ?? ((s: string) => s);
  return {
    name,
    started: { model: options.model, ...(options.baseUrl !== undefined ? { base_url: options.baseUrl } : {}) },
    async run(ctx: AgentContext): Promise<AgentOutcome> {
      const { task, tools, emitter, runId } = ctx;
      const b = task.budgets;
      const adapter = await adapterFactory();
      const deadline = performance.now() + b.max_seconds * 1000 - ctx.elapsedMs();
      const cut = new AbortController();
      const timer = setTimeout(() => cut.abort(new Error('max_seconds')), Math.max(0, deadline - performance.now()));
      const signal = AbortSignal.any([ctx.signal, cut.signal]);
      const messages: Message[] = [{ role: 'user', blocks: [{ type: 'text', text: kickoff(ctx) }] }];
      let total: Usage = { ...ZERO_USAGE };
      let usdSum = 0;
      /** Some turn's model had no price: the run's cost is unknown, not the sum of the others. */
      let unpriced = false;
      let turns = 0;
      let served = options.model;
      let finalText = '';
      /** What the next request will read at least: the last one's input, its answer, and the new tool results (about 4 characters a token). */
      let nextInput = 0;

      /** Some call was billed: a turn answered, or an attempt whose stream reported usage before it failed. */
      let billedAny = false;
      const usd = (): number | null => (!billedAny ? usdFor(prices, options.model, ZERO_USAGE) : unpriced ? null : Math.round(usdSum * 1e6) / 1e6);
      /** Adds what calls were billed to the run's usage and cost; the price, or null, of that much. */
      const count = (u: Usage, model: string): number | null => {
        billedAny = true;
        total = addUsage(total, u);
        const price = usdFor(prices, model, u);
        if (price === null) unpriced = true;
        else usdSum += price;
        return price;
      };
      const report = (): NonNullable<AgentOutcome['report']> => ({ model: served, turns, usage: usageTokens(total), usd: usd(), ...(finalText !== '' ? { final_text: redact(finalText) } : {}) });
      const stop = (stopReason: AgentOutcome['stopReason'], detail: string, extra: Partial<AgentOutcome> & { errorKind?: Payload<'agent.completed'>['error_kind'] } = {}): AgentOutcome => {
        const { errorKind, ...rest } = extra;
        return { stopReason, detail: redact(detail), ...rest, report: { ...report(), ...(errorKind !== undefined ? { error_kind: errorKind } : {}) } };
      };
      const timeLeftMs = () => deadline - performance.now();
      const outOfTime = () => stop('timeout', `max_seconds (${b.max_seconds}) reached after ${turns} turn${turns === 1 ? '' : 's'}`);

      let ledger: LedgerClient | undefined;
      try {
        if (options.spendLedger !== undefined) {
          try {
            ledger = await connectSpendLedger(options.spendLedger);
          } catch (error) {
            // Unaccounted calls would make the cap a lie: no call starts without the ledger.
            return stop('error', `the spend ledger ${options.spendLedger} cannot be reached (${oneLine((error as Error).message)}): no model call was made`, { errorKind: 'harness' });
          }
        }
        for (;;) {
          if (ctx.signal.aborted) return stop('interrupted', `interrupted after ${turns} turns`);
          if (turns >= b.max_turns) return stop('max_turns', `max_turns (${b.max_turns}) reached without the model finishing`);
          if (timeLeftMs() <= 0) return outOfTime();
          let maxTokens = options.maxOutputTokens ?? 16_384;
          if (b.max_tokens > 0) {
            // The next request re-sends the conversation so far, so that much is spent before any answer.
            const left = b.max_tokens - billable(total) - nextInput;
            if (left < MIN_OUTPUT_TOKENS) return stop('token_budget', `max_tokens (${b.max_tokens}) cannot cover another turn: ${billable(total)} billable tokens used, the next request reads about ${nextInput}`);
            maxTokens = Math.min(maxTokens, left);
          }
          const turn = turns + 1;
          let reservation: { id: number; estimate: number } | undefined;
          /** What the ledger reserved for this turn's requests, a retry's included. */
          let reservedUsd = 0;
          /** What the attempts settled on a retry were billed (the rest of a failed turn's is its last attempt's). */
          let settledBilled: Usage = { ...ZERO_USAGE };
          const estimate = ledger ? estimateCallUsd(prices, options.model, { system: SYSTEM_PROMPT, messages, tools: TOOLS, maxTokens }) : null;
          /** Reserves the next request of this turn; the reason when it may not be sent. */
          const reserve = async (what: string): Promise<{ why: string; errorKind?: 'harness' } | undefined> => {
            if (!ledger || estimate === null) return undefined;
            let r: Awaited<ReturnType<LedgerClient['reserve']>>;
            try {
              r = await ledger.reserve(estimate);
            } catch (error) {
              return { why: `the spend ledger failed before ${what} (${oneLine((error as Error).message)}): no model call was made`, errorKind: 'harness' };
            }
            if (!r.granted) return { why: `stopped by the spend cap before ${what}: $${Math.round((r.spent + r.reserved) * 1e6) / 1e6} spent or reserved of the $${r.cap} cap, and this call could cost up to $${estimate}` };
            reservation = { id: r.id, estimate };
            reservedUsd = Math.round((reservedUsd + estimate) * 1e6) / 1e6;
            return undefined;
          };
          if (ledger) {
            if (estimate === null) return stop('error', `--spend-ledger: model '${options.model}' is not in the price book, so its calls cannot be reserved`, { errorKind: 'config' });
            const refused = await reserve(`turn ${turn}`);
            if (refused) return refused.errorKind ? stop('error', refused.why, { errorKind: refused.errorKind }) : stop('spend_cap', refused.why);
          }
          // Settled once whatever happens to the request: a failed one may still have been billed, so it
          // keeps its estimate (or what its stream said it was billed, were that more).
          const settle = async (usd: number | null, billed?: Usage): Promise<void> => {
            if (!ledger || !reservation) return;
            const { id, estimate } = reservation;
            reservation = undefined;
            const said = billed ? (usdFor(prices, options.model, billed) ?? 0) : 0;
            await ledger.settle(id, usd ?? Math.max(estimate, said)).catch(() => undefined);
          };
          let result: TurnResult;
          try {
            result = await adapter.turn({
              model: options.model,
              system: SYSTEM_PROMPT,
              messages,
              tools: [...TOOLS],
              maxTokens,
              stream: options.stream ?? true,
              signal,
              deadline,
              onRetry: async ({ attempt, waitMs, error }) => {
                // A retry is another request: the failed one is settled, and the next reserved before it is sent.
                await settle(null, error.usage);
                if (error.usage) settledBilled = addUsage(settledBilled, error.usage);
                const refused = await reserve(`attempt ${attempt + 1} of turn ${turn}`);
                if (refused) throw new RetryRefused(refused.why, refused.errorKind);
                await emitter.emit(
                  'agent.retry',
                  { run_id: runId },
                  { turn, attempt, status: error.status ?? null, error_kind: error.errorKind, error: redact(oneLine(error.message)), wait_ms: Math.round(waitMs) },
                );
              },
            });
          } catch (error) {
            // What the failed attempts were billed (streams that reported usage) is spent, however the turn ended.
            const billed = billedUsage(error);
            await settle(null, billed && usage({ input: billed.input - settledBilled.input, cache_read: billed.cache_read - settledBilled.cache_read, cache_write: billed.cache_write - settledBilled.cache_write, output: billed.output - settledBilled.output, reasoning: billed.reasoning - settledBilled.reasoning }));
            if (billed) count(billed, options.model);
            if (error instanceof RetryRefused) return error.errorKind ? stop('error', error.why, { errorKind: error.errorKind }) : stop('spend_cap', error.why);
            if (ctx.signal.aborted) return stop('interrupted', `interrupted during turn ${turn}`);
            if (cut.signal.aborted || (error instanceof InterruptedError && timeLeftMs() <= 0)) return stop('timeout', `max_seconds (${b.max_seconds}) reached during turn ${turn}: the model call was cut`);
            if (error instanceof ModelError) {
              const why = `turn ${turn}: ${oneLine(error.message)}`;
              if (error.errorKind === 'context_overflow') return stop('context_overflow', why, { errorKind: 'context_overflow' });
              // A content policy that blocked the prompt or the answer, sent as an error: the model declined, as a refusal stop says.
              if (error.errorKind === 'refusal') return stop('refusal', `the model refused at turn ${turn}: ${oneLine(error.message)}`, { errorKind: 'refusal' });
              // No later run could fare better. A 403 names the key only when its body does: it is as often
              // a model, project or region the key may not reach, and the vendor's words say which.
              // Gemini refuses a region it does not serve with a 400 FAILED_PRECONDITION rather than a 403.
              const placeRefused = error.errorKind === 'config' && error.status === 400 && /location is not supported|unsupported_country_region_territory|not available in your (country|region)/i.test(error.message);
              if (error.errorKind === 'config' && (error.keyRefused || error.noCredit || error.status === 403 || error.status === 404 || placeRefused)) {
                const what = error.keyRefused ? 'the API key was refused' : error.noCredit ? 'the account has no credit or quota left' : error.status === 403 || placeRefused ? 'the API denied access' : `model '${options.model}' or endpoint not found`;
                return stop('error', why, { errorKind: 'config', usageError: redact(`${name}: ${what} (${oneLine(error.message, 200)})`) });
              }
              // A persistent 5xx or a cut connection ends here once the retries inside the deadline are spent.
              if (error.errorKind === 'infra' && timeLeftMs() <= 0) return stop('timeout', `max_seconds (${b.max_seconds}) reached during turn ${turn}: ${oneLine(error.message)}`);
              return stop('error', why, { errorKind: error.errorKind });
            }
            if (error instanceof InterruptedError) return stop('interrupted', `turn ${turn}: ${oneLine(error.message)}`);
            // Anything else (an SDK bug, an answer no adapter expected) is ours to look at; its words may quote a credential.
            return stop('error', `turn ${turn}: ${oneLine(String((error as Error)?.message ?? error))}`, { errorKind: 'harness' });
          }
          turns = turn;
          // The turn cost its answer and what its failed attempts were billed before it.
          const turnUsage = result.failedUsage ? addUsage(result.usage, result.failedUsage) : result.usage;
          nextInput = result.usage.input + result.usage.cache_read + result.usage.cache_write + result.usage.output;
          served = result.model ?? options.model;
          const turnUsd = count(turnUsage, served);
          // An answer that reports no usage at all did not say what it was billed (a server that leaves its
          // usage out): the ledger keeps its estimate rather than count it free.
          const answerUsd = billable(result.usage) === 0 ? null : result.failedUsage ? usdFor(prices, served, result.usage) : turnUsd;
          const reserved = ledger ? reservedUsd : undefined;
          await settle(answerUsd);
          const text = result.blocks.flatMap((x) => (x.type === 'text' ? [x.text] : [])).join('\n');
          const calls = result.blocks.filter((x): x is ToolCallBlock => x.type === 'tool_call');
          const turnId = ctx.newId();
          await emitter.emit(
            'agent.turn',
            { run_id: runId, id: turnId },
            {
              turn,
              model: served,
              stop: result.stop,
              blocks: result.blocks.flatMap((x): Payload<'agent.turn'>['blocks'] => (x.type === 'text' ? [{ type: 'text', text: x.text }] : x.type === 'tool_call' ? [{ type: 'tool_call', id: x.id, name: x.name, input: x.input }] : [])),
              usage: usageTokens(turnUsage),
              usd: turnUsd,
              duration_ms: Math.max(0, Math.round(result.durationMs)),
              request_id: result.requestId ?? null,
              attempts: result.attempts,
              ...(result.refusal !== undefined ? { refusal: result.refusal } : {}),
              ...(reserved !== undefined ? { reserved_usd: reserved } : {}),
            },
          );
          if (text !== '') finalText = text;
          if (result.stop === 'refusal') {
            const r = result.refusal;
            return stop('refusal', `the model refused at turn ${turn}${r?.category ? ` (${r.category})` : ''}${r?.explanation ? `: ${oneLine(r.explanation)}` : ''}`, { errorKind: 'refusal' });
          }
          if (result.stop === 'context_overflow') return stop('context_overflow', `turn ${turn}: the conversation outgrew the model's context window`, { errorKind: 'context_overflow' });
          if (b.max_tokens > 0 && billable(total) > b.max_tokens) return stop('token_budget', `max_tokens (${b.max_tokens}) used up at turn ${turn}: ${billable(total)} billable tokens`);
          messages.push({ role: 'assistant', blocks: result.blocks, ...(result.native !== undefined ? { native: result.native } : {}) });
          if (calls.length === 0) {
            if (result.stop === 'max_tokens') {
              if (b.max_tokens > 0 && maxTokens < (options.maxOutputTokens ?? 16_384)) return stop('token_budget', `max_tokens (${b.max_tokens}): turn ${turn} was cut at the ${maxTokens} output tokens left`);
              messages.push({ role: 'user', blocks: [{ type: 'text', text: 'Your answer was cut off at the output limit. Go on, in shorter steps.' }] });
              continue;
            }
            // A paused turn is unfinished: the same conversation, its partial answer last, resumes it.
            if (result.stop === 'pause') continue;
            // A stop quickloop does not know (a vendor's new finish reason) is not "finished": a failing
            // check after it would be blamed on the docs for what may be the provider's doing.
            if (result.stop === 'other') return stop('error', `turn ${turn}: the model stopped for a reason other than finishing, with no tool call; the run says nothing about the docs`, { errorKind: 'harness' });
            // A server that says it answered with tool calls and sends none (a compatible server whose
            // tool-call parser failed on the model's text) lost the answer: the model did not finish.
            if (result.stop === 'tool_use') return stop('error', `turn ${turn}: the answer stopped to call tools but carried no tool call; the run says nothing about the docs`, { errorKind: 'harness' });
            // Nothing at all at the first turn (no text, no call, nothing done yet): the provider's empty
            // answer, not a reader giving up on the docs; a failing check after it would be blamed on them.
            if (turn === 1 && !result.blocks.some((bl) => bl.type === 'text' && bl.text.trim() !== '')) {
              return stop('error', 'turn 1: the model answered with nothing (no text, no tool call) before doing anything; the run says nothing about the docs', { errorKind: 'infra' });
            }
            return stop('completed', `the model finished after ${turns} turn${turns === 1 ? '' : 's'}`);
          }
          const answers: Block[] = [];
          for (const call of calls) {
            if (ctx.signal.aborted) return stop('interrupted', `interrupted during turn ${turn}`);
            if (timeLeftMs() <= 0) return outOfTime();
            const eventId = ctx.newId();
            const parsed = parseCall(call);
            let outcome: ToolOutcome;
            let answer: string;
            try {
              if ('error' in parsed) {
                await emitter.emit('tool.call', { run_id: runId, id: eventId, parent_id: turnId }, { tool: call.name || '(none)', call_id: call.id, input: call.input });
                await emitter.emit('tool.error', { run_id: runId, id: ctx.newId(), parent_id: eventId }, { tool: call.name || '(none)', error: parsed.error });
                outcome = { kind: 'error', error: parsed.error };
                answer = `error: ${parsed.error}`;
              } else if (parsed.tool === 'bash') {
                // The deadline is the command's timeout rather than an abort, so a command cut at it reads as timed out (124).
                const r = await tools.bash(parsed.command, { id: eventId, parentId: turnId, callId: call.id, timeoutMs: Math.max(1, Math.floor(timeLeftMs())) });
                outcome = { kind: 'bash', exitCode: r.exitCode, output: r.output, timedOut: r.timedOut };
                answer = `exit code: ${r.exitCode}${r.timedOut ? ' (the command was killed: out of time)' : ''}\n${r.output}`;
              } else {
                const r = await tools.readDocs(parsed.url, parsed.page, { id: eventId, parentId: turnId, callId: call.id, signal });
                outcome = r.ok ? { kind: 'read_docs', ok: true, status: r.status, sha256: r.sha256, text: r.text } : { kind: 'read_docs', ok: false, ...(r.status !== undefined ? { status: r.status } : {}), text: `error: ${r.error}` };
                answer = outcome.text;
              }
            } catch (error) {
              // A docs read cut at the deadline (or on a signal) rejects rather than answers.
              if (ctx.signal.aborted) return stop('interrupted', `interrupted during turn ${turn}`);
              if (cut.signal.aborted) return outOfTime();
              throw error;
            }
            answers.push({ type: 'tool_result', id: call.id, name: call.name, output: answer, ...(outcome.kind === 'error' ? { is_error: true } : {}) });
            await hooks.afterTool?.({ turn, callId: call.id, tool: call.name, toolCallEventId: eventId, outcome });
          }
          messages.push({ role: 'user', blocks: answers });
          nextInput += Math.ceil(answers.reduce((n, a) => n + (a.type === 'tool_result' ? a.output.length : 0), 0) / 4);
        }
      } finally {
        clearTimeout(timer);
        ledger?.close();
      }
    },
  };
}
