// SDK errors (Anthropic and OpenAI alike) to ModelError, by status, body and class rather than by vendor.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { InterruptedError } from '@quickloop/cli-kit/errors';
import { classifyStatus, classifyText, policyBlock } from '../cli/classify.js';
import { ModelError } from '../errors.js';

function header(headers: unknown, name: string): string | undefined {
  if (headers && typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  if (headers && typeof headers === 'object') {
    const value = (headers as Record<string, unknown>)[name];
    return typeof value === 'string' ? value : undefined;
  }
  return undefined;
}

/** A duration as OpenAI writes its rate limits' resets (`1s`, `6m0s`, `20ms`, `1h2m3.5s`), in ms. */
function durationMs(text: string | undefined): number | undefined {
  const m = /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$/.exec(text?.trim() ?? '');
  if (!m || m.slice(1).every((g) => g === undefined)) return undefined;
  const [h, min, sec, ms] = m.slice(1).map((g) => Number(g ?? 0)) as [number, number, number, number];
  return Math.round(h * 3_600_000 + min * 60_000 + sec * 1000 + ms);
}

/**
 * The server's wait hint: `retry-after-ms`, or `retry-after` in seconds or as an HTTP date (`now`, the
 * wall clock, says how far off it is). For a 429 without either (`rateLimited`), the reset of the
 * limit the response says ran out (`x-ratelimit-remaining-requests` or `-tokens` at 0, with its
 * `x-ratelimit-reset-…`, as OpenAI sends them): an earlier retry only meets the same limit.
 */
export function retryAfterMs(headers: unknown, rateLimited = false, now: () => number = Date.now): number | undefined {
  const ms = Number(header(headers, 'retry-after-ms'));
  if (Number.isFinite(ms) && ms >= 0 && header(headers, 'retry-after-ms') !== undefined) return ms;
  const after = header(headers, 'retry-after');
  const sec = Number(after);
  if (Number.isFinite(sec) && sec >= 0 && after !== undefined && after.trim() !== '') return sec * 1000;
  const at = after === undefined ? Number.NaN : Date.parse(after);
  if (Number.isFinite(at)) return Math.max(0, at - now());
  if (!rateLimited) return undefined;
  const resets = ['requests', 'tokens'].flatMap((limit) => (header(headers, `x-ratelimit-remaining-${limit}`)?.trim() === '0' ? [durationMs(header(headers, `x-ratelimit-reset-${limit}`))] : [])).filter((x): x is number => x !== undefined);
  return resets.length > 0 ? Math.max(...resets) : undefined;
}

/** Gemini's hint travels in the error body as RetryInfo `"retryDelay": "6s"`, which its SDK leaves in the message. */
function retryDelayInBody(message: string): number | undefined {
  const match = /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"/.exec(message);
  return match ? Math.round(Number(match[1]) * 1000) : undefined;
}

/** Error types and codes the vendors send inside a 200 stream (or a failed response) that mean "try again later". */
const TRANSIENT_TYPES = new Set([
  'overloaded_error', // Anthropic's 529 in a stream
  'api_error', // Anthropic's 500
  'rate_limit_error',
  'timeout_error',
  'server_error', // OpenAI
  'rate_limit_exceeded',
  'internal_error',
  'service_unavailable',
  'UNAVAILABLE', // Google's canonical codes
  'RESOURCE_EXHAUSTED',
  'INTERNAL',
  'DEADLINE_EXCEEDED',
]);
const CONFIG_TYPES = new Set(['authentication_error', 'permission_error', 'not_found_error', 'invalid_api_key', 'UNAUTHENTICATED', 'PERMISSION_DENIED', 'NOT_FOUND']);

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();


/**
 * An error the vendor reported after answering 200 (an SSE `error` event, a `response.failed`): no
 * status to go by, so the type or code it names decides, and its words only when it names none we know.
 */
export function streamError(adapter: string, type: string | null | undefined, message: string | null | undefined, requestId?: string | null, where = 'in the stream'): ModelError {
  const t = type ?? '';
  const text = `${t} ${message ?? ''}`.trim();
  const fromText = classifyText(text);
  // `code` may be null (the Responses schema allows it): then the words of OpenAI's own server-error message count.
  const transient = TRANSIENT_TYPES.has(t) || (t === '' && /server had an error|try again later|retry your request/i.test(message ?? ''));
  const c = fromText.errorKind === 'context_overflow' ? fromText : policyBlock([t], text) ? { errorKind: 'refusal' as const, transient: false } : transient ? { errorKind: 'infra' as const, transient: true } : CONFIG_TYPES.has(t) ? { errorKind: 'config' as const, transient: false } : fromText;
  return new ModelError(c.errorKind, `${adapter}: error ${where}: ${oneLine(text) || 'no detail'}`, { transient: c.transient, ...(requestId ? { requestId } : {}) });
}

/**
 * The vendor's error when a 200's body is its error object rather than an answer (a gateway that
 * answers every error with 200, or a server that reports a late failure so): Anthropic's `{type:
 * 'error', error: {type, message}}`, OpenAI's `{error: {type, code, message}}`. undefined: no such body.
 */
export function errorInBody(adapter: string, body: unknown, requestId?: string | null): ModelError | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const error = (body as { error?: unknown }).error;
  if (!error || typeof error !== 'object') return undefined;
  const e = error as { type?: unknown; code?: unknown; status?: unknown; message?: unknown };
  const type = [e.type, e.code, e.status].find((x): x is string => typeof x === 'string' && x !== '');
  return streamError(adapter, type, typeof e.message === 'string' ? e.message : undefined, requestId, 'in a 200 body');
}

