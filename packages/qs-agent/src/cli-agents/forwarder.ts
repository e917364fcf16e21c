// The model forwarder: outside the sandbox, it adds the real key to a model CLI's API calls, passes only the vendor's model paths, and records each call.
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import { classifyStatus, policyBlock, type ErrorKind } from '@quickloop/models/cli';
import { baseUrlScrubber } from '@quickloop/models/core';

export type Vendor = 'anthropic' | 'openai';

export interface Usage5 {
  input_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
}

export type TurnBlock = { type: 'text'; text: string } | { type: 'tool_call'; id: string; name: string; input: Record<string, unknown> };

export type Stop = 'end_turn' | 'tool_use' | 'max_tokens' | 'refusal' | 'context_overflow' | 'other';

/** One model request that reached the vendor (or was answered for it), as the agent reports it. */
export interface ModelCall {
  status: number;
  /** The model the vendor said served it (or the one asked for). */
  model: string;
  stop: Stop;
  blocks: TurnBlock[];
  usage: Usage5;
  /** Of `usage.cache_write_tokens`, those written to a one-hour cache (Anthropic's `cache_creation`), billed dearer. */
  cacheWrite1h?: number;
  requestId: string | null;
  durationMs: number;
  /** A failed call: what the vendor said, in one line, and its kind. */
  error?: string;
  errorKind?: ErrorKind;
  refusal?: { category?: string; explanation?: string };
}

/** A request the forwarder would not pass on. */
export interface RefusedRequest {
  method: string;
  /** The request target as sent (cut to 200 characters). */
  target: string;
  status: number;
  reason: 'not_model_path' | 'bad_method' | 'too_large' | 'bad_body' | 'token_budget' | 'max_turns' | 'upgrade' | 'connect';
}

export interface ForwarderOptions {
  vendor: Vendor;
  /**
   * The vendor base URL (ANTHROPIC_BASE_URL without /v1; OPENAI_BASE_URL with it). Its query (a
   * gateway's key) is added to every call and, like the key, shown to no caller and in no record.
   */
  upstream: string;
  key: string;
  socketPath: string;
  /** Billable tokens (input, cache read and write, output) after which every further call is refused; 0 = no limit. */
  maxTokens: number;
  /** Answered model calls after which every further call is refused (a CLI without a turns flag is held to it here). */
  maxTurns: number;
  onCall?: (call: ModelCall) => void;
  onRefused?: (refused: RefusedRequest) => void;
  /** Called once, when a call is refused because the token or turn budget is spent. */
  onBudgetSpent?: (which: 'token_budget' | 'max_turns') => void;
  /** Vendor-side tools taken out of a model call before it was passed on (names or types). */
  onStripped?: (removed: string[], target: string) => void;
  /** The largest request body passed on (default MAX_REQUEST_BYTES). */
  maxRequestBytes?: number;
}

export interface Forwarder {
  readonly calls: readonly ModelCall[];
  readonly refused: readonly RefusedRequest[];
  /** Billable tokens so far. */
  readonly spent: number;
  /** Which budget made the forwarder refuse a call, if one did. */
  readonly budgetSpent: 'token_budget' | 'max_turns' | undefined;
  close(): Promise<void>;
}

/** Large enough for a long conversation with its tool schemas; a body past it is refused unread. */
export const MAX_REQUEST_BYTES = 32 * 1024 * 1024;
/** What of a non-streamed answer is kept to read usage from (it is passed on whole either way). */
const MAX_PARSED_BYTES = 8 * 1024 * 1024;

/**
 * The one path of each vendor a model CLI needs, matched on the raw request target: no decoding, no
 * normalisation, so `/v1/../x`, `//v1/messages`, `%2e%2e` or an absolute URL never match.
 */
const ROUTES: Record<Vendor, { target: RegExp; upstreamPath: (target: string) => string }> = {
  // claude adds ?beta=true; ANTHROPIC_BASE_URL is the host (plus a gateway's prefix), without /v1.
  anthropic: { target: /^\/v1\/messages(\?beta=true)?$/, upstreamPath: (t) => t },
  // OPENAI_BASE_URL (codex's provider base_url) ends in /v1.
  openai: { target: /^\/v1\/responses$/, upstreamPath: (t) => t.slice('/v1'.length) },
};

