// The base URL as every adapter hands it to its SDK: the query (a gateway's key) apart, sent on every
// request, and a scrubber for what the SDK logs and the errors it throws, which print request URLs.
import { baseUrlScrubber, splitBaseUrl } from '../base-url.js';

export interface Endpoint {
  /** The base URL without its query; undefined: the vendor's own. */
  base?: string;
  /** The base URL's query, when it has one. */
  query?: Record<string, string>;
  /** Takes the key, the base URL's user and password, and its query values out of a text, in any encoding. */
  scrub: (text: string) => string;
}

export function endpoint(baseURL: string | undefined, apiKey: string): Endpoint {
  const scrub = baseUrlScrubber(baseURL, apiKey);
  if (baseURL === undefined || baseURL === '') return { scrub };
  const { base, query } = splitBaseUrl(baseURL);
  return { base, ...(Object.keys(query).length > 0 ? { query } : {}), scrub };
}

/**
 * A fetch that adds `query` to every request (a parameter the request names itself wins), for an SDK
 * with no default query of its own (@google/genai). With a fetch of ours that SDK leaves out the
 * dispatcher that lifts undici's 300 s header and body timeouts, so a call through such a gateway is
 * also bounded by those.
 */
export function fetchWithQuery(query: Record<string, string>): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return (input, init) => {
    if (typeof input !== 'string' && !(input instanceof URL)) return fetch(input, init);
    const url = new URL(input);
    for (const [name, value] of Object.entries(query)) if (!url.searchParams.has(name)) url.searchParams.set(name, value);
    return fetch(url, init);
  };
}
