// One HTTP request for the reader: no automatic redirects, a deadline, a cap on decoded bytes, the page's own charset,
// and never an address that is no docs site's (a cloud's metadata service answers on the link-local one).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { globalDispatcher, type Dispatcher } from '@quickloop/cli-kit/node-fetch';
import { addressClass, isIP } from '@quickloop/sandbox/hosts';
import { decodeEntities, parseAttrs, scanStartTags } from './tags.js';

/**
 * Addresses the reader never connects to, whatever a task names: the metadata services of the clouds
 * (AWS, GCP and Azure on 169.254.169.254; AWS's and GCP's IPv6 ones, EKS's pod identity agent, Azure's
 * WireServer, Alibaba's, Oracle's), in any IPv6 form that carries them, and every link-local,
 * unspecified, multicast or broadcast address. A task from someone else (a pull request) could
 * otherwise have the harness read a machine's credentials into the stream and the model's context.
 * Loopback and private addresses stay readable: a docs site served on this machine or an intranet is one.
 */
const METADATA = new Set(['fd00:ec2::254', 'fd00:ec2::23', 'fd20:ce::254', '100.100.100.200', '192.0.0.192', '168.63.129.16']);
const NEVER = /^(?:link-local|unspecified|multicast|broadcast|site-local)|link-local/;