/** What an error body says: the type, code, Google status and reasons it names, and its message. */
interface VendorSays {
  names: string[];
  message: string | undefined;
}

/**
 * Reads the three vendors' error bodies as their SDKs leave them: OpenAI's inner `{type, code, message}`
 * in `error`, Anthropic's whole `{type: 'error', error: {type, message}}` in `error`, and Gemini's
 * `{error: {status, message, details: [{reason}]}}` as JSON text in the message.
 */
function vendorSays(e: { error?: any; message?: unknown }): VendorSays {
  let body: any = e.error;
  if (body === undefined || body === null || typeof body !== 'object') {
    try {
      body = JSON.parse(String(e.message));
    } catch {
      return { names: [], message: undefined };
    }
  }
  const inner = body?.error !== null && typeof body?.error === 'object' ? body.error : body;
  const reasons = Array.isArray(inner?.details) ? inner.details.map((d: any) => d?.reason) : [];
  const names = [inner?.type, inner?.code, inner?.status, ...reasons].filter((x, i, all): x is string => typeof x === 'string' && x !== '' && all.indexOf(x) === i);
  return { names, message: typeof inner?.message === 'string' && inner.message.trim() !== '' ? inner.message : undefined };
}

/** Names and words a 403 carries when the key itself is at fault, not what it may reach. */
const KEY_NAMES = new Set(['authentication_error', 'invalid_api_key', 'UNAUTHENTICATED', 'API_KEY_INVALID']);
const KEY_WORDS = /\b(?:invalid|incorrect|expired|revoked|leaked)\b[^.]*\bapi[ _-]?key\b|\bapi[ _-]?key\b[^.]*\b(?:not valid|invalid|expired|revoked|leaked)\b/i;

/**
 * Whether the vendor refused the key. A 401 always; Gemini's 400 `API_KEY_INVALID`; a 403 only when its
 * body says the key is at fault, because a 403 is as often a key that may not reach this model, project
 * or region, or a policy block: telling the user to change a good key sends them the wrong way.
 */
function refusesKey(status: number, says: VendorSays, detail: string): boolean {
  if (status === 401) return true;
  if (status === 400) return /API_KEY_INVALID|API key not valid/.test(detail);
  if (status === 403) return says.names.some((n) => KEY_NAMES.has(n)) || KEY_WORDS.test(says.message ?? '');
  return false;
}

/** The SDKs' error classes, by what they mean. */
const SDK_CLASSES = {
  APIUserAbortError: [Anthropic.APIUserAbortError, OpenAI.APIUserAbortError],
  APIConnectionTimeoutError: [Anthropic.APIConnectionTimeoutError, OpenAI.APIConnectionTimeoutError],
  APIConnectionError: [Anthropic.APIConnectionError, OpenAI.APIConnectionError],
  APIError: [Anthropic.APIError, OpenAI.APIError],
} as const;

/**
 * The SDK error class `error` is an instance of, most specific first ('' for none). By the classes
 * themselves, not their names: a bundle of both SDKs renames one's (`APIError$1`, and the subclasses
 * it makes of class expressions after their variables), and a name test then misses every OpenAI
 * connection error.
 */
function sdkClass(error: unknown): keyof typeof SDK_CLASSES | '' {
  for (const [name, classes] of Object.entries(SDK_CLASSES) as [keyof typeof SDK_CLASSES, readonly (abstract new (...args: never[]) => unknown)[]][]) {
    if (classes.some((c) => error instanceof c)) return name;
  }
  return '';
}

