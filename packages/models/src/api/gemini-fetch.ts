// The fetch the Gemini adapter gives @google/genai. That SDK reads a stream by cutting the text at blank
// lines and parsing what follows `data:` as JSON, which only works for one `data:` line an event and
// nothing else in it. The SSE standard allows more, and a server may send it: CR or CRLF line ends,
// comment lines, `event:`/`id:`/`retry:` fields, one data spread over several `data:` lines. It also
// says an event the stream ends inside is not dispatched, where the SDK throws "Incomplete JSON
// segment", read as an unreadable answer rather than the cut connection it is. So the body is parsed
// here as the standard says and handed on as the SDK reads it: one `data:` line an event.
import { fetchWithQuery } from './endpoint.js';

/** Each event's data, from SSE text as the standard parses it (an event the text ends inside is dropped). */
export function sseReframer(): TransformStream<string, string> {
  let buffer = '';
  let data: string[] = [];
  let first = true;
  const line = (text: string, out: TransformStreamDefaultController<string>): void => {
    if (text === '') {
      // One data line an event, as the SDK reads it: the lines of a data joined by newlines are JSON
      // whitespace, and a newline inside it would end the event for the SDK.
      if (data.length > 0) out.enqueue(`data: ${data.join('\n').replace(/\n/g, ' ')}\n\n`);
      data = [];
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    if (field === 'data') data.push(colon < 0 ? '' : text.slice(colon + (text[colon + 1] === ' ' ? 2 : 1)));
    // `event`, `id`, `retry` and unknown fields say nothing the SDK reads.
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
 * timeouts) with a stream's body parsed as above, and a 200 whose JSON body is an API error (a gateway
 * answering errors with 200) given that error's code as its status: the SDK does so for an error inside
 * a stream, and reads a 200 body as an answer that has no candidates.
 */
export function geminiFetch(query: string | undefined): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  const send = fetchWithQuery(query ?? '');
  return async (input, init) => {
    const res = await send(input, init);
    if (!res.ok || res.body === null) return res;
    const type = res.headers.get('content-type') ?? '';
    const as = { status: res.status, statusText: res.statusText, headers: res.headers };
    if (/^text\/event-stream/i.test(type)) {
      return new Response(res.body.pipeThrough(new TextDecoderStream()).pipeThrough(sseReframer()).pipeThrough(new TextEncoderStream()), as);
    }
    if (!/json/i.test(type)) return res;
    const text = await res.text();
    const code = errorCode(text);
    return new Response(text, code === undefined ? as : { ...as, status: code, statusText: '' });
  };
}
