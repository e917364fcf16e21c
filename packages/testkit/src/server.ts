// The mock model server: one loopback port that speaks every vendor API, answers from a script and records every request.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicErrorBody, anthropicLastUserText, sendAnthropic } from './anthropic.js';
import { geminiLastUserText, sendGemini } from './gemini.js';
import { chatLastUserText, sendChat } from './openai-chat.js';
import { orphanReasoning, responsesLastUserText, sendResponses } from './openai-responses.js';
import { echoTurn, TurnQueue, type MockApi, type MockError, type MockReply, type MockStep, type MockTurn, type RecordedRequest } from './script.js';

export interface MockServerOptions {
  /** Turns to answer with, in order; more can be added later with `mock.push`. */
  script?: MockStep[];
  /**
   * What to answer once the script is empty: `'echo'` (default) replies `MOCK_REPLY(<api>): <last user text>`,
   * `'error'` answers 500 so a test notices that it under-scripted, or a function of the request.
   */
  whenEmpty?: 'echo' | 'error' | ((request: RecordedRequest) => MockTurn);
  /** Refuse requests that carry no credential, as the real APIs do (default true). */
  requireKey?: boolean;
}

export interface MockServer {
  /** `http://127.0.0.1:PORT`: the Anthropic base URL, and the Gemini one. */
  readonly url: string;
  /** `http://127.0.0.1:PORT/v1`: the OpenAI base URL (the SDK appends `/responses`, `/chat/completions`). */
  readonly openaiUrl: string;
  readonly port: number;
  /** Every request received, in order, including refused and unknown ones. */
  readonly requests: RecordedRequest[];
  /** Model requests of one API. */
  requestsFor(api: MockApi): RecordedRequest[];
  /** Everything that reached the server (bodies and header values), for "this secret was never sent" assertions. */
  receivedText(): string;
  push(...steps: MockStep[]): void;
  /** Resolves once every request received so far has been answered or dropped by its client (then `aborted` is final). */
  settled(): Promise<void>;
  /** Scripted turns not yet consumed. */
  readonly pending: number;
  reset(): void;
  close(): Promise<void>;
}

function routeOf(method: string, path: string): MockApi | 'other' {
  if (method !== 'POST') return 'other';
  if (path.startsWith('/v1/messages')) return 'anthropic';
  if (path === '/v1/responses') return 'responses';
  if (path === '/v1/chat/completions') return 'chat';
  if (/^\/v1(beta|alpha)?\/models\/[^/]+:(stream)?[gG]enerateContent$/.test(path)) return 'gemini';
  return 'other';
}

function lastUserText(api: MockApi | 'other', body: unknown): string {
  switch (api) {
    case 'anthropic':
      return anthropicLastUserText(body);
    case 'responses':
      return responsesLastUserText(body);
    case 'chat':
      return chatLastUserText(body);
    case 'gemini':
      return geminiLastUserText(body);
    default:
      return '';
  }
}

