// The fetch the Gemini and Anthropic adapters give their SDKs, which read a stream more narrowly than
// the SSE standard allows a server to write it. @google/genai cuts the text at blank lines and parses
// what follows `data:` as JSON, which works for one `data:` line an event and nothing else in it; the
// standard allows CR or CRLF line ends, comment lines, `event:`/`id:`/`retry:` fields, one data over
// several `data:` lines. @anthropic-ai/sdk drops every event without an `event:` line, though its
// data names its type. And the standard says an event the stream ends inside is not dispatched, where
// @google/genai throws "Incomplete JSON segment", read as an unreadable answer rather than the cut
// connection it is. So the body is parsed here as the standard says and handed on as each SDK reads it.
import { fetchWithQuery } from './endpoint.js';

/** One event as the standard parses it: its `event` field (the last one), and its data lines joined. */
export interface SseEvent {
  event?: string;
  data: string;
}

/** Writes an event as an SDK reads it. */
export type Framer = (event: SseEvent) => string;

/**
 * One data line an event, as @google/genai reads it: the lines of a data joined by newlines are JSON
 * whitespace, and a newline inside it would end the event for that SDK.
 */
export const dataOnly: Framer = ({ data }) => `data: ${data.replace(/\n/g, ' ')}\n\n`;

/** An event under its own name, or, without one, the `type` its JSON data names (as Anthropic's always do). */
export const named: Framer = ({ event, data }) => {
  let name = event;
  if (name === undefined) {
    try {
      const type = (JSON.parse(data) as { type?: unknown } | null)?.type;
      if (typeof type === 'string' && !/[\r\n]/.test(type)) name = type;
    } catch {
      // Not JSON: the SDK says so when it reads the data.
    }
  }
  return `${name === undefined ? '' : `event: ${name}\n`}${dataOnly({ data })}`;
};

/** SSE text parsed as the standard says, each event written by `frame` (an event the text ends inside is dropped). */
export function sseReframer(frame: Framer): TransformStream<string, string> {
  let buffer = '';
  let data: string[] = [];
  let event: string | undefined;
  let first = true;
  const line = (text: string, out: TransformStreamDefaultController<string>): void => {
    if (text === '') {
      if (data.length > 0) out.enqueue(frame({ ...(event !== undefined ? { event } : {}), data: data.join('\n') }));
      data = [];
      event = undefined;
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? '' : text.slice(colon + (text[colon + 1] === ' ' ? 2 : 1));
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    // `id`, `retry` and unknown fields say nothing the SDKs read.
  };
  return new TransformStream<string, string>({
    transform(chunk, out) {
      buffer += chunk;
      if (first && buffer.length > 0) {
        if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
        first = false;
      }
      // A CR at the end of a chunk may be the first half of a CRLF: wait for the next chunk.
      for (let m = /\r\n|\r(?!$)|\n/.exec(buffer); m; m = /\r\n|\r(?!$)|\n/.exec(buffer)) {
        line(buffer.slice(0, m.index), out);
        buffer = buffer.slice(m.index + m[0].length);
      }
    },
    flush(out) {
      // A last CR ends its line; then the event is dispatched only if a blank line followed it.
      if (buffer.endsWith('\r')) line(buffer.slice(0, -1), out);
      buffer = '';
      data = [];
    },
  });
}

/** The Gemini error object of a 200 body (`{error: {code, status, message}}`), when that is all the body is. */
function errorCode(text: string): number | undefined {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown } } | null;
    const code = body?.error?.code;
    return typeof code === 'number' && Number.isInteger(code) && code >= 400 && code < 600 ? code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * fetchWithQuery (the base URL's query on every request, and the dispatcher without undici's 300 s
 * timeouts) with a stream's body parsed as above and written by `frame`. With `jsonErrors`, a 200
 * whose JSON body is an API error (a gateway answering errors with 200) is given that error's code as
 * its status: @google/genai does so for an error inside a stream, and reads such a body as an answer
 * with no candidates.
 */
export function sseFetch(query: string | undefined, frame: Framer, options: { jsonErrors?: boolean } = {}): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  const send = fetchWithQuery(query ?? '');
  return async (input, init) => {
    const res = await send(input, init);
    if (!res.ok || res.body === null) return res;
    const type = res.headers.get('content-type') ?? '';
    const as = { status: res.status, statusText: res.statusText, headers: res.headers };
    if (/^text\/event-stream/i.test(type)) {
      return new Response(res.body.pipeThrough(new TextDecoderStream()).pipeThrough(sseReframer(frame)).pipeThrough(new TextEncoderStream()), as);
    }
    if (!options.jsonErrors || !/json/i.test(type)) return res;
    const text = await res.text();
    const code = errorCode(text);
    return new Response(text, code === undefined ? as : { ...as, status: code, statusText: '' });
  };
}

export const geminiFetch = (query: string | undefined) => sseFetch(query, dataOnly, { jsonErrors: true });
export const anthropicFetch = (query: string | undefined) => sseFetch(query, named);
