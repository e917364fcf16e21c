// The Anthropic Messages API (`POST /v1/messages`), plain JSON and SSE, as the SDK and `claude -p` read it.
import type { ServerResponse } from 'node:http';
import { MOCK_SIGNATURE, mockId, usageOf, type MockError, type MockReply } from './script.js';
import { startSse, writeSse } from './sse.js';

/** The text of the last user message; `claude -p` adds `role: system` entries and reminders, so skip those. */
export function anthropicLastUserText(body: any): string {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const user = [...messages].reverse().find((m) => m?.role === 'user');
  if (!user) return '';
  if (typeof user.content === 'string') return user.content;
  const texts = (Array.isArray(user.content) ? user.content : [])
    .filter((b: any) => b?.type === 'text' && typeof b.text === 'string' && !b.text.startsWith('<system-reminder>'))
    .map((b: any) => b.text as string);
  if (texts.length > 0) return texts.join('\n');
  const results = (Array.isArray(user.content) ? user.content : []).filter((b: any) => b?.type === 'tool_result');
  return results.map((r: any) => (typeof r.content === 'string' ? r.content : (r.content ?? []).map((c: any) => c.text ?? '').join(''))).join('\n');
}

function usage(turn: MockReply) {
  const u = usageOf(turn);
  return {
    input_tokens: u.input,
    output_tokens: u.output,
    cache_creation_input_tokens: u.cacheWrite,
    cache_read_input_tokens: u.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: u.cacheWrite, ephemeral_1h_input_tokens: 0 },
    service_tier: 'standard',
    server_tool_use: null,
  };
}

function message(turn: MockReply, model: string) {
  const base = { id: mockId('msg_mock_'), type: 'message', role: 'assistant', model, stop_sequence: null, container: null, usage: usage(turn) };
  if ('refusal' in turn) {
    return { ...base, content: [], stop_reason: 'refusal', stop_details: { type: 'refusal', category: turn.category ?? null, explanation: turn.refusal } };
  }
  const content: any[] = [];
  if (turn.reasoning) content.push({ type: 'thinking', thinking: turn.reasoning, signature: MOCK_SIGNATURE });
  if (turn.text !== undefined && turn.text !== '') content.push({ type: 'text', text: turn.text });
  for (const call of turn.toolCalls ?? []) content.push({ type: 'tool_use', id: call.id ?? mockId('toolu_mock_'), name: call.name, input: call.input });
  const stop = turn.toolCalls?.length ? 'tool_use' : 'stop' in turn && turn.stop === 'max_tokens' ? 'max_tokens' : 'end_turn';
  return { ...base, content, stop_reason: stop, stop_details: null };
}

export function anthropicErrorBody(error: MockError) {
  const type =
    error.type ??
    (error.status === 429 ? 'rate_limit_error' : error.status === 529 ? 'overloaded_error' : error.status === 401 ? 'authentication_error' : error.status === 403 ? 'permission_error' : error.status === 404 ? 'not_found_error' : error.status >= 500 ? 'api_error' : 'invalid_request_error');
  return { type: 'error', error: { type, message: error.message ?? `mock ${error.status}` } };
}

export function sendAnthropic(res: ServerResponse, turn: MockReply, body: any, requestId: string): void {
  const msg = message(turn, typeof body?.model === 'string' ? body.model : 'mock-model');
  if (!body?.stream) {
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId });
    res.end(JSON.stringify(msg));
    return;
  }
  startSse(res, { 'request-id': requestId });
  const { content, stop_reason, stop_details, usage: fullUsage, ...head } = msg;
  writeSse(res, { type: 'message_start', message: { ...head, content: [], stop_reason: null, stop_details: null, usage: { ...fullUsage, output_tokens: 1 } } }, 'message_start');
  content.forEach((block: any, index: number) => {
    if (block.type === 'text') {
      writeSse(res, { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }, 'content_block_start');
      // Two deltas, so clients that only keep the last delta would be caught out.
      const cut = Math.ceil(block.text.length / 2);
      for (const part of [block.text.slice(0, cut), block.text.slice(cut)]) {
        if (part) writeSse(res, { type: 'content_block_delta', index, delta: { type: 'text_delta', text: part } }, 'content_block_delta');
      }
    } else if (block.type === 'thinking') {
      writeSse(res, { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }, 'content_block_start');
      writeSse(res, { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: block.thinking } }, 'content_block_delta');
      writeSse(res, { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } }, 'content_block_delta');
    } else {
      writeSse(res, { type: 'content_block_start', index, content_block: { ...block, input: {} } }, 'content_block_start');
      writeSse(res, { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }, 'content_block_delta');
    }
    writeSse(res, { type: 'content_block_stop', index }, 'content_block_stop');
  });
  writeSse(
    res,
    { type: 'message_delta', delta: { stop_reason, stop_sequence: null, stop_details }, usage: { output_tokens: fullUsage.output_tokens, input_tokens: fullUsage.input_tokens, cache_read_input_tokens: fullUsage.cache_read_input_tokens, cache_creation_input_tokens: fullUsage.cache_creation_input_tokens } },
    'message_delta',
  );
  writeSse(res, { type: 'message_stop' }, 'message_stop');
  res.end();
}
