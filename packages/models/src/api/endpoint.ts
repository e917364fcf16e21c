// The base URL as every adapter hands it to its SDK: the query (a gateway's key) apart, sent on every
// request, and a scrubber for what the SDK logs and the errors it throws, which print request URLs.
import { globalDispatcher, type Dispatcher } from '@quickloop/cli-kit/node-fetch';
import { baseUrlScrubber, splitBaseUrl } from '../base-url.js';
import { sdkLogger, type LogLine } from './sdk-log.js';

export interface Endpoint {
  /** The base URL without its query; undefined: the vendor's own. */
  base?: string;
  /** The base URL's query as written (without `?`), when it has one. */
  query?: string;
  /** Takes the key, the base URL's user and password, and its query values out of a text, in any encoding. */
  scrub: (text: string) => string;
}

export function endpoint(baseURL: string | undefined, apiKey: string): Endpoint {
  const scrub = baseUrlScrubber(baseURL, apiKey);
  if (baseURL === undefined || baseURL === '') return { scrub };
  const { base, query } = splitBaseUrl(baseURL);
  return { base, ...(query !== '' ? { query } : {}), scrub };
}

/**
 * A dispatcher that forwards to the global one with undici's own header timeout (300 s) off and its
 * body timeout (300 s too) at `bodyTimeoutMs`, 0 for off: the adapter's `timeoutMs`, not undici's
 * defaults, then bounds a call, a thinking model's long wait for its first byte included. With both
 * off it is the one @google/genai gives its own fetch calls in Node, made as it makes it (that SDK's
 * timer stays armed while the body is read).
 */
function untimedDispatcher(bodyTimeoutMs = 0): Dispatcher {
  return {
    dispatch(options, handler) {
      return globalDispatcher().dispatch({ ...options, headersTimeout: 0, bodyTimeout: bodyTimeoutMs }, handler);
    },
  };
}

/**
 * The `fetchOptions` for the Anthropic and OpenAI SDKs, which call Node's fetch with no dispatcher:
 * undici's 300 s defaults would cut a call the adapter gives 600 s. Their `timeout` is armed only until
 * the response's headers, so a stream's silences are bounded by undici's body timeout, at `timeoutMs`
 * too (the time between two chunks, not the whole stream).
 */
export function sdkFetchOptions(timeoutMs: number): { dispatcher: never } {
  // fetch calls nothing of a dispatcher but `dispatch`; the SDKs' types name all of undici's. They
  // merge this under a request's own `fetchOptions` (the adapters pass none), so it reaches every call.
  return { dispatcher: untimedDispatcher(timeoutMs) as never };
}

/**
 * A fetch that adds the base URL's `query` (as written) to every request: each of its pairs in order,
 * a name given twice with both values, but none whose name the request gives itself (its own value
 * wins). The SDKs' own ways cannot carry it: the Anthropic and OpenAI SDKs keep a query as an object
 * (one value a name; an array is written `name[]=`) and @google/genai has none. With a fetch of ours
 * @google/genai leaves out the dispatcher that lifts undici's 300 s header and body timeouts, so this
 * fetch puts the same one in when the SDK gave none.
 */
export function fetchWithQuery(query: string): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  const pairs = query.split('&').filter((pair) => pair !== '');
  return (input, init) => {
    // fetch calls nothing of a dispatcher but `dispatch` (the SDK's own is no more); its type names all of undici's.
    const untimed = { ...init, ...(init !== undefined && 'dispatcher' in init ? {} : { dispatcher: untimedDispatcher() }) } as RequestInit;
    if (typeof input !== 'string' && !(input instanceof URL)) return fetch(input, untimed);
    const url = new URL(input);
    const own = new Set(url.searchParams.keys());
    const added = pairs.filter((pair) => !own.has([...new URLSearchParams(pair).keys()][0] ?? ''));
    if (added.length > 0) url.search = `${url.search === '' ? '' : `${url.search.slice(1)}&`}${added.join('&')}`;
    return fetch(url, untimed);
  };
}

/**
 * What the Anthropic and OpenAI adapters give their SDK's client, and the scrubber for their errors:
 * the base URL without its query, the query on every request (by fetchWithQuery), no retries of the SDK's own (the
 * adapters retry), the adapter's timeout, the dispatcher of sdkFetchOptions, and the SDK's log lines
 * scrubbed. The SDKs differ in nothing here but the name.
 */
export function sdkClient(adapter: string, options: { apiKey: string; baseURL?: string; timeoutMs?: number; log?: LogLine }, fetchFor?: (query: string | undefined) => (input: string | URL | Request, init?: RequestInit) => Promise<Response>) {
  const ep = endpoint(options.baseURL, options.apiKey);
  const timeoutMs = options.timeoutMs ?? 600_000;
  return {
    scrub: ep.scrub,
    base: ep.base,
    client: {
      apiKey: options.apiKey,
      ...(fetchFor ? { fetch: fetchFor(ep.query) } : ep.query !== undefined ? { fetch: fetchWithQuery(ep.query) } : {}),
      maxRetries: 0,
      timeout: timeoutMs,
      fetchOptions: sdkFetchOptions(timeoutMs),
      logger: sdkLogger(adapter, options.log, ep.scrub),
    },
  };
}
