// The OpenAI Responses API (`POST /v1/responses`), plain JSON and SSE, as the SDK and `codex exec` read it.
import type { ServerResponse } from 'node:http';
import { MOCK_ENCRYPTED_REASONING, mockId, usageOf, type MockReply } from './script.js';
import { startSse, writeSse } from './sse.js';

type Reply = MockReply;

/** The last user text: a string input, or the last `user` message's text parts, or the last tool output. */
export function responsesLastUserText(body: any): string {
  if (typeof body?.input === 'string') return body.input;
  const items: any[] = Array.isArray(body?.input) ? body.input : [];
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item?.type === 'function_call_output') return typeof item.output === 'string' ? item.output : JSON.stringify(item.output);
    if (item?.role === 'user') {
      if (typeof item.content === 'string') return item.content;
      const texts = (item.content ?? []).filter((p: any) => typeof p?.text === 'string').map((p: any) => p.text as string);
      // codex sends an <environment_context> user message before the prompt; the prompt is the last one.
      if (texts.length > 0 && !texts.every((t: string) => t.startsWith('<environment_context>'))) return texts.join('\n');
    }
  }
  return '';
}

/**
 * The Responses API refuses (400) an input in which a reasoning item is not followed by the item it was
 * produced with: an assistant message or a function call of the same turn. A stateless client that
 * replays a turn cut after its reasoning (incomplete at max_output_tokens) sends exactly that.
 */
export function orphanReasoning(body: any): { status: 400; body: unknown } | undefined {
  const items: any[] = Array.isArray(body?.input) ? body.input : [];
  for (let i = 0; i < items.length; i++) {
    if (items[i]?.type !== 'reasoning') continue;
    let next = i + 1;
    while (items[next]?.type === 'reasoning') next++;
    const after = items[next];
    if (after?.type === 'function_call' || (after?.role === 'assistant' && (after.type === undefined || after.type === 'message'))) continue;
    const message = `Item '${String(items[i].id ?? '')}' of type 'reasoning' was provided without its required following item.`;
    return { status: 400, body: { error: { message, type: 'invalid_request_error', param: 'input', code: null } } };
  }
  return undefined;
}

function usage(turn: Reply) {
  const u = usageOf(turn);
  return {
    input_tokens: u.input + u.cacheRead + u.cacheWrite,
    input_tokens_details: { cached_tokens: u.cacheRead, cache_write_tokens: u.cacheWrite },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning },
    total_tokens: u.input + u.cacheRead + u.cacheWrite + u.output,
  };
}

function outputItems(turn: Reply): any[] {
  if ('refusal' in turn) {
    return [{ type: 'message', id: mockId('msg_'), status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: turn.refusal }] }];
  }
  const items: any[] = [];
  if (turn.reasoning) {
    items.push({ type: 'reasoning', id: mockId('rs_'), summary: [{ type: 'summary_text', text: turn.reasoning }], encrypted_content: MOCK_ENCRYPTED_REASONING });
  }
  if (turn.text !== undefined && turn.text !== '') {
    items.push({ type: 'message', id: mockId('msg_'), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: turn.text, annotations: [], logprobs: [] }] });
  }
  for (const call of turn.toolCalls ?? []) {
    items.push({ type: 'function_call', id: mockId('fc_'), call_id: call.id ?? mockId('call_'), name: call.name, arguments: JSON.stringify(call.input), status: 'completed' });
  }
  return items;
}

function response(turn: Reply, body: any) {
  const incomplete = 'stop' in turn && turn.stop === 'max_tokens';
  return {
    id: mockId('resp_'),
    object: 'response',
    created_at: 1_700_000_000,
    model: typeof body?.model === 'string' ? body.model : 'mock-model',
    status: incomplete ? 'incomplete' : 'completed',
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: body?.instructions ?? null,
    output: outputItems(turn),
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage: usage(turn),
  };
}

export function sendResponses(res: ServerResponse, turn: Reply, body: any, requestId: string): void {
  const full = response(turn, body);
  if (!body?.stream) {
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': requestId });
    res.end(JSON.stringify(full));
    return;
  }
  startSse(res, { 'x-request-id': requestId });
  let seq = 0;
  const send = (type: string, data: Record<string, unknown>) => writeSse(res, { type, sequence_number: seq++, ...data }, type);
  const shell = { ...full, status: 'in_progress', output: [], usage: null, incomplete_details: null };
  send('response.created', { response: shell });
  send('response.in_progress', { response: shell });
  full.output.forEach((item: any, output_index: number) => {
    if (item.type === 'message') {
      send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      item.content.forEach((part: any, content_index: number) => {
        const ids = { item_id: item.id, output_index, content_index };
        // The SDK's accumulator needs content_part.added before any delta ("missing content at index 0").
        if (part.type === 'refusal') {
          send('response.content_part.added', { ...ids, part: { type: 'refusal', refusal: '' } });
          send('response.refusal.delta', { ...ids, delta: part.refusal });
          send('response.refusal.done', { ...ids, refusal: part.refusal });
        } else {
          send('response.content_part.added', { ...ids, part: { ...part, text: '' } });
          const cut = Math.ceil(part.text.length / 2);
          for (const delta of [part.text.slice(0, cut), part.text.slice(cut)]) if (delta) send('response.output_text.delta', { ...ids, delta, logprobs: [] });
          send('response.output_text.done', { ...ids, text: part.text, logprobs: [] });
        }
        send('response.content_part.done', { ...ids, part });
      });
    } else if (item.type === 'reasoning') {
      send('response.output_item.added', { output_index, item: { ...item, summary: [] } });
    } else {
      send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      send('response.function_call_arguments.delta', { item_id: item.id, output_index, delta: item.arguments });
      send('response.function_call_arguments.done', { item_id: item.id, output_index, arguments: item.arguments, name: item.name });
    }
    send('response.output_item.done', { output_index, item });
  });
  send(full.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: full });
  res.end();
}
