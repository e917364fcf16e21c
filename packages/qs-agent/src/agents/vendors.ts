// The adapter of each model vendor, loaded only when a model agent runs: replay, and every other run of
// this binary, start without the SDKs.
import type { ModelAdapter, RetryPolicy } from '@quickloop/models/core';

export async function makeAdapter(name: string, o: { apiKey: string; baseURL?: string; retry?: RetryPolicy; log?: (line: string) => void }): Promise<ModelAdapter> {
  const m = await import('@quickloop/models');
  switch (name) {
    case 'anthropic':
      return new m.AnthropicAdapter(o);
    case 'openai':
      return new m.OpenAIResponsesAdapter(o);
    case 'openai-chat':
      return new m.OpenAIChatAdapter(o);
    case 'gemini':
      return new m.GeminiAdapter(o);
    default:
      throw new Error(`no adapter for '${name}'`);
  }
}
