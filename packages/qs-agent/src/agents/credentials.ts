// The model vendors behind --agent: where each one's key and endpoint come from, and its default model. No SDK
// here: `qs run` checks a model agent's configuration with this before it starts any stage.
import { UsageError } from '@quickloop/cli-kit';
import { secretScrubber, splitBaseUrl } from '@quickloop/models/core';

export interface Vendor {
  /** Key variables, first set wins: quickloop's own first, so a key for quickloop can differ from the one a shell already has. */
  keyVars: readonly string[];
  baseUrlVar: string;
  /** What the SDK talks to when no base URL is given (for agent.started only). */
  defaultBaseUrl: string;
  /** None for openai-chat: an OpenAI-compatible server has its own model names. */
  defaultModel?: string;
}

export const VENDORS: Record<string, Vendor> = {
  anthropic: {
    keyVars: ['QS_ANTHROPIC_API_KEY', 'ANTHROPIC_API_KEY'],
    baseUrlVar: 'ANTHROPIC_BASE_URL',
    defaultBaseUrl: 'https://api.anthropic.com',
    defaultModel: 'claude-sonnet-4-6',
  },
  openai: {
    keyVars: ['QS_OPENAI_API_KEY', 'OPENAI_API_KEY'],
    baseUrlVar: 'OPENAI_BASE_URL',
    defaultBaseUrl: 'https://api.openai.com/v1',
    defaultModel: 'gpt-5',
  },
  'openai-chat': {
    keyVars: ['QS_OPENAI_API_KEY', 'OPENAI_API_KEY'],
    baseUrlVar: 'OPENAI_BASE_URL',
    defaultBaseUrl: 'https://api.openai.com/v1',
  },
  gemini: {
    keyVars: ['QS_GEMINI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY'],
    baseUrlVar: 'GOOGLE_GEMINI_BASE_URL',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    defaultModel: 'gemini-2.5-flash',
  },
};

/** Sent to a keyless OpenAI-compatible server, which ignores it; the SDK refuses to start without some key. */
export const NO_KEY = 'no-key';

export interface Resolved {
  /** The --agent name. */
  name: string;
  vendor: Vendor;
  model: string;
  apiKey: string;
  /** undefined: the vendor's own endpoint. */
  baseURL?: string;
  /** The endpoint as agent.started reports it: no query or fragment. */
  shownBaseUrl: string;
  /** What must never be shown: the key, and every value of the base URL's query (a gateway's key may be one). */
  secrets: string[];
  /** The names in the base URL's query, whose values are scrubbed wherever a URL is printed, however short. */
  params: string[];
  /** The query's values (not the key): a short one is scrubbed from free text only as a whole word. */
  words: string[];
}

/**
 * Key, endpoint and model for `--agent name`, from the flags and the environment. Every failure is a
 * one-line usage error naming the variable or flag, raised before stdin is read or a sandbox made.
 */
export function resolveVendor(name: string, flags: { model?: string; baseUrl?: string }, env: Record<string, string | undefined>): Resolved {
  const vendor = VENDORS[name];
  if (!vendor) throw new UsageError(`unknown model agent '${name}'`);
  const rawBase = flags.baseUrl ?? (env[vendor.baseUrlVar] || undefined);
  let baseURL: string | undefined;
  let shownBaseUrl = vendor.defaultBaseUrl;
  const secrets: string[] = [];
  const params: string[] = [];
  const words: string[] = [];
  if (rawBase !== undefined) {
    const where = flags.baseUrl !== undefined ? '--base-url' : vendor.baseUrlVar;
    let u: URL;
    try {
      u = new URL(rawBase);
    } catch {
      throw new UsageError(`${where}: not a URL (http://HOST[:PORT][/PATH])`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`${where}: must be an http or https URL, not ${u.protocol}`);
    // fetch refuses such a URL at every request; said now, without the credential, rather than at each turn.
    if (u.username !== '' || u.password !== '') throw new UsageError(`${where}: must not carry a user or password (fetch will not send them); give the key in ${vendor.keyVars[0]}`);
    // The trailing slashes of the path go (the SDKs add their own); a query stays, for the adapter to send on every request.
    const cut = rawBase.search(/[?#]/);
    baseURL = cut < 0 ? rawBase.replace(/\/+$/, '') : `${rawBase.slice(0, cut).replace(/\/+$/, '')}${rawBase.slice(cut)}`;
    const parts = splitBaseUrl(baseURL);
    secrets.push(...parts.secrets);
    words.push(...parts.words);
    params.push(...parts.params);
    shownBaseUrl = `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
  }
  const keyVar = vendor.keyVars.find((v) => (env[v] ?? '').trim() !== '');
  let apiKey = keyVar ? (env[keyVar] as string).trim() : undefined;
  // A local OpenAI-compatible server (ollama, vLLM, LM Studio) usually wants no key; api.openai.com always does.
  if (apiKey === undefined && name === 'openai-chat' && baseURL !== undefined) apiKey = NO_KEY;
  if (apiKey === undefined) {
    const hint = name === 'openai-chat' ? ' (or give --base-url for a server that needs none)' : '';
    throw new UsageError(`--agent ${name} needs an API key: set ${vendor.keyVars.join(' or ')}${hint}`);
  }
  const model = flags.model ?? vendor.defaultModel;
  if (model === undefined || model.trim() === '') throw new UsageError(`--agent ${name} needs --model (the server's model name)`);
  if (apiKey !== NO_KEY) secrets.push(apiKey);
  return { name, vendor, model, apiKey, ...(baseURL !== undefined ? { baseURL } : {}), shownBaseUrl, secrets, params, words: words.filter((w) => w !== apiKey) };
}

/**
 * Replaces every secret in `text`, raw or in any percent- or form-encoding (an SDK message can echo a
 * header, or a URL with the key in its query), and the value of each of `params` in a printed URL; a
 * short one of `words` only as a whole word.
 */
export function redactor(secrets: readonly string[], params: readonly string[] = [], words: readonly string[] = []): (text: string) => string {
  return secretScrubber(secrets.filter((s) => s !== NO_KEY), params, words);
}
