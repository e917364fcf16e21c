// The mock against the real @google/genai SDK: a function-call loop, a stream and usage metadata.
import { GoogleGenAI } from '@google/genai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startMockServer, type MockServer } from './index.js';

let mock: MockServer;
beforeEach(async () => {
  mock = await startMockServer({ whenEmpty: 'error' });
});
afterEach(async () => {
  await mock.close();
});

describe('Gemini generateContent mock with the real SDK', () => {
  it('runs a function-call loop and streams', async () => {
    mock.push({ toolCalls: [{ name: 'bash', input: { command: 'echo g' } }], usage: { cacheRead: 3 } }, (req) => ({ text: `saw ${req.lastUserText}` }), { text: 'streamed', usage: { output: 9, reasoning: 2 } });
    const ai = new GoogleGenAI({ apiKey: 'test-key-not-secret', httpOptions: { baseUrl: mock.url } });
    const first = await ai.models.generateContent({ model: 'gemini-x', contents: [{ role: 'user', parts: [{ text: 'go' }] }] });
    expect(first.functionCalls?.[0]).toMatchObject({ name: 'bash', args: { command: 'echo g' } });
    expect(first.usageMetadata).toMatchObject({ promptTokenCount: 15, cachedContentTokenCount: 3 });
    const second = await ai.models.generateContent({
      model: 'gemini-x',
      contents: [
        { role: 'user', parts: [{ text: 'go' }] },
        { role: 'model', parts: [{ functionCall: { name: 'bash', args: { command: 'echo g' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'bash', response: { output: 'g' } } }] },
      ],
    });
    expect(second.text).toBe('saw g');
    let text = '';
    for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-x', contents: 'hi' })) text += chunk.text ?? '';
    expect(text).toBe('streamed');
    expect(mock.requests.map((r) => r.url)).toEqual([
      '/v1beta/models/gemini-x:generateContent',
      '/v1beta/models/gemini-x:generateContent',
      '/v1beta/models/gemini-x:streamGenerateContent?alt=sse',
    ]);
    expect(mock.requests[0]!.headers['x-goog-api-key']).toBe('test-key-not-secret');
  });
});
