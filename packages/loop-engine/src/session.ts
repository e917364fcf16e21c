// Everything a send to a model goes through, in order: scrub, surface, consent, call (with retries), account.
import type { EventType, Payload } from '@quickloop/events';
import { pyStrip, type ModelInvocation } from '@quickloop/loop-spec';
import { ConsentRefused, ModelCallFailed } from './errors.js';
import { invokeCli } from '@quickloop/models/cli';
import { universalNewlines } from './exec.js';
import { outputMode } from './model-output.js';
import { DEFAULT_GLOBS, Scrubber, envSecrets } from './scrub.js';
import { timeoutMs, type LoadedSpec } from './spec.js';

export interface ConsentRecord {
  granted_at: string;
  sends: string[];
  redact: string[];
  how: string;
  /** Where it was given for: the member's CLI and model then (a record without them, Looper's or older, covers any). */
  cli?: string;
  model?: string;
}

/** What the caller owns: the event stream, the run log, state.json, stdin and stderr. */
export interface SessionHooks {
  emit<T extends EventType>(type: T, payload: Payload<T>, meta?: { id?: string; parent_id?: string }): void;
  /** A run-log line (loop-run) or nothing (loop-gate). */
  log(name: string, fields: Record<string, unknown>): void;
  /** Adds a deduplicated state warning. */
  addWarning(text: string): void;
  warnings(): readonly string[];
  consentGet(member: string): ConsentRecord | undefined;
  consentSet(member: string, record: ConsentRecord): void;
  /** Puts a question on stderr and reads one line of stdin; null at end of input. */
  ask(question: string): Promise<string | null>;
  onUsage(member: string, usage: TokenUsage | null, usd: number | null): void;
  /**
   * Before a call starts (after consent): may throw a LoopStop to refuse it (a budget it cannot fit
   * in). The function it returns, if any, is called once the call has ended, whatever the outcome.
   */
  beforeCall?(member: string, promptChars: number): (() => void) | void;
  info(line: string): void;
  warn(line: string): void;
  now(): Date;
  newId(): string;
}

export interface SessionOptions {
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** Extra attempts for a transient CLI failure (timeout, rate limit, 5xx, connection reset). */
  retries: number;
  retryBaseMs: number;
  /** Members consented to on the command line (`--consent ID`). */
  consentFlags: ReadonlySet<string>;
}

export type Role = 'host' | 'reviewer' | 'judge';

/** Token counters as the loop events carry them. */
export interface TokenUsage {
  input_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
}

/** Tokens a call consumed: `output_tokens` already includes `reasoning_tokens`, so reasoning is not added again. */
export function totalTokens(u: TokenUsage): number {
  return u.input_tokens + u.cache_read_tokens + u.cache_write_tokens + u.output_tokens;
}

/** What invokeCli keeps of a model's stdout (its default cap; the tail, not a failure). */
const OUTPUT_TAIL_BYTES = 16 * 1024 * 1024;

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : []);

export class Session {
  readonly loaded: LoadedSpec;
  readonly hooks: SessionHooks;
  readonly scrubber: Scrubber;
  readonly #opts: SessionOptions;
  readonly #surfaced = new Set<string>();

  constructor(loaded: LoadedSpec, hooks: SessionHooks, opts: SessionOptions) {
    this.loaded = loaded;
    this.hooks = hooks;
    this.#opts = opts;
    this.scrubber = new Scrubber(loaded.loopDir, (source, reason) => {
      hooks.emit('redaction.blind_spot', { source, reason });
      hooks.log('redaction_unscrubbable', { source, reason });
      hooks.addWarning(`flagged file ${source} is ${reason}; its content cannot be detected by the scrub layer if it leaks into artifacts`);
      hooks.warn(`warning: flagged file ${source} is ${reason}; the scrub cannot see it`);
    }, envSecrets(opts.env));
  }

  get spec() {
    return this.loaded.spec;
  }

  /** The environment and abort signal every subprocess of this run gets (checks and commands too). */
  get env(): NodeJS.ProcessEnv {
    return this.#opts.env;
  }

  get signal(): AbortSignal | undefined {
    return this.#opts.signal;
  }