function errorBody(api: MockApi, error: MockError): unknown {
  const message = error.message ?? `mock ${error.status}`;
  if (api === 'anthropic') return anthropicErrorBody(error);
  if (api === 'gemini') {
    // Google's canonical codes for the statuses: a 403 is PERMISSION_DENIED whether the key or the project is at fault.
    const status = error.status === 429 ? 'RESOURCE_EXHAUSTED' : error.status >= 500 ? 'UNAVAILABLE' : error.status === 401 ? 'UNAUTHENTICATED' : error.status === 403 ? 'PERMISSION_DENIED' : error.status === 404 ? 'NOT_FOUND' : 'INVALID_ARGUMENT';
    // Gemini puts its wait hint in the body (RetryInfo), not in a header.
    const wait = error.retryAfterMs ?? (error.retryAfterSec !== undefined ? error.retryAfterSec * 1000 : undefined);
    const details = wait === undefined ? [] : [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${wait / 1000}s` }];
    return { error: { code: error.status, message, status, details } };
  }
  const type = error.type ?? (error.status === 429 ? 'rate_limit_exceeded' : error.status >= 500 ? 'server_error' : 'invalid_request_error');
  return { error: { message, type, param: null, code: type } };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export async function startMockServer(options: MockServerOptions = {}): Promise<MockServer> {
  const whenEmpty = options.whenEmpty ?? 'echo';
  const queue = new TurnQueue(whenEmpty === 'echo' ? echoTurn : whenEmpty === 'error' ? undefined : whenEmpty);
  queue.push(...(options.script ?? []));
  const requests: RecordedRequest[] = [];
  const open = new Set<Promise<void>>();
  let served = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const url = req.url ?? '/';
    const path = url.split('?')[0] ?? '/';
    const method = req.method ?? 'GET';
    let body: any;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = undefined;
    }
    // The control endpoints let another process (a fake CLI, a shell script) script the mock too.
    if (path === '/__mock/requests' && method === 'GET') return sendJson(res, 200, requests);
    if (path === '/__mock/script' && method === 'POST') {
      if (!Array.isArray(body)) return sendJson(res, 400, { error: 'POST an array of turns' });
      queue.push(...(body as MockTurn[]));
      return sendJson(res, 200, { pending: queue.pending });
    }
    const api = routeOf(method, path);
    const stream = Boolean(body?.stream) || url.includes(':streamGenerateContent');
    const record: RecordedRequest = { api, method, url, headers: req.headers, body, raw, stream, lastUserText: lastUserText(api, body) };
    requests.push(record);
    open.add(
      new Promise<void>((resolve) =>
        res.once('close', () => {
          if (!res.writableFinished) record.aborted = true;
          resolve();
        }),
      ),
    );
    // claude -p probes HEAD / unless told not to; answer it rather than fail the CLI.
    if (method === 'HEAD') return void res.writeHead(200).end();
    if (method === 'GET' && path === '/v1/models') return sendJson(res, 200, { object: 'list', data: [] });
    if (api === 'other') return sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `mock: no route ${method} ${url}` } });
    const requestId = `req_mock_${++served}`;
    const hasKey = Boolean(req.headers['x-api-key'] || req.headers.authorization || req.headers['x-goog-api-key'] || new URL(url, 'http://x').searchParams.get('key'));
    if (options.requireKey !== false && !hasKey) {
      return sendJson(res, 401, errorBody(api, { status: 401, message: 'mock: missing API key' }), { 'request-id': requestId });
    }
    if (body === undefined) return sendJson(res, 400, errorBody(api, { status: 400, message: 'mock: body is not JSON' }));
    // Refused before a turn is taken, as the API refuses it before any generation.
    const invalid = api === 'responses' ? orphanReasoning(body) : undefined;
    if (invalid) return sendJson(res, invalid.status, invalid.body, { 'x-request-id': requestId });
    const turn = queue.next(record);
    if (turn.hang) return;
    if (turn.delayMs) await new Promise((resolve) => setTimeout(resolve, turn.delayMs));
    if ('error' in turn) {
      const headers: Record<string, string> = { 'request-id': requestId, 'x-request-id': requestId };
      if (turn.error.retryAfterMs !== undefined) headers['retry-after-ms'] = String(turn.error.retryAfterMs);
      if (turn.error.retryAfterSec !== undefined) headers['retry-after'] = String(turn.error.retryAfterSec);
      if (turn.error.shouldRetry !== undefined) headers['x-should-retry'] = String(turn.error.shouldRetry);
      return sendJson(res, turn.error.status, errorBody(api, turn.error), headers);
    }
    if ('raw' in turn) {
      res.writeHead(turn.raw.status ?? 200, { 'content-type': stream ? 'text/event-stream' : 'application/json', 'request-id': requestId, 'x-request-id': requestId, ...turn.raw.headers });
      for (const piece of typeof turn.raw.body === 'string' ? [turn.raw.body] : turn.raw.body) res.write(piece);
      if (!turn.raw.open) res.end();
      return;
    }
    if ('malformed' in turn) {
      res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json', 'request-id': requestId });
      return void res.end(turn.malformed);
    }
    if (!('text' in turn) && !('toolCalls' in turn) && !('refusal' in turn)) return sendJson(res, 500, errorBody(api, { status: 500, message: 'mock: a turn needs text, toolCalls, refusal, error, malformed, raw or hang' }));
    const reply = turn as MockReply;
    if (api === 'anthropic') return sendAnthropic(res, reply, body, requestId);
    if (api === 'responses') return sendResponses(res, reply, body, requestId);
    if (api === 'chat') return sendChat(res, reply, body, requestId);
    return sendGemini(res, reply, url, requestId);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `mock crashed: ${String(error)}` } });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    openaiUrl: `${url}/v1`,
    port,
    requests,
    requestsFor: (api) => requests.filter((r) => r.api === api),
    receivedText: () => requests.map((r) => `${r.url}\n${JSON.stringify(r.headers)}\n${r.raw}`).join('\n'),
    push: (...steps) => queue.push(...steps),
    settled: async () => {
      await Promise.all([...open]);
    },
    get pending() {
      return queue.pending;
    },
    reset: () => {
      requests.length = 0;
      queue.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