/** Request headers never passed on: credentials, hop-by-hop, and what would point the vendor elsewhere. */
const DROPPED = new Set([
  'host', 'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'transfer-encoding', 'te', 'trailer', 'upgrade',
  'content-length', 'authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'cookie', 'accept-encoding', 'forwarded',
  'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip', 'openai-organization', 'openai-project',
]);
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-connection']);

export const ZERO: Usage5 = { input_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, output_tokens: 0, reasoning_tokens: 0 };

const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

export const billable = (u: Usage5): number => u.input_tokens + u.cache_read_tokens + u.cache_write_tokens + u.output_tokens;

export function addUsage(a: Usage5, b: Usage5): Usage5 {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    cache_read_tokens: a.cache_read_tokens + b.cache_read_tokens,
    cache_write_tokens: a.cache_write_tokens + b.cache_write_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    reasoning_tokens: a.reasoning_tokens + b.reasoning_tokens,
  };
}

function anthropicUsage(u: any): Usage5 {
  return { input_tokens: n(u?.input_tokens), cache_read_tokens: n(u?.cache_read_input_tokens), cache_write_tokens: n(u?.cache_creation_input_tokens), output_tokens: n(u?.output_tokens), reasoning_tokens: 0 };
}

/** OpenAI's input_tokens include the cached ones; ours do not. */
function openaiUsage(u: any): Usage5 {
  const cached = n(u?.input_tokens_details?.cached_tokens);
  return { input_tokens: Math.max(0, n(u?.input_tokens) - cached), cache_read_tokens: cached, cache_write_tokens: 0, output_tokens: n(u?.output_tokens), reasoning_tokens: n(u?.output_tokens_details?.reasoning_tokens) };
}

function anthropicStop(reason: unknown): Stop {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'end_turn';
    case 'tool_use':
      return 'tool_use';
    case 'max_tokens':
      return 'max_tokens';
    case 'refusal':
      return 'refusal';
    case 'model_context_window_exceeded':
      return 'context_overflow';
    default:
      return 'other';
  }
}

