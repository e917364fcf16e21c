// The model forwarder as an attacker inside the sandbox meets it: only the model path passes, with the real key, and every other request is refused and recorded.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockServer, type MockServer } from '@quickloop/testkit';
import { startForwarder, type Forwarder, type ForwarderOptions } from './forwarder.js';
import { vendorCredentials } from './host.js';

const SECRET = 'sk-forwarder-test-SECRET-123';
let dir: string;
let mock: MockServer;
const open: Forwarder[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'qs-forwarder-'));
  mock = await startMockServer({ whenEmpty: 'echo' });
});
afterAll(async () => {
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  for (const f of open.splice(0)) await f.close();
  mock.reset();
});

let n = 0;
async function forwarder(o: Partial<ForwarderOptions> = {}): Promise<{ f: Forwarder; socketPath: string }> {
  const socketPath = join(dir, `f${++n}.sock`);
  const f = await startForwarder({ vendor: 'anthropic', upstream: mock.url, key: SECRET, socketPath, maxTokens: 0, maxTurns: 100, ...o });
  open.push(f);
  return { f, socketPath };
}

interface Answer {
  status: number;
  body: string;
}

function request(socketPath: string, method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method, path, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Raw bytes on the socket, for request lines no HTTP client would send. */
function raw(socketPath: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ path: socketPath });
    let got = '';
    s.on('data', (c: Buffer) => (got += c.toString()));
    s.on('end', () => resolve(got));
    s.on('close', () => resolve(got));
    s.on('error', reject);
    s.write(text);
  });
}

const ask = JSON.stringify({ model: 'claude-mock', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] });