  #egress(): Record<string, unknown>[] {
    const e = this.spec.privacy?.egress;
    return Array.isArray(e) ? (e.filter((x) => typeof x === 'object' && x !== null) as Record<string, unknown>[]) : [];
  }

  #entriesFor(id: string): Record<string, unknown>[] {
    return this.#egress().filter((e) => e.to === id);
  }

  /** Host and context: the defaults plus every egress entry's globs. */
  hostGlobs(): string[] {
    return [...new Set([...DEFAULT_GLOBS, ...this.#egress().flatMap((e) => strings(e.redact))])];
  }

  /** A council member: the defaults plus its own entries' globs. */
  memberGlobs(id: string): string[] {
    if (id === 'host') return this.hostGlobs();
    return [...new Set([...DEFAULT_GLOBS, ...this.#entriesFor(id).flatMap((e) => strings(e.redact))])];
  }

  /** Scrubs outgoing text and surfaces every catch once per destination and set of sources. */
  scrub(text: string, where: string, globs: readonly string[]): string {
    const r = this.scrubber.scrub(text, globs);
    if (r.sources.length > 0) {
      const key = `${where}\0${r.sources.join('\0')}`;
      if (!this.#surfaced.has(key)) {
        this.#surfaced.add(key);
        this.hooks.emit('redaction.applied', { where, sources: r.sources });
        this.hooks.log('redaction_applied', { where, sources: r.sources });
        this.hooks.warn(`warning: flagged content from ${r.sources.join(', ')} appeared in ${where}; scrubbed before use`);
      }
      this.hooks.addWarning(`flagged content from ${r.sources.join(', ')} appeared in ${where}; scrubbed before use`);
    }
    return r.text;
  }

  /**
   * Council members are local only when the spec says `local: true`. The host is governed the same
   * way once an egress entry names it (`to: host`) or it is marked `local: false`; a spec that says
   * neither keeps Looper's behaviour (the operator chose the host), so Looper's specs run unchanged.
   */
  #needsConsent(id: string, inv: ModelInvocation): boolean {
    const entries = this.#entriesFor(id);
    if (id === 'host') {
      if (inv.local === true || inv.cli === 'ollama') return false;
      if (entries.length === 0 && inv.local !== false) return false;
    } else if (inv.local === true) return false;
    if (entries.length > 0 && entries.every((e) => e.consent === 'granted')) return false;
    return true;
  }

  /** Fail closed: anything but `yes` (end of input included) blocks the run before the member is called. */
  async ensureConsent(id: string, inv: ModelInvocation): Promise<void> {
    if (!this.#needsConsent(id, inv)) return;
    const entries = this.#entriesFor(id);
    const sends = [...new Set(entries.flatMap((e) => strings(e.sends)))].sort();
    const redact = this.memberGlobs(id);
    // A recorded consent covers what it was given for: the spec may since send more, or redact less.
    const prior = this.hooks.consentGet(id);
    const model = typeof inv.model === 'string' && inv.model ? inv.model : 'default';
    const beyond = prior ? beyondConsent(prior, sends, redact, inv.cli, model) : null;
    if (prior && beyond === null) return;
    const record = (how: string): void => {
      this.hooks.consentSet(id, { granted_at: this.hooks.now().toISOString(), sends, redact, how, cli: inv.cli, model });
      this.hooks.log('consent_granted', { member: id, how });
    };
    if (this.#opts.consentFlags.has(id)) {
      record('flag');
      this.hooks.emit('consent.answered', { member: id, granted: true, how: 'flag' });
      return;
    }
    const warnings = this.hooks.warnings().filter((w) => w.includes(`prompt for ${id}`));
    const askId = this.hooks.newId();
    this.hooks.emit('consent.asked', { member: id, sends, redact, warnings }, { id: askId });
    const lines = [
      `About to send ${sends.length ? sends.join(', ') : 'loop artifacts'} to ${id}.`,
      `CLI: ${inv.cli} / model: ${model}`,
      `Redactions: ${redact.join(', ')}`,
      ...warnings.map((w) => `Warning: ${w}`),
      ...(entries.length === 0 ? ['No privacy.egress entry covers this member; consent is required by default.'] : []),
      ...(beyond ? [`The consent recorded${typeof prior?.granted_at === 'string' ? ` at ${prior.granted_at}` : ''} does not cover this send: ${beyond}.`] : []),
      "Type 'yes' to consent to this first send: ",
    ];
    const answer = await this.hooks.ask(lines.join('\n'));
    const how = answer === null ? 'end_of_input' : answer.trim().toLowerCase() === 'yes' ? 'answered_yes' : 'refused';
    this.hooks.emit('consent.answered', { member: id, granted: how === 'answered_yes', how }, { parent_id: askId });
    if (how !== 'answered_yes') {
      this.hooks.log('consent_refused', { member: id, how });
      throw new ConsentRefused(id, how === 'end_of_input' ? 'end_of_input' : 'refused');
    }
    record(how);
  }

  /** Scrub then consent: the order that lets the question show the leak warnings. */
  async prepare(id: string, inv: ModelInvocation, prompt: string): Promise<string> {
    const scrubbed = this.scrub(prompt, `prompt for ${id}`, this.memberGlobs(id));
    await this.ensureConsent(id, inv);
    return scrubbed;
  }

  /** Calls a model CLI with an already prepared prompt: argv verbatim, prompt on stdin, cwd = loop dir. */
  async call(id: string, role: Role, inv: ModelInvocation, prompt: string, purpose: string): Promise<string> {
    const done = this.hooks.beforeCall?.(id, prompt.length);
    try {
      return await this.#call(id, role, inv, prompt, purpose);
    } finally {
      done?.();
    }
  }

  async #call(id: string, role: Role, inv: ModelInvocation, prompt: string, purpose: string): Promise<string> {
    const argv = inv.invoke;
    const callId = this.hooks.newId();
    this.hooks.emit('model.call', { member: id, role, purpose, argv0: argv[0] ?? '', prompt_chars: prompt.length, attempt: 1 }, { id: callId });
    const r = await invokeCli({
      argv: [...argv],
      prompt,
      cwd: this.loaded.loopDir,
      // The operator's own CLI, with the operator's own credentials: Looper passes the environment through too.
      env: Object.fromEntries(Object.entries(this.#opts.env).filter((e): e is [string, string] => e[1] !== undefined)),
      timeoutMs: timeoutMs(inv.timeout_sec, 600),
      outputMode: outputMode(argv),
      retry: { retries: this.#opts.retries, baseMs: this.#opts.retryBaseMs },
      // A verdict or an answer sits at the end of a long output: keep the tail rather than fail the call.
      overflow: 'tail',
      // A plain-text answer is read as Looper's runner reads it (utf-8 text mode keeps a leading BOM).
      ...(outputMode(argv) === 'text' ? { keepBom: true } : {}),
      ...(this.#opts.signal ? { signal: this.#opts.signal } : {}),
    });
    const failed = r.errorKind !== undefined || r.exitCode !== 0;
    const exitCode = r.timedOut ? 124 : r.exitCode ?? 137;
    const usage: TokenUsage | null = r.usage
      ? { input_tokens: r.usage.input, cache_read_tokens: r.usage.cache_read, cache_write_tokens: r.usage.cache_write, output_tokens: r.usage.output, reasoning_tokens: r.usage.reasoning }
      : null;
    const result: Payload<'model.result'> = {
      member: id,
      exit_code: exitCode,
      ok: !failed,
      timed_out: r.timedOut,
      duration_ms: r.durationMs,
      output_chars: r.text.length,
      usage,
      usd: r.costUsd ?? null,
      attempts: r.attempts,
    };
    // A CLI's error text (or an argv) can carry a key or a flagged file's content; it goes into state, the run log
    // and events, so it is masked like a prompt.
    const mask = (text: string): string => this.scrubber.scrub(text, this.hostGlobs()).text;
    // A CLI's own stderr says it best; invokeCli's `exited N: "…"` only quotes the start of it again.
    const stderr = r.stderrTail.trim();
    const quoted = stderr !== '' && (r.message ?? '').startsWith(`exited ${exitCode}: `);
    const detail = mask((quoted ? [stderr] : [r.message, stderr]).filter(Boolean).join('\n'));
    if (failed) result.error = detail.slice(-2000);
    this.hooks.emit('model.result', result, { parent_id: callId });
    this.hooks.log('model_call', {
      member: id,
      purpose,
      exit_code: exitCode,
      duration_ms: r.durationMs,
      attempts: r.attempts,
      tokens: usage ? totalTokens(usage) : null,
      usd: r.costUsd ?? null,
    });
    this.hooks.onUsage(id, usage, r.costUsd ?? null);
    if (r.outputTruncated) {
      const w = `${id} printed more than ${Math.round(OUTPUT_TAIL_BYTES / 2 ** 20)} MiB; only the tail was kept (${purpose})`;
      this.hooks.addWarning(w);
      this.hooks.warn(`warning: ${w}`);
    }
    if (r.attempts > 1) this.hooks.warn(`warning: ${id} needed ${r.attempts} attempts (transient CLI failures were retried)`);
    // Read as Looper reads a CLI's answer: universal newlines, then str.strip() (a BOM stays; \x1c-\x1f and NEL go).
    if (!failed) return pyStrip(universalNewlines(r.text));
    throw new ModelCallFailed(mask(`Model invocation failed (${argv.join(' ')}): exit ${exitCode}${r.timedOut ? ' (timed out)' : ''}\n${detail}`.trimEnd()));
  }

  async send(id: string, role: Role, inv: ModelInvocation, prompt: string, purpose: string): Promise<string> {
    return this.call(id, role, inv, await this.prepare(id, inv, prompt), purpose);
  }
}

/** Why a recorded consent does not cover this send (another CLI or model, more sends, fewer redactions), or null when it does. */
function beyondConsent(prior: ConsentRecord, sends: readonly string[], redact: readonly string[], cli: string, model: string): string | null {
  const p = prior as { sends?: unknown; redact?: unknown; cli?: unknown; model?: unknown };
  // A record without its scope (hand-edited) covers nothing: fail closed.
  if (!Array.isArray(p.sends) || !Array.isArray(p.redact)) return 'it records no sends or redactions';
  const moreSends = sends.filter((x) => !(p.sends as unknown[]).includes(x));
  const lessRedact = (p.redact as unknown[]).filter((g): g is string => typeof g === 'string' && !redact.includes(g));
  const why: string[] = [];
  if (typeof p.cli === 'string' && p.cli !== cli) why.push(`it now goes to CLI ${cli} (given for ${p.cli})`);
  if (typeof p.model === 'string' && p.model !== model) why.push(`it now goes to model ${model} (given for ${p.model})`);
  if (moreSends.length) why.push(`it now also sends ${moreSends.join(', ')}`);
  if (lessRedact.length) why.push(`it no longer redacts ${lessRedact.join(', ')}`);
  return why.length ? why.join('; ') : null;
}
