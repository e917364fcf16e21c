// What a scripted mock turn can be, and the queue that hands turns to requests in arrival order.

/** Token counts for one scripted turn; each API renders them in its own fields. */
export interface MockUsage {
  /** Uncached input tokens. */
  input: number;
  /** Output tokens, reasoning included. */
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** The part of `output` spent on reasoning. */
  reasoning: number;
}

export const DEFAULT_USAGE: MockUsage = { input: 12, output: 7, cacheRead: 0, cacheWrite: 0, reasoning: 0 };

export interface MockToolCall {
  name: string;
  input: Record<string, unknown>;
  /** The provider call id; one is made up when absent. */
  id?: string;
}

/** An HTTP error the API would return; the body follows each vendor's error shape. */
export interface MockError {
  status: number;
  message?: string;
  /** The vendor error type, e.g. `rate_limit_error`, `overloaded_error`, `context_length_exceeded`. */
  type?: string;
  retryAfterMs?: number;
  retryAfterSec?: number;
  /** The `x-should-retry` header the Anthropic and OpenAI APIs send to say whether a retry can help. */
  shouldRetry?: boolean;
}

export interface MockRaw {
  status?: number;
  headers?: Record<string, string>;
  /** The body, written as it is; an array is written piece by piece (one `write` each, as a stream arrives). */
  body: string | string[];
  /** Leave the response open after the body (a stream that goes silent), until the client gives up. */
  open?: boolean;
}

/** Timing any turn can carry: answer late, or never (the client's timeout or abort ends the request). */
export interface MockTiming {
  delayMs?: number;
  hang?: boolean;
}

/** A turn that produces an answer (as opposed to an error, a broken body or silence). */
export type MockReply =
  | { text: string; toolCalls?: MockToolCall[]; usage?: Partial<MockUsage>; stop?: 'end_turn' | 'max_tokens'; reasoning?: string }
  | { toolCalls: MockToolCall[]; text?: string; usage?: Partial<MockUsage>; reasoning?: string }
  | { refusal: string; category?: string; usage?: Partial<MockUsage> };

/**
 * `reasoning` adds what a reasoning model sends before its answer: an Anthropic `thinking` block with a
 * signature, a Responses `reasoning` item with `encrypted_content`, a Gemini `thought` part. A client must
 * replay them verbatim on the next turn; the opaque tokens make that checkable.
 */
export const MOCK_SIGNATURE = 'mock-signature-opaque';
export const MOCK_ENCRYPTED_REASONING = 'mock-encrypted-reasoning-opaque';

export type MockTurn = MockTiming &
  (
    | MockReply
    | { error: MockError }
    /** A 200 response whose body is this text verbatim: broken JSON, a truncated stream. */
    | { malformed: string }
    /**
     * A response exactly as given: the status (default 200), the headers (the content type defaults to
     * the request's: `text/event-stream` when it streams, else JSON) and the body's bytes, for a test
     * that writes the vendor's wire format itself (SSE framing, event orders, error bodies).
     */
    | { raw: MockRaw }
    /** Only timing: with `hang`, the request is never answered. */
    | { hang: true }
  );

/** Reply to one request: a fixed turn, or one computed from what was sent. */
export type MockStep = MockTurn | ((request: RecordedRequest) => MockTurn);

export type MockApi = 'anthropic' | 'responses' | 'chat' | 'gemini';

export interface RecordedRequest {
  api: MockApi | 'other';
  method: string;
  /** Path and query as sent. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (`undefined` when there was none or it did not parse). */
  body: any;
  /** The raw body text, for assertions that nothing secret was sent. */
  raw: string;
  stream: boolean;
  /** The text of the last user message, as the mock understood it. */
  lastUserText: string;
  /** The client closed the connection before the answer was complete (an abort, a client timeout). */
  aborted?: boolean;
}

export function usageOf(turn: { usage?: Partial<MockUsage> }): MockUsage {
  return { ...DEFAULT_USAGE, ...turn.usage };
}

/** A reply used when the script is empty: echoes the prompt, so real CLIs always get an answer. */
export function echoTurn(request: RecordedRequest): MockTurn {
  return { text: `MOCK_REPLY(${request.api}): ${request.lastUserText}` };
}

export class TurnQueue {
  readonly #steps: MockStep[] = [];
  readonly #fallback: ((request: RecordedRequest) => MockTurn) | undefined;

  constructor(fallback: ((request: RecordedRequest) => MockTurn) | undefined) {
    this.#fallback = fallback;
  }

  push(...steps: MockStep[]): void {
    this.#steps.push(...steps);
  }

  get pending(): number {
    return this.#steps.length;
  }

  clear(): void {
    this.#steps.length = 0;
  }

  /** The next turn, or an error turn that says the script ran out (a test bug, never a silent echo). */
  next(request: RecordedRequest): MockTurn {
    const step = this.#steps.shift();
    if (step !== undefined) return typeof step === 'function' ? step(request) : step;
    if (this.#fallback) return this.#fallback(request);
    return { error: { status: 500, type: 'mock_script_exhausted', message: `mock: no scripted turn left for ${request.api} request ${request.url}` } };
  }
}

let counter = 0;
/** Provider-looking ids; unique per process so replies never collide. */
export function mockId(prefix: string): string {
  return `${prefix}${(++counter).toString(36)}`;
}