describe('the model forwarder', () => {
  it('passes a model call on with the real key in place of whatever the caller sent, and records its usage from the stream', async () => {
    const { f, socketPath } = await forwarder();
    mock.push({ text: 'hello', usage: { input: 30, output: 5, cacheRead: 7, cacheWrite: 3 } });
    const a = await request(socketPath, 'POST', '/v1/messages?beta=true', { 'x-api-key': 'placeholder', authorization: 'Bearer stolen', cookie: 'c=1', host: 'evil.test', 'x-forwarded-host': 'evil.test' }, ask);
    expect(a.status).toBe(200);
    expect(a.body).toContain('message_stop');
    const got = mock.requests[0];
    expect(got?.headers['x-api-key']).toBe(SECRET);
    expect(got?.headers.authorization).toBeUndefined();
    expect(got?.headers.cookie).toBeUndefined();
    expect(got?.headers['x-forwarded-host']).toBeUndefined();
    // The Host header names the vendor, whatever the caller said.
    expect(got?.headers.host).toBe(`127.0.0.1:${mock.port}`);
    expect(f.calls).toEqual([
      expect.objectContaining({ status: 200, model: 'claude-mock', stop: 'end_turn', blocks: [{ type: 'text', text: 'hello' }], usage: { input_tokens: 30, cache_read_tokens: 7, cache_write_tokens: 3, output_tokens: 5, reasoning_tokens: 0 }, requestId: 'req_mock_1' }),
    ]);
  });

  it('reads usage and tool calls from a non-streamed answer and from the Responses API', async () => {
    const { f, socketPath } = await forwarder();
    mock.push({ toolCalls: [{ name: 'Bash', input: { command: 'ls' }, id: 'toolu_1' }] });
    await request(socketPath, 'POST', '/v1/messages', {}, JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }));
    expect(f.calls[0]).toMatchObject({ stop: 'tool_use', blocks: [{ type: 'tool_call', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } }] });
    const o = await forwarder({ vendor: 'openai', upstream: mock.openaiUrl });
    mock.push({ toolCalls: [{ name: 'exec_command', input: { cmd: 'pwd' }, id: 'call_9' }], usage: { input: 10, cacheRead: 4, output: 6, reasoning: 2 } });
    const a = await request(o.socketPath, 'POST', '/v1/responses', { authorization: 'Bearer placeholder' }, JSON.stringify({ model: 'gpt-mock', input: 'x', stream: true }));
    expect(a.status).toBe(200);
    expect(mock.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(o.f.calls[0]).toMatchObject({ stop: 'tool_use', blocks: [{ type: 'tool_call', id: 'call_9', name: 'exec_command', input: { cmd: 'pwd' } }], usage: { input_tokens: 10, cache_read_tokens: 4, output_tokens: 6, reasoning_tokens: 2 } });
  });

  it("keeps the part of an Anthropic call's cache writes made for an hour (usage.cache_creation), streamed and not, for its dearer rate", async () => {
    const { f, socketPath } = await forwarder();
    const usage = { input_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 400, cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 300 }, output_tokens: 2 };
    const message = { id: 'msg_h', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', stop_sequence: null, usage };
    mock.push({ raw: { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(message) } });
    await request(socketPath, 'POST', '/v1/messages', {}, JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }));
    const events: Array<[string, unknown]> = [
      ['message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } }],
      ['message_stop', { type: 'message_stop' }],
    ];
    mock.push({ raw: { headers: { 'content-type': 'text/event-stream' }, body: events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join('') } });
    await request(socketPath, 'POST', '/v1/messages', {}, ask);
    expect(f.calls.map((c) => [c.usage.cache_write_tokens, c.cacheWrite1h])).toEqual([
      [400, 300],
      [400, 300],
    ]);
  });

  it('records a content policy that blocked the call (a 400, or an error event in a stream) as a refusal, not a config or infra failure', async () => {
    const { f, socketPath } = await forwarder();
    const blocked = { type: 'error', error: { type: 'invalid_request_error', message: 'Output blocked by content filtering policy' } };
    mock.push({ raw: { status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...blocked, request_id: 'req_b' }) } });
    await request(socketPath, 'POST', '/v1/messages', {}, JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }));
    const start = { type: 'message_start', message: { id: 'msg_b', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage: { input_tokens: 9, output_tokens: 1 } } };
    mock.push({ raw: { headers: { 'content-type': 'text/event-stream' }, body: `event: message_start\ndata: ${JSON.stringify(start)}\n\nevent: error\ndata: ${JSON.stringify(blocked)}\n\n` } });
    await request(socketPath, 'POST', '/v1/messages', {}, ask);
    const o = await forwarder({ vendor: 'openai', upstream: mock.openaiUrl });
    const flagged = { error: { message: 'Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt.', type: 'invalid_request_error', param: null, code: 'invalid_prompt' } };
    mock.push({ raw: { status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify(flagged) } });
    await request(o.socketPath, 'POST', '/v1/responses', {}, JSON.stringify({ model: 'gpt-mock', input: 'x' }));
    expect([...f.calls, ...o.f.calls].map((c) => [c.status, c.errorKind])).toEqual([
      [400, 'refusal'],
      [200, 'refusal'],
      [400, 'refusal'],
    ]);
  });

  it.each([
    ['an absolute URL in the request line', 'POST http://evil.test/v1/messages HTTP/1.1'],
    ['a climb out of the model path', 'POST /v1/../admin HTTP/1.1'],
    ['a climb after it', 'POST /v1/messages/../../admin HTTP/1.1'],
    ['an encoded climb', 'POST /v1/%2e%2e/v1/messages HTTP/1.1'],
    ['a doubled slash', 'POST //v1/messages HTTP/1.1'],
    ['another query', 'POST /v1/messages?beta=true&redirect=http://evil.test HTTP/1.1'],
    ['another vendor path', 'POST /v1/files HTTP/1.1'],
    ['the models list', 'GET /v1/models HTTP/1.1'],
    ['the OpenAI path on the Anthropic forwarder', 'POST /v1/responses HTTP/1.1'],
  ])('refuses %s with 403 and records it; the vendor sees nothing', async (_what, line) => {
    const { f, socketPath } = await forwarder();
    const got = await raw(socketPath, `${line}\r\nhost: 127.0.0.1\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}`);
    expect(got).toMatch(/^HTTP\/1\.1 403 /);
    expect(got).not.toContain(SECRET);
    expect(f.refused).toEqual([expect.objectContaining({ status: 403, reason: 'not_model_path', target: line.split(' ')[1] })]);
    expect(mock.requests).toHaveLength(0);
  });

  it('takes vendor-side tools (web fetch and search, MCP servers) out of a model call and says so; the CLI\'s own tools stay', async () => {
    const stripped: string[][] = [];
    const { socketPath } = await forwarder({ onStripped: (r) => stripped.push(r) });
    const body = { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'Bash', input_schema: { type: 'object' } }, { type: 'web_fetch_20250910', name: 'web_fetch' }, { type: 'web_search_20250305', name: 'web_search' }], mcp_servers: [{ type: 'url', url: 'https://evil.test/mcp', name: 'x' }] };
    expect((await request(socketPath, 'POST', '/v1/messages', {}, JSON.stringify(body))).status).toBe(200);
    expect(stripped).toEqual([['web_fetch_20250910', 'web_search_20250305', 'mcp_servers']]);
    expect(mock.requests[0]?.body).toEqual({ ...body, tools: [body.tools[0]], mcp_servers: undefined });
    expect(mock.requests[0]?.raw).not.toContain('evil.test');
    const o = await forwarder({ vendor: 'openai', upstream: mock.openaiUrl, onStripped: (r) => stripped.push(r) });
    await request(o.socketPath, 'POST', '/v1/responses', {}, JSON.stringify({ model: 'g', input: 'x', tools: [{ type: 'function', name: 'exec_command' }, { type: 'web_search' }, { type: 'mcp', server_url: 'https://evil.test' }] }));
    expect(stripped[1]).toEqual(['web_search', 'mcp']);
    expect(mock.requests[1]?.body.tools).toEqual([{ type: 'function', name: 'exec_command' }]);
  });

  it('refuses a body it cannot read (not JSON, compressed): it would not know what it passes on', async () => {
    const { f, socketPath } = await forwarder();
    expect((await request(socketPath, 'POST', '/v1/messages', {}, 'not json')).status).toBe(400);
    expect((await request(socketPath, 'POST', '/v1/messages', {}, '[1]')).status).toBe(400);
    expect((await request(socketPath, 'POST', '/v1/messages', { 'content-encoding': 'gzip' }, ask)).status).toBe(415);
    expect(f.refused.map((r) => r.reason)).toEqual(['bad_body', 'bad_body', 'bad_body']);
    expect(mock.requests).toHaveLength(0);
  });

  it('refuses any method but POST on the model path', async () => {
    const { f, socketPath } = await forwarder();
    const a = await request(socketPath, 'GET', '/v1/messages');
    expect(a.status).toBe(405);
    expect(f.refused[0]).toMatchObject({ method: 'GET', reason: 'bad_method' });
    expect(mock.requests).toHaveLength(0);
  });

  it('refuses CONNECT and a protocol upgrade: it is never a tunnel', async () => {
    const { f, socketPath } = await forwarder();
    const connect = await raw(socketPath, 'CONNECT evil.test:443 HTTP/1.1\r\nhost: evil.test:443\r\n\r\n');
    expect(connect).toMatch(/^HTTP\/1\.1 403 /);
    const upgrade = await raw(socketPath, 'GET /v1/messages HTTP/1.1\r\nhost: x\r\nconnection: upgrade\r\nupgrade: websocket\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n');
    expect(upgrade).toMatch(/^HTTP\/1\.1 403 /);
    expect(f.refused.map((r) => r.reason)).toEqual(['connect', 'upgrade']);
    expect(mock.requests).toHaveLength(0);
  });

  it('refuses a body over the cap, declared or streamed, without keeping it', async () => {
    const { f, socketPath } = await forwarder({ maxRequestBytes: 1024 });
    const declared = await raw(socketPath, `POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: ${1024 ** 3}\r\n\r\n{`);
    expect(declared).toMatch(/^HTTP\/1\.1 413 /);
    const streamed = await request(socketPath, 'POST', '/v1/messages', {}, Buffer.alloc(4096, 'a'));
    expect(streamed.status).toBe(413);
    expect(f.refused.map((r) => r.reason)).toEqual(['too_large', 'too_large']);
    expect(mock.requests).toHaveLength(0);
  });

  it('passes SSE through as it comes: the first event reaches the caller before the vendor sends the next', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const upstream = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { model: 'slow', usage: { input_tokens: 1, output_tokens: 0 } } })}\n\n`);
      void gate.then(() => res.end(`event: message_delta\ndata: ${JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } })}\n\n`));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', () => resolve()));
    const { f, socketPath } = await forwarder({ upstream: `http://127.0.0.1:${(upstream.address() as net.AddressInfo).port}` });
    const body = await new Promise<string>((resolve, reject) => {
      const req = http.request({ socketPath, method: 'POST', path: '/v1/messages' }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString();
          // Only a forwarder that passes the first event on unbuffered lets the vendor go on.
          if (text.includes('message_start')) release();
        });
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.end(ask);
    });
    upstream.close();
    expect(body).toContain('message_delta');
    expect(f.calls[0]).toMatchObject({ model: 'slow', stop: 'end_turn', usage: { input_tokens: 1, output_tokens: 2 } });
  });

  it('refuses the call after the token budget is spent, once, and says which budget', async () => {
    const spent: string[] = [];
    const { f, socketPath } = await forwarder({ maxTokens: 50, onBudgetSpent: (w) => spent.push(w) });
    mock.push({ text: 'a', usage: { input: 40, output: 20 } });
    expect((await request(socketPath, 'POST', '/v1/messages', {}, ask)).status).toBe(200);
    const refused = await request(socketPath, 'POST', '/v1/messages', {}, ask);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatch(/token budget \(max_tokens 50\) is spent/);
    await request(socketPath, 'POST', '/v1/messages', {}, ask);
    expect(spent).toEqual(['token_budget']);
    expect(f.spent).toBe(60);
    expect(mock.requests).toHaveLength(1);
  });

  it('says a vendor it cannot reach is unreachable, with no header value in the answer or the record', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const { f, socketPath } = await forwarder({ upstream: `http://127.0.0.1:${port}` });
    const a = await request(socketPath, 'POST', '/v1/messages', {}, ask);
    expect(a.status).toBe(502);
    expect(a.body + JSON.stringify(f.calls)).not.toContain(SECRET);
    expect(f.calls[0]).toMatchObject({ status: 502, errorKind: 'infra' });
  });
});