export function toModelError(error: unknown, adapter: string, signal?: AbortSignal): Error {
  if (error instanceof ModelError || error instanceof InterruptedError) return error;
  const e = error as { status?: unknown; headers?: unknown; error?: any; message?: unknown; code?: unknown; requestID?: unknown };
  const name = sdkClass(error);
  if (name === 'APIUserAbortError' || signal?.aborted) return new InterruptedError(`${adapter}: request aborted`);
  const message = String(e?.message ?? error);
  // @google/genai enforces its timeout with an AbortController of its own: an abort we did not ask for is a timeout.
  const errorName = (error as { name?: unknown })?.name;
  if (errorName === 'AbortError' || errorName === 'TimeoutError') {
    return new ModelError('infra', `${adapter}: request timed out`, { transient: true, cause: error });
  }
  const requestId = typeof e?.requestID === 'string' ? e.requestID : undefined;
  // The SDKs throw an APIError without a status for an error event inside a 200 stream.
  if (e?.status === undefined && name === 'APIError' && e.error && typeof e.error === 'object') {
    const body = e.error;
    const type = [(e as { type?: unknown }).type, body.error?.type, body.type === 'error' ? undefined : body.type, body.code, body.status].find((x): x is string => typeof x === 'string' && x !== '');
    return streamError(adapter, type, typeof body.error?.message === 'string' ? body.error.message : typeof body.message === 'string' ? body.message : message, requestId);
  }
  if (typeof e?.status === 'number') {
    // Vendors disagree on where the detail lives: Anthropic `error.error.message`, OpenAI `error.message` and `code`.
    const detail = [e.error?.error?.type, e.error?.error?.message, e.error?.message, e.error?.code, e.error?.type, e.code, message].filter((x) => typeof x === 'string').join(' ');
    const fromText = classifyText(detail);
    const says = vendorSays(e);
    const keyRefused = refusesKey(e.status, says, detail);
    // OpenAI's 429 for an account out of credit, Anthropic's 402: no wait makes it pass, unlike a rate limit.
    const noCredit = (e.status === 429 && /\binsufficient_quota\b/.test(detail)) || e.status === 402 || /\bbilling_error\b|credit balance is too low/i.test(detail);
    const refused = !keyRefused && !noCredit && policyBlock(says.names, `${detail} ${says.message ?? ''}`);
    const c = fromText.errorKind === 'context_overflow' ? fromText : keyRefused || noCredit ? { errorKind: 'config' as const, transient: false } : refused ? { errorKind: 'refusal' as const, transient: false } : classifyStatus(e.status);
    const wait = retryAfterMs(e.headers, e.status === 429) ?? retryDelayInBody(message);
    // The API's own word on a retry (`x-should-retry`, as the vendors' SDKs read it) outranks the status.
    const said = header(e.headers, 'x-should-retry');
    const transient = said === 'true' ? true : said === 'false' ? false : c.transient;
    // In the vendor's words (what it named, then what it said) rather than the SDK's rendering of the body.
    const words = says.message !== undefined ? `${says.names.length > 0 ? `${says.names.join(' ')}: ` : ''}${says.message}` : message;
    return new ModelError(c.errorKind, `${adapter}: HTTP ${e.status}: ${oneLine(words)}`, {
      transient,
      status: e.status,
      keyRefused,
      noCredit,
      ...(requestId ? { requestId } : {}),
      ...(wait !== undefined ? { retryAfterMs: wait } : {}),
      cause: error,
    });
  }
  // fetch refuses a URL with a user or password in it before sending anything: no retry can help, and its
  // message (or its cause's, under the SDK's "Connection error.") quotes that URL.
  if (/URL that includes credentials/.test(`${message} ${String((e as { cause?: { message?: unknown } })?.cause?.message ?? '')}`)) {
    return new ModelError('config', `${adapter}: the base URL has a user or password in it, which fetch will not send`);
  }
  if (name === 'APIConnectionError' || name === 'APIConnectionTimeoutError' || /ECONNREFUSED|ECONNRESET|ETIMEDOUT|socket hang up|fetch failed|terminated/i.test(message)) {
    return new ModelError('infra', `${adapter}: connection failed: ${message}`, { transient: true, cause: error });
  }
  // A body we could not read (broken JSON, a cut stream) is our problem to look at, not something to retry.
  return new ModelError('harness', `${adapter}: unreadable response: ${message}`, { cause: error });
}
