// OpenAI Chat Completions (`POST /v1/chat/completions`), kept for OpenAI-compatible servers.
import type { ServerResponse } from 'node:http';
import { mockId, usageOf, type MockReply } from './script.js';
import { startSse, writeSse } from './sse.js';

type Reply = MockReply;

export function chatLastUserText(body: any): string {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const last = [...messages].reverse().find((m) => m?.role === 'user' || m?.role === 'tool');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return (last.content ?? []).map((p: any) => p?.text ?? '').join('\n');
}

function usage(turn: Reply) {
  const u = usageOf(turn);
  const prompt = u.input + u.cacheRead + u.cacheWrite;
  return {
    prompt_tokens: prompt,
    completion_tokens: u.output,
    total_tokens: prompt + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead, cache_write_tokens: u.cacheWrite },
    completion_tokens_details: { reasoning_tokens: u.reasoning },
  };
}

export function sendChat(res: ServerResponse, turn: Reply, body: any, requestId: string): void {
  const refusal = 'refusal' in turn ? turn.refusal : null;
  const text = 'refusal' in turn ? null : (turn.text ?? null) || null;
  const calls = 'refusal' in turn ? [] : (turn.toolCalls ?? []).map((c) => ({ id: c.id ?? mockId('call_'), type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } }));
  const finish = calls.length ? 'tool_calls' : 'stop' in turn && turn.stop === 'max_tokens' ? 'length' : 'stop';
  const head = { id: mockId('chatcmpl-'), created: 1_700_000_000, model: typeof body?.model === 'string' ? body.model : 'mock-model' };
  if (!body?.stream) {
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': requestId });
    const message: Record<string, unknown> = { role: 'assistant', content: text, refusal };
    if (calls.length) message.tool_calls = calls;
    res.end(JSON.stringify({ ...head, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish, logprobs: null }], usage: usage(turn) }));
    return;
  }
  startSse(res, { 'x-request-id': requestId });
  const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) =>
    writeSse(res, { ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason, logprobs: null }] });
  chunk({ role: 'assistant', content: '' });
  if (text) chunk({ content: text });
  if (refusal) chunk({ refusal });
  calls.forEach((c, index) => chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } }] }));
  chunk({}, finish);
  if (body?.stream_options?.include_usage) writeSse(res, { ...head, object: 'chat.completion.chunk', choices: [], usage: usage(turn) });
  writeSse(res, '[DONE]');
  res.end();
}