describe('the model forwarder behind a gateway that takes its key in the query', () => {
  /** A gateway's key with characters every encoding writes differently (`/`, `+`, `~`, space, non-ASCII). */
  const GATEWAY_KEY = 'gw/Ke+y~ 9\u00e4Z';
  /** The ways a gateway may write the key back: raw, percent-encoded (either case of hex), form-encoded. */
  const forms = (s: string): string[] => [s, encodeURIComponent(s), encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()), new URLSearchParams({ k: s }).toString().slice(2)];
  const query = (url: string): [string, string[]][] => {
    const params = new URL(url, 'http://x').searchParams;
    return [...new Set(params.keys())].map((name) => [name, params.getAll(name)]);
  };

  it('adds the base URL\'s query to every call after the path; a parameter the request names itself wins', async () => {
    const { socketPath } = await forwarder({ upstream: `${mock.url}/?key=${encodeURIComponent(GATEWAY_KEY)}&beta=false` });
    expect((await request(socketPath, 'POST', '/v1/messages?beta=true', {}, ask)).status).toBe(200);
    expect((await request(socketPath, 'POST', '/v1/messages', {}, ask)).status).toBe(200);
    const o = await forwarder({ vendor: 'openai', upstream: `${mock.openaiUrl}?key=${encodeURIComponent(GATEWAY_KEY)}` });
    expect((await request(o.socketPath, 'POST', '/v1/responses', {}, JSON.stringify({ model: 'g', input: 'x' }))).status).toBe(200);
    expect(mock.requests.map((r) => new URL(r.url, 'http://x').pathname)).toEqual(['/v1/messages', '/v1/messages', '/v1/responses']);
    expect(mock.requests.map((r) => query(r.url))).toEqual([
      [['beta', ['true']], ['key', [GATEWAY_KEY]]],
      [['key', [GATEWAY_KEY]], ['beta', ['false']]],
      [['key', [GATEWAY_KEY]]],
    ]);
  });

  it('shows no value of that query to the caller or in its record, however the gateway writes it back', async () => {
    const upstream = `${mock.url}?key=${encodeURIComponent(GATEWAY_KEY)}`;
    const echo = `${upstream}/v1/messages (key ${forms(GATEWAY_KEY).join(' | ')}, api key ${SECRET})`;
    const { f, socketPath } = await forwarder({ upstream });
    mock.push({ error: { status: 503, message: `upstream refused ${echo}` } }, { error: { status: 403, message: `gateway: ${echo} not allowed` } });
    const answers = [await request(socketPath, 'POST', '/v1/messages', {}, ask), await request(socketPath, 'POST', '/v1/messages', {}, JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }))];
    expect(answers.map((a) => a.status)).toEqual([503, 403]);
    // A gateway that names the URL it was asked for in a header and in its answer, as it got it.
    const gateway = http.createServer((req, res) => {
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json', 'x-gateway-url': req.url ?? '' });
      res.end(JSON.stringify({ error: { message: `no route for ${req.url}` } }));
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', () => resolve()));
    const g = await forwarder({ upstream: `http://127.0.0.1:${(gateway.address() as net.AddressInfo).port}?key=${encodeURIComponent(GATEWAY_KEY)}` });
    const seen = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const req = http.request({ socketPath: g.socketPath, method: 'POST', path: '/v1/messages' }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end(ask);
    });
    gateway.close();
    expect(seen).toMatchObject({ status: 404, headers: { 'x-gateway-url': '/v1/messages?key=[redacted]' }, body: expect.stringContaining('no route for /v1/messages?key=[redacted]') });
    expect([...f.calls, ...g.f.calls].map((c) => c.error)).toEqual([expect.stringContaining('[redacted]'), expect.stringContaining('[redacted]'), expect.stringContaining('[redacted]')]);
    const shown = [...answers.map((a) => a.body), JSON.stringify(seen), JSON.stringify(f.calls), JSON.stringify(g.f.calls)].join('\n');
    for (const form of [...forms(GATEWAY_KEY), SECRET]) expect(shown, form).not.toContain(form);
    expect(shown).not.toMatch(/[?&]key=(?!\[redacted\])/);
  });
});

describe('vendor credentials', () => {
  it('takes QS_ first, then the vendor variable, and refuses what would break a header or leak into a URL', () => {
    expect(vendorCredentials('anthropic', { QS_ANTHROPIC_API_KEY: 'a', ANTHROPIC_API_KEY: 'b' }).key).toBe('a');
    expect(vendorCredentials('openai', { OPENAI_API_KEY: 'b' })).toEqual({ key: 'b', baseUrl: 'https://api.openai.com/v1' });
    expect(() => vendorCredentials('anthropic', { ANTHROPIC_API_KEY: 'a\r\nx-evil: 1' })).toThrow(/line break/);
    expect(() => vendorCredentials('anthropic', { ANTHROPIC_API_KEY: 'a', ANTHROPIC_BASE_URL: 'https://u:p@gw.test' })).toThrow(/must not carry credentials/);
    expect(() => vendorCredentials('anthropic', { ANTHROPIC_API_KEY: 'a', ANTHROPIC_BASE_URL: 'file:///etc/passwd' })).toThrow(/http or https/);
    expect(() => vendorCredentials('openai', {})).toThrow(/no API key: set QS_OPENAI_API_KEY or OPENAI_API_KEY/);
  });
});
