// Where each model agent looks for its key and endpoint, in order (the first set variable wins).
export const KEY_VARS: Record<string, { keys: string[]; baseUrl?: string }> = {
  anthropic: { keys: ['QS_ANTHROPIC_API_KEY', 'ANTHROPIC_API_KEY'], baseUrl: 'ANTHROPIC_BASE_URL' },
  openai: { keys: ['QS_OPENAI_API_KEY', 'OPENAI_API_KEY'], baseUrl: 'OPENAI_BASE_URL' },
  gemini: { keys: ['QS_GEMINI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY'], baseUrl: 'GOOGLE_GEMINI_BASE_URL' },
};