/** The IPv4 address an IPv6 form carries (mapped, translated, compatible, NAT64, 6to4), or undefined. */
function embeddedIpv4(address: string): string | undefined {
  const m = /^(?:::ffff:(?:0:)?|::|64:ff9b::|64:ff9b:1::)(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (m) return m[1];
  const hex = /^(?:::ffff:(?:0:)?|::|64:ff9b::|64:ff9b:1::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(address);
  const six = /^2002:([0-9a-f]{1,4}):([0-9a-f]{1,4})(?::|$)/.exec(address);
  const parts = hex ?? six;
  if (!parts) return undefined;
  const hi = Number.parseInt(parts[1] as string, 16);
  const lo = Number.parseInt(parts[2] as string, 16);
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

/** Why the reader must not connect to `address`, or undefined when it may. */
export function refusedAddress(address: string): string | undefined {
  const bare = address.trim().replace(/^\[|\]$/g, '').toLowerCase();
  const inner = embeddedIpv4(bare);
  if (METADATA.has(bare) || (inner !== undefined && METADATA.has(inner))) return 'a cloud metadata service';
  const cls = addressClass(bare);
  return cls !== undefined && NEVER.test(cls) ? `${cls === 'link-local' ? 'link-local (where cloud metadata services answer)' : cls}` : undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup with the refused addresses taken out, at connect time: a name that rebinds to one after a check still never reaches it. */
function guardedLookup(host: string, options: { all?: boolean; family?: number; hints?: number }, callback: LookupCallback): void {
  dnsLookup(host, { ...options, all: true }, (error, found) => {
    if (error) return callback(error, options.all ? [] : '');
    const kept = found.filter((a) => refusedAddress(a.address) === undefined);
    if (kept.length === 0) {
      const first = found[0];
      const refused = Object.assign(new Error(`${host} resolves to ${first?.address ?? 'nothing'}, ${first ? refusedAddress(first.address) : 'no address'}: never a docs site`), { code: 'EADDRNOTDOCS' });
      return callback(refused, options.all ? [] : '');
    }
    if (options.all) return callback(null, kept);
    return callback(null, kept[0]!.address, kept[0]!.family);
  });
}

let guarded: Dispatcher | undefined;

/**
 * A dispatcher of Node's own undici (an Agent like its global one) whose connections resolve names
 * through guardedLookup. Made at the first request, when fetch has loaded undici.
 */
const guardedDispatcher: Dispatcher = {
  dispatch(options, handler) {
    guarded ??= new (globalDispatcher().constructor)({ connect: { lookup: guardedLookup } });
    return guarded.dispatch(options, handler);
  },
};

/** Docs pages are not downloads: a larger body is refused, never cut silently. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
export const FETCH_TIMEOUT_MS = 30_000;

export type HttpAnswer =
  | { kind: 'answer'; status: number; statusText: string; location?: string; contentType: string; bytes: Buffer }
  | { kind: 'too_large'; status: number; limit: number }
  | { kind: 'network'; error: string };

export interface HttpOptions {
  userAgent: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  maxBytes?: number;
  /** Keep the first maxBytes of a larger body instead of refusing it (robots.txt: only its start counts). */
  truncate?: boolean;
  fetch?: typeof fetch;
}

function describe(error: unknown, timeoutMs: number): string {
  const e = error as Error & { cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000}s`;
  const cause = e?.cause;
  if (cause?.code && cause.message) return cause.message.includes(cause.code) ? cause.message : `${cause.code} ${cause.message}`;
  return (cause?.message ?? e?.message ?? String(error)).split('\n')[0]!;
}

/**
 * The body is counted after decompression (fetch decodes gzip, deflate and br itself), so a small
 * compressed answer that inflates past the cap is stopped at the cap, not held in memory.
 */
export async function request(url: string, o: HttpOptions): Promise<HttpAnswer> {
  const timeoutMs = o.timeoutMs ?? FETCH_TIMEOUT_MS;
  const limit = o.maxBytes ?? MAX_BODY_BYTES;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
  // An address written in the URL is connected to without a lookup: judged here.
  const literal = URL.canParse(url) ? new URL(url).hostname.replace(/^\[|\]$/g, '') : '';
  const refused = isIP(literal) !== 0 ? refusedAddress(literal) : undefined;
  if (refused !== undefined) return { kind: 'network', error: `${literal} is ${refused}: never a docs site` };
  let response: Response;
  try {
    response = await (o.fetch ?? fetch)(url, {
      redirect: 'manual',
      signal,
      headers: { 'user-agent': o.userAgent, accept: 'text/html, text/markdown, text/plain;q=0.9, */*;q=0.5' },
      ...(o.fetch === undefined ? { dispatcher: guardedDispatcher } : {}),
    } as RequestInit);
  } catch (error) {
    if (o.signal?.aborted) throw error;
    return { kind: 'network', error: describe(error, timeoutMs) };
  }
  const base = { status: response.status, statusText: response.statusText, contentType: response.headers.get('content-type') ?? '' };
  const location = response.headers.get('location') ?? undefined;
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined);
    return { kind: 'answer', ...base, ...(location !== undefined ? { location } : {}), bytes: Buffer.alloc(0) };
  }
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (!o.truncate && Number.isFinite(declared) && declared > limit && !response.headers.get('content-encoding')) {
    await response.body?.cancel().catch(() => undefined);
    return { kind: 'too_large', status: response.status, limit };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    if (response.body) {
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > limit) {
          await reader.cancel().catch(() => undefined);
          if (!o.truncate) return { kind: 'too_large', status: response.status, limit };
          chunks.push(Buffer.from(value.subarray(0, value.byteLength - (size - limit))));
          break;
        }
        chunks.push(Buffer.from(value));
      }
    }
  } catch (error) {
    if (o.signal?.aborted) throw error;
    return { kind: 'network', error: `reading the body failed: ${describe(error, timeoutMs)}` };
  }
  return { kind: 'answer', ...base, bytes: Buffer.concat(chunks) };
}

/** The charset a page declares (header, then BOM, then an early <meta>), else UTF-8; an unknown label is UTF-8. */
export function decodeBody(bytes: Buffer, contentType: string): string {
  let label = /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType)?.[1];
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) label = 'utf-8';
  else if (bytes[0] === 0xff && bytes[1] === 0xfe) label = 'utf-16le';
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) label = 'utf-16be';
  if (label === undefined) {
    const head = bytes.subarray(0, 1024).toString('latin1');
    label = /<meta\b[^>]*charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
  }
  // WHATWG reads every Latin-1 label as windows-1252; Node's decoder for them is plain ISO-8859-1,
  // which turns a page's curly quotes (0x93, 0x94) into control characters.
  if (label !== undefined && WINDOWS_1252_LABELS.has(label.toLowerCase())) return decode1252(bytes);
  try {
    return new TextDecoder(label ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

const WINDOWS_1252_LABELS = new Set(['windows-1252', 'cp1252', 'x-cp1252', 'latin1', 'iso-8859-1', 'iso8859-1', 'iso_8859-1', 'l1', 'ascii', 'us-ascii', 'cp819', 'ibm819', 'iso-ir-100']);
// 0x80–0x9F of windows-1252; the five holes stay as their C1 code points, as WHATWG says.
const HIGH = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';
function decode1252(bytes: Buffer): string {
  const latin1 = bytes.toString('latin1');
  return latin1.replace(/[\x80-\x9f]/g, (c) => HIGH[c.charCodeAt(0) - 0x80]!);
}

/** What starts a file that is no text, by its first bytes. */
const MAGIC: Array<[string, number[]]> = [
  ['a PDF', [0x25, 0x50, 0x44, 0x46, 0x2d]],
  ['a PNG image', [0x89, 0x50, 0x4e, 0x47]],
  ['a JPEG image', [0xff, 0xd8, 0xff]],
  ['a GIF image', [0x47, 0x49, 0x46, 0x38]],
  ['a zip archive', [0x50, 0x4b, 0x03, 0x04]],
  ['a gzip file', [0x1f, 0x8b]],
  ['a WebAssembly module', [0x00, 0x61, 0x73, 0x6d]],
];

/** A declared type that is never text, whatever the bytes (a PDF, an image, audio, video, a font, an archive). */
const BINARY_TYPE = /^(?:image|audio|video|font)\/|^application\/(?:pdf|zip|gzip|x-gzip|x-tar|x-bzip2|x-7z-compressed|wasm|vnd\.|msword|x-msdownload)/i;

/**
 * Why an answer is no page the reader can give the model, or undefined when it is text: a declared
 * binary type (BINARY_TYPE), a known file signature (MAGIC), or a NUL byte early on. A text file a
 * server labels `application/octet-stream` (raw Markdown often is) is text.
 */
export function notText(contentType: string, bytes: Buffer): string | undefined {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (BINARY_TYPE.test(type)) return type;
  // A page in UTF-16 carries NULs: its byte-order mark says it is text.
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) return undefined;
  for (const [what, sig] of MAGIC) if (sig.every((b, i) => bytes[i] === b)) return what;
  return bytes.subarray(0, 8192).includes(0) ? (type === '' ? 'binary' : `binary ${type}`) : undefined;
}

export function looksHtml(contentType: string, body: string): boolean {
  if (/html/i.test(contentType)) return true;
  if (contentType !== '' && !/^text\/plain/i.test(contentType)) return false;
  return /^\s*(<!doctype html|<html|<head|<body)/i.test(body.slice(0, 512));
}

/** The target of `<meta http-equiv="refresh" content="N; url=...">`, attributes in any order; not one in a comment or a script. */
export function metaRefresh(html: string): string | undefined {
  let found: string | undefined;
  scanStartTags(html, META, (tag) => {
    if (found !== undefined) return;
    const attrs = parseAttrs(tag.attrs);
    if (attrs.get('http-equiv')?.trim().toLowerCase() !== 'refresh') return;
    const content = decodeEntities(attrs.get('content') ?? '');
    const m = /^\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?(.*)$/is.exec(content);
    const url = (m?.[1] ?? '').trim().replace(/^(['"])(.*?)\1?$/s, '$2').trim();
    if (url) found = url;
  });
  return found;
}
const META = new Set(['meta']);
