// What the tests of qs-agent against each vendor's API share: the vendors, qs-check's binary, a mock
// server that answers in turn what a test scripts, and the removal after each test of the sandboxes and
// mock servers it made.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import { removeLayout } from '@quickloop/sandbox';

export type Vendor = 'anthropic' | 'openai' | 'openai-chat' | 'gemini';
export const VENDORS: Vendor[] = ['anthropic', 'openai', 'openai-chat', 'gemini'];

export const QS_CHECK = fileURLToPath(new URL('../../../qs-check/bin/qs-check.js', import.meta.url));

/** The model each vendor's tests ask for. */
export const MODEL: Record<Vendor, string> = { anthropic: 'claude-sonnet-4-6', openai: 'gpt-5', 'openai-chat': 'gpt-5', gemini: 'gemini-2.5-flash' };

/** One scripted answer of the mock. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** A JSON body. */
  body?: unknown;
  /** SSE events ([event name or null, data]), each ended by a blank line. */
  sse?: Array<[string | null, unknown]>;
  /** An SSE body written as it is. */
  raw?: string;
}

/** A request the mock was sent. */
export interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

/** A vendor API on loopback that answers each request with the next reply (a 500 once they run out). */
export async function vendorMock(replies: Reply[], closeLater: (close: () => Promise<void>) => void): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers, body: raw ? JSON.parse(raw) : undefined });
      const r = replies.shift() ?? { status: 500, body: { error: { message: 'the mock has no more replies' } } };
      if (r.raw !== undefined || r.sse) {
        res.writeHead(r.status ?? 200, { 'content-type': 'text/event-stream', ...r.headers });
        if (r.raw !== undefined) res.write(r.raw);
        else for (const [event, data] of r.sse!) res.write(`${event ? `event: ${event}\n` : ''}data: ${data === '[DONE]' ? data : JSON.stringify(data)}\n\n`);
        res.end();
        return;
      }
      res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers });
      res.end(JSON.stringify(r.body ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closeLater(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url, seen };
}

/** Registers the afterEach that removes what a test made: the sandboxes its events name, and its servers. */
export function cleanedAfterEach(): { sandboxesOf: (events: Array<Record<string, unknown>>) => void; closeLater: (close: () => Promise<void>) => void } {
  const made: string[] = [];
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const root of made.splice(0)) removeLayout({ root });
    for (const c of closers.splice(0)) await c();
  });
  return {
    sandboxesOf: (events) => {
      for (const e of events) if (e.type === 'sandbox.ready') made.push(String(e.root));
    },
    closeLater: (close) => {
      closers.push(close);
    },
  };
}