function parseArgs(text: unknown): Record<string, unknown> {
  if (typeof text !== 'string' || text === '') return {};
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** Reads an answer as it streams by (SSE) or whole (JSON): model, usage, stop and blocks. */
class AnswerReader {
  model: string | undefined;
  usage: Usage5 = { ...ZERO };
  /** Anthropic's one-hour cache writes, when its usage tells them apart. */
  cacheWrite1h: number | undefined;
  stop: Stop = 'other';
  blocks: TurnBlock[] = [];
  refusal: { category?: string; explanation?: string } | undefined;
  error: string | undefined;
  readonly #vendor: Vendor;
  readonly #partial = new Map<number, { kind: 'text' | 'tool'; text: string; id: string; name: string }>();
  #sse = '';
  #data: string[] = [];
  #json = '';
  #jsonBytes = 0;

  constructor(vendor: Vendor) {
    this.#vendor = vendor;
  }

  sse(chunk: string): void {
    this.#sse += chunk;
    let nl: number;
    while ((nl = this.#sse.indexOf('\n')) >= 0) {
      const line = this.#sse.slice(0, nl).replace(/\r$/, '');
      this.#sse = this.#sse.slice(nl + 1);
      if (line === '') {
        if (this.#data.length > 0) this.#event(this.#data.join('\n'));
        this.#data = [];
      } else if (line.startsWith('data:')) this.#data.push(line.slice(5).replace(/^ /, ''));
    }
  }

  json(chunk: Buffer): void {
    this.#jsonBytes += chunk.length;
    if (this.#jsonBytes <= MAX_PARSED_BYTES) this.#json += chunk.toString('utf8');
  }

  finish(): void {
    if (this.#data.length > 0) this.#event(this.#data.join('\n'));
    if (this.#json !== '') {
      let body: any;
      try {
        body = JSON.parse(this.#json);
      } catch {
        return;
      }
      if (this.#vendor === 'anthropic') this.#anthropicMessage(body);
      else this.#openaiResponse(body);
      if (body?.error) this.error = String(body.error.message ?? body.error.type ?? 'error');
    }
  }

  #event(data: string): void {
    let e: any;
    try {
      e = JSON.parse(data);
    } catch {
      return;
    }
    if (this.#vendor === 'anthropic') this.#anthropicEvent(e);
    else if (e?.type === 'response.completed' || e?.type === 'response.incomplete' || e?.type === 'response.failed') this.#openaiResponse(e.response);
    else if (e?.type === 'error') this.error = String(e.message ?? e.error?.message ?? 'stream error');
  }

  /** A usage's `cache_creation.ephemeral_1h_input_tokens`, when it has one (message_delta's, cumulative, replaces message_start's). */
  #hourWrites(u: any): void {
    const hour = u?.cache_creation?.ephemeral_1h_input_tokens;
    if (hour !== undefined && hour !== null) this.cacheWrite1h = n(hour);
  }

  #anthropicEvent(e: any): void {
    switch (e?.type) {
      case 'message_start':
        this.model = typeof e.message?.model === 'string' ? e.message.model : this.model;
        this.usage = anthropicUsage(e.message?.usage);
        this.#hourWrites(e.message?.usage);
        break;
      case 'content_block_start': {
        const b = e.content_block ?? {};
        if (b.type === 'text') this.#partial.set(e.index, { kind: 'text', text: String(b.text ?? ''), id: '', name: '' });
        else if (b.type === 'tool_use' || b.type === 'server_tool_use') this.#partial.set(e.index, { kind: 'tool', text: '', id: String(b.id ?? ''), name: String(b.name ?? '') });
        break;
      }
      case 'content_block_delta': {
        const p = this.#partial.get(e.index);
        if (!p) break;
        if (e.delta?.type === 'text_delta') p.text += String(e.delta.text ?? '');
        else if (e.delta?.type === 'input_json_delta') p.text += String(e.delta.partial_json ?? '');
        break;
      }
      case 'content_block_stop': {
        const p = this.#partial.get(e.index);
        if (!p) break;
        this.#partial.delete(e.index);
        this.blocks.push(p.kind === 'text' ? { type: 'text', text: p.text } : { type: 'tool_call', id: p.id || `call_${this.blocks.length}`, name: p.name, input: parseArgs(p.text) });
        break;
      }
      case 'message_delta': {
        if (e.delta?.stop_reason !== undefined) this.stop = anthropicStop(e.delta.stop_reason);
        if (e.delta?.stop_details) this.refusal = { ...(e.delta.stop_details.category ? { category: String(e.delta.stop_details.category) } : {}), ...(e.delta.stop_details.explanation ? { explanation: String(e.delta.stop_details.explanation) } : {}) };
        // message_delta's counts are cumulative; a field it leaves out keeps message_start's.
        const u = e.usage ?? {};
        const later = anthropicUsage(u);
        this.usage = {
          input_tokens: u.input_tokens !== undefined ? later.input_tokens : this.usage.input_tokens,
          cache_read_tokens: u.cache_read_input_tokens !== undefined ? later.cache_read_tokens : this.usage.cache_read_tokens,
          cache_write_tokens: u.cache_creation_input_tokens !== undefined ? later.cache_write_tokens : this.usage.cache_write_tokens,
          output_tokens: u.output_tokens !== undefined ? later.output_tokens : this.usage.output_tokens,
          reasoning_tokens: 0,
        };
        this.#hourWrites(u);
        break;
      }
      case 'error':
        this.error = String(e.error?.message ?? 'stream error');
        break;
    }
  }

  #anthropicMessage(m: any): void {
    if (!m || m.type !== 'message') return;
    this.model = typeof m.model === 'string' ? m.model : this.model;
    this.usage = anthropicUsage(m.usage);
    this.#hourWrites(m.usage);
    this.stop = anthropicStop(m.stop_reason);
    for (const b of Array.isArray(m.content) ? m.content : []) {
      if (b?.type === 'text') this.blocks.push({ type: 'text', text: String(b.text ?? '') });
      else if (b?.type === 'tool_use') this.blocks.push({ type: 'tool_call', id: String(b.id ?? `call_${this.blocks.length}`), name: String(b.name ?? ''), input: b.input && typeof b.input === 'object' ? b.input : {} });
    }
  }

  #openaiResponse(r: any): void {
    if (!r || typeof r !== 'object') return;
    this.model = typeof r.model === 'string' ? r.model : this.model;
    this.usage = openaiUsage(r.usage);
    let tool = false;
    let refused = false;
    for (const item of Array.isArray(r.output) ? r.output : []) {
      if (item?.type === 'function_call') {
        tool = true;
        this.blocks.push({ type: 'tool_call', id: String(item.call_id ?? item.id ?? `call_${this.blocks.length}`), name: String(item.name ?? ''), input: parseArgs(item.arguments) });
      } else if (item?.type === 'message') {
        for (const part of Array.isArray(item.content) ? item.content : []) {
          if (part?.type === 'output_text') this.blocks.push({ type: 'text', text: String(part.text ?? '') });
          else if (part?.type === 'refusal') {
            refused = true;
            this.refusal = { explanation: String(part.refusal ?? '') };
          }
        }
      }
    }
    if (r.status === 'incomplete') this.stop = r.incomplete_details?.reason === 'max_output_tokens' ? 'max_tokens' : 'other';
    else if (r.status === 'failed') this.error = String(r.error?.message ?? 'response failed');
    else this.stop = refused ? 'refusal' : tool ? 'tool_use' : 'end_turn';
  }
}

/**
 * Tools the vendor runs itself (web search and fetch, code execution, MCP servers, file search)
 * would reach the web from the vendor's side, past the sandbox's proxy and unrecorded: they are
 * taken out of the request, which is otherwise passed on as sent. Client tools (the CLI's own,
 * run inside the sandbox) stay.
 */
export function stripVendorTools(vendor: Vendor, body: Record<string, any>): string[] {
  const removed: string[] = [];
  const serverSide = vendor === 'anthropic' ? /^(web_search|web_fetch|code_execution|mcp|tool_search)/ : /^(web_search|file_search|mcp|code_interpreter|image_generation|computer)/;
  if (Array.isArray(body.tools)) {
    body.tools = body.tools.filter((t: any) => {
      const type = typeof t?.type === 'string' ? t.type : '';
      if (!serverSide.test(type)) return true;
      removed.push(type);
      return false;
    });
  }
  for (const key of vendor === 'anthropic' ? ['mcp_servers', 'container'] : ['background']) {
    if (key in body) {
      delete body[key];
      removed.push(key);
    }
  }
  // A forced choice of a removed tool would only make the vendor refuse the call.
  if (removed.length > 0 && body.tool_choice && typeof body.tool_choice === 'object' && serverSide.test(String(body.tool_choice.type ?? ''))) delete body.tool_choice;
  return removed;
}

function vendorError(vendor: Vendor, status: number, message: string): string {
  const type = status === 413 ? 'request_too_large' : status === 403 ? 'permission_error' : 'invalid_request_error';
  return vendor === 'anthropic' ? JSON.stringify({ type: 'error', error: { type, message } }) : JSON.stringify({ error: { message, type, param: null, code: type } });
}

const cut = (s: string, max = 200): string => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** One line of what went wrong, never with a header value in it. */
function oneLine(s: string): string {
  return cut(s.replace(/\s+/g, ' ').trim(), 300);
}

/**
 * The request's target with the base URL's query (`key=…&v=1`, as configured) after its own: a
 * gateway that takes its key there gets it on every call. A name the request gives itself keeps
 * the request's value (claude's `beta=true`).
 */
export function withBaseQuery(target: string, baseQuery: string): string {
  const mark = target.indexOf('?');
  const own = new URLSearchParams(mark < 0 ? '' : target.slice(mark + 1));
  const added = baseQuery.split('&').filter((pair) => pair !== '' && !own.has([...new URLSearchParams(pair).keys()][0] ?? ''));
  if (added.length === 0) return target;
  return `${target}${mark < 0 ? '?' : '&'}${added.join('&')}`;
}

/** Each header value with the secrets taken out (a gateway may name the URL it was asked for in one). */
function scrubHeaders(headers: Record<string, string | string[]>, scrub: (text: string) => string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = Array.isArray(value) ? value.map(scrub) : scrub(value);
  return out;
}

export async function startForwarder(o: ForwarderOptions): Promise<Forwarder> {
  const calls: ModelCall[] = [];
  const refused: RefusedRequest[] = [];
  let spent = 0;
  let budgetSpent: 'token_budget' | 'max_turns' | undefined;
  let answered = 0;
  const base = new URL(o.upstream);
  // The key and the base URL's query values, in any encoding, wherever a vendor or a gateway may echo them.
  const scrub = baseUrlScrubber(o.upstream, o.key);
  const client = base.protocol === 'https:' ? https : http;
  const route = ROUTES[o.vendor];
  const open = new Set<Duplex>();
  const maxBytes = o.maxRequestBytes ?? MAX_REQUEST_BYTES;

  const refuse = (method: string, target: string, status: number, reason: RefusedRequest['reason']): RefusedRequest => {
    const r: RefusedRequest = { method: cut(method, 20), target: cut(target), status, reason };
    refused.push(r);
    o.onRefused?.(r);
    return r;
  };

  const answer = (res: ServerResponse, status: number, message: string): void => {
    if (res.headersSent) return void res.destroy();
    res.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
    res.end(vendorError(o.vendor, status, message));
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const target = req.url ?? '';
    const method = req.method ?? '';
    if (!route.target.test(target)) {
      refuse(method, target, 403, 'not_model_path');
      req.resume();
      return answer(res, 403, `quickloop forwarder: ${cut(target, 80)} is not a model API path; only the vendor's model calls are forwarded`);
    }
    if (method !== 'POST') {
      refuse(method, target, 405, 'bad_method');
      req.resume();
      return answer(res, 405, `quickloop forwarder: ${cut(method, 20)} is not forwarded (model calls are POST)`);
    }
    const over = budgetSpent ?? (o.maxTokens > 0 && spent >= o.maxTokens ? 'token_budget' : answered >= o.maxTurns ? 'max_turns' : undefined);
    if (over !== undefined) {
      refuse(method, target, 400, over);
      req.resume();
      if (budgetSpent === undefined) {
        budgetSpent = over;
        o.onBudgetSpent?.(over);
      }
      return answer(res, 400, over === 'token_budget' ? `quickloop forwarder: the run's token budget (max_tokens ${o.maxTokens}) is spent` : `quickloop forwarder: the run's turn budget (max_turns ${o.maxTurns}) is spent`);
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBytes) {
      refuse(method, target, 413, 'too_large');
      // Not read: the connection is closed after the answer.
      res.once('finish', () => req.socket.destroy());
      return answer(res, 413, `quickloop forwarder: the request body is over ${maxBytes} bytes`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      if (tooLarge) return;
      size += c.length;
      if (size > maxBytes) {
        tooLarge = true;
        chunks.length = 0;
        refuse(method, target, 413, 'too_large');
        answer(res, 413, `quickloop forwarder: the request body is over ${maxBytes} bytes`);
        // Nothing more is read: once the answer is out, the connection ends.
        res.once('finish', () => req.socket.destroy());
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (tooLarge) return;
      forward(req, res, target, Buffer.concat(chunks));
    });
    req.on('error', () => res.destroy());
  };

  const forward = (req: IncomingMessage, res: ServerResponse, target: string, sent: Buffer): void => {
    const started = performance.now();
    const method = req.method ?? 'POST';
    // The body is read to take vendor-side tools out of it: one it cannot read is not passed on.
    const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding !== 'identity') {
      refuse(method, target, 415, 'bad_body');
      return answer(res, 415, `quickloop forwarder: a ${cut(encoding, 20)}-encoded request body is not forwarded`);
    }
    let parsed: any;
    try {
      parsed = JSON.parse(sent.toString('utf8'));
    } catch {
      parsed = undefined;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      refuse(method, target, 400, 'bad_body');
      return answer(res, 400, 'quickloop forwarder: the request body is not a JSON object');
    }
    const asked = typeof parsed.model === 'string' ? (parsed.model as string) : undefined;
    const removed = stripVendorTools(o.vendor, parsed);
    if (removed.length > 0) o.onStripped?.(removed, target);
    const body = removed.length > 0 ? Buffer.from(JSON.stringify(parsed)) : sent;
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !DROPPED.has(name.toLowerCase())) headers[name] = value;
    if (o.vendor === 'anthropic') headers['x-api-key'] = o.key;
    else headers.authorization = `Bearer ${o.key}`;
    headers['content-length'] = String(body.length);
    // Identity: usage is read from the bytes as they pass.
    headers['accept-encoding'] = 'identity';
    const prefix = base.pathname.replace(/\/+$/, '');
    const upstream = client.request(
      { protocol: base.protocol, hostname: base.hostname, port: base.port || undefined, method: 'POST', path: withBaseQuery(prefix + route.upstreamPath(target), base.search.slice(1)), headers },
      (up) => {
        const status = up.statusCode ?? 502;
        const out: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(up.headers)) if (value !== undefined && !HOP.has(name)) out[name] = value;
        // An error's answer may quote the URL it was asked for, the gateway's key in it: it is held
        // and passed on scrubbed, headers and all. A model's answer streams by as it comes, untouched
        // (a short query value scrubbed out of its content-type would break the stream).
        const held = status >= 400 && String(up.headers['content-encoding'] ?? 'identity').toLowerCase() === 'identity';
        if (held) delete out['content-length'];
        res.writeHead(status, held ? scrubHeaders(out, scrub) : out);
        if (!held) res.flushHeaders();
        const reader = new AnswerReader(o.vendor);
        const streaming = String(up.headers['content-type'] ?? '').includes('text/event-stream');
        const kept: Buffer[] = [];
        let keptBytes = 0;
        up.on('data', (c: Buffer) => {
          if (streaming) reader.sse(c.toString('utf8'));
          else reader.json(c);
          // Written as it comes: an SSE event reaches the CLI when the vendor sends it.
          if (!held) return void res.write(c);
          if (keptBytes + c.length <= MAX_PARSED_BYTES) kept.push(c);
          keptBytes += c.length;
        });
        up.on('end', () => {
          res.end(held ? scrub(Buffer.concat(kept).toString('utf8')) : undefined);
          reader.finish();
          record(status, reader, asked, up.headers, started);
        });
        up.on('error', (error) => {
          res.destroy();
          reader.finish();
          record(status, reader, asked, up.headers, started, `the answer broke off: ${error.message}`);
        });
      },
    );
    // The CLI gone (killed at the deadline), the vendor's answer is of no use to anyone: stop it.
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.on('error', (error) => {
      if (res.destroyed) return;
      // The message names the host, never a header: the key cannot be in it.
      const call: ModelCall = { status: 502, model: asked ?? 'unknown', stop: 'other', blocks: [], usage: { ...ZERO }, requestId: null, durationMs: Math.round(performance.now() - started), error: oneLine(scrub(`cannot reach ${base.host}: ${error.message}`)), errorKind: 'infra' };
      calls.push(call);
      o.onCall?.(call);
      answer(res, 502, `quickloop forwarder: cannot reach the model API (${oneLine(scrub(error.message))})`);
    });
    upstream.end(body);
  };

  const record = (status: number, reader: AnswerReader, asked: string | undefined, headers: http.IncomingHttpHeaders, started: number, broke?: string): void => {
    const rid = headers['request-id'] ?? headers['x-request-id'];
    const call: ModelCall = {
      status,
      model: reader.model ?? asked ?? 'unknown',
      stop: reader.stop,
      blocks: reader.blocks,
      usage: reader.usage,
      ...(reader.cacheWrite1h ? { cacheWrite1h: reader.cacheWrite1h } : {}),
      requestId: typeof rid === 'string' ? rid : null,
      durationMs: Math.round(performance.now() - started),
    };
    if (reader.refusal) call.refusal = reader.refusal;
    if (status >= 400 || broke !== undefined || reader.error !== undefined) {
      const said = broke ?? reader.error ?? `HTTP ${status}`;
      // Scrubbed before it is cut: a secret cut in two would no longer be found.
      call.error = oneLine(scrub(said));
      const kind = status >= 400 ? classifyStatus(status).errorKind : 'infra';
      // A content policy that blocked the prompt or the answer is the model declining, whatever the status.
      call.errorKind = /prompt is too long|context.?window|context_length_exceeded|maximum context length/i.test(said) ? 'context_overflow' : policyBlock([], said) ? 'refusal' : kind;
    }
    spent += billable(call.usage);
    if (call.error === undefined) answered += 1;
    calls.push(call);
    o.onCall?.(call);
  };

  const server = http.createServer({ requestTimeout: 0, headersTimeout: 60_000 }, handle);
  // CONNECT and Upgrade are how a client asks a server to become a tunnel: never here.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    refuse('CONNECT', req.url ?? '', 403, 'connect');
    socket.on('error', () => {});
    socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    refuse(req.method ?? 'GET', req.url ?? '', 403, 'upgrade');
    socket.on('error', () => {});
    socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  server.on('connection', (s) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  });
  server.on('clientError', (_error, socket) => {
    refuse('?', '(unparseable request)', 400, 'not_model_path');
    socket.on('error', () => {});
    socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  server.listen(o.socketPath);
  await once(server, 'listening');
  return {
    calls,
    refused,
    get spent() {
      return spent;
    },
    get budgetSpent() {
      return budgetSpent;
    },
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
