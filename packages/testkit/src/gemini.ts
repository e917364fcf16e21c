// Gemini `generateContent` and `streamGenerateContent?alt=sse`, as @google/genai and the gemini CLI read them.
import type { ServerResponse } from 'node:http';
import { MOCK_SIGNATURE, mockId, usageOf, type MockReply } from './script.js';
import { startSse, writeSse } from './sse.js';

type Reply = MockReply;

export function geminiLastUserText(body: any): string {
  const contents: any[] = Array.isArray(body?.contents) ? body.contents : [];
  const last = [...contents].reverse().find((c) => c?.role === 'user' || c?.role === undefined);
  if (!last) return '';
  return (last.parts ?? [])
    .map((p: any) => {
      if (typeof p?.text === 'string') return p.text;
      const response = p?.functionResponse?.response;
      if (response === undefined) return '';
      return typeof response.output === 'string' ? response.output : JSON.stringify(response);
    })
    // The gemini CLI sends a <session_context> part ahead of the prompt; it is not what the user asked.
    .filter((t: string) => t && !t.startsWith('<session_context>'))
    .join('\n');
}

function response(turn: Reply, model: string) {
  const u = usageOf(turn);
  const usageMetadata = {
    promptTokenCount: u.input + u.cacheRead,
    cachedContentTokenCount: u.cacheRead,
    candidatesTokenCount: u.output - u.reasoning,
    thoughtsTokenCount: u.reasoning,
    totalTokenCount: u.input + u.cacheRead + u.output,
  };
  if ('refusal' in turn) {
    return { candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'SAFETY', index: 0 }], usageMetadata, modelVersion: model, responseId: mockId('gresp_') };
  }
  const parts: any[] = [];
  if (turn.reasoning) parts.push({ text: turn.reasoning, thought: true, thoughtSignature: MOCK_SIGNATURE });
  if (turn.text) parts.push({ text: turn.text });
  for (const call of turn.toolCalls ?? []) parts.push({ functionCall: { name: call.name, args: call.input, ...(call.id ? { id: call.id } : {}) } });
  const finishReason = 'stop' in turn && turn.stop === 'max_tokens' ? 'MAX_TOKENS' : 'STOP';
  return { candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }], usageMetadata, modelVersion: model, responseId: mockId('gresp_') };
}

export function sendGemini(res: ServerResponse, turn: Reply, url: string, requestId: string): void {
  const model = /models\/([^:]+):/.exec(url)?.[1] ?? 'mock-model';
  const full = response(turn, model);
  if (!url.includes(':streamGenerateContent')) {
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': requestId });
    res.end(JSON.stringify(full));
    return;
  }
  startSse(res, { 'x-request-id': requestId });
  writeSse(res, full);
  res.end();
}
