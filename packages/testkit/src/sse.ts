// Writes server-sent events the way each vendor frames them.
import type { ServerResponse } from 'node:http';

export function startSse(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...headers });
}

/** `event: <name>` + `data: <json>`; Anthropic and OpenAI Responses name their events, Chat and Gemini do not. */
export function writeSse(res: ServerResponse, data: unknown, event?: string): void {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  res.write(`${event === undefined ? '' : `event: ${event}\n`}data: ${payload}\n\n`);
}
