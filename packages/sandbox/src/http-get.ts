// The install cache's own downloads, made by the harness outside every sandbox: a bounded GET into
// memory (packuments, index pages) or into a file with its SHA-256 (package files), trusting the
// system's roots plus the package manager's own CA file when it has one.
import { createHash } from 'node:crypto';
import { closeSync, openSync, writeSync, constants } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createSecureContext, rootCertificates } from 'node:tls';

/** A connection silent this long fails its request. */
const TIMEOUT_MS = 30_000;
/** Every request ends by this, all its redirects included: a server that trickles is never idle. */
const DEADLINE_MS = 10 * 60_000;

export interface Got {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface GetOptions {
  headers: Record<string, string>;
  /** A CA file's text, trusted beside the system's roots. */
  ca?: string;
  /** A body longer than this fails the request. */
  maxBytes: number;
  /** Redirects followed (only to http or https). Default 0: a 3xx is returned as it is. */
  redirects?: number;
  /** Stops the request (and every redirect after it): it fails. */
  signal?: AbortSignal;
  /** The whole request's time, its redirects included; default ten minutes. */
  deadlineMs?: number;
}

/**
 * One agent per CA file, made on first use: its TLS context parses every certificate once (the roots
 * and a system bundle are hundreds, more CPU than a packument), and its kept-alive connections were
 * opened trusting that CA file and no other.
 */
const agents = new Map<string, HttpsAgent>();
function trusting(ca: string): HttpsAgent {
  let agent = agents.get(ca);
  if (agent === undefined) {
    agent = new HttpsAgent({ keepAlive: true, secureContext: createSecureContext({ ca: [...rootCertificates, ca] }) });
    agents.set(ca, agent);
  }
  return agent;
}

function headersOf(res: IncomingMessage): Record<string, string> {
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h[k] = v;
  return h;
}

/** The response to one GET, its body handed to `onData` chunk by chunk; `onData` throwing fails it. */
function once(url: URL, opts: GetOptions, signal: AbortSignal, onData: (chunk: Buffer) => void): Promise<{ status: number; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new Error('stopped'));
      return;
    }
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      { method: 'GET', headers: opts.headers, timeout: TIMEOUT_MS, signal, ...(url.protocol === 'https:' && opts.ca !== undefined ? { agent: trusting(opts.ca) } : {}) },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          // A redirect's body is not wanted: the connection is dropped rather than read to its end, which may never come.
          const headers = headersOf(res);
          res.on('error', () => {});
          req.destroy();
          resolve({ status, headers });
          return;
        }
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          try {
            if (size > opts.maxBytes) throw new Error(`more than ${opts.maxBytes} bytes`);
            onData(c);
          } catch (error) {
            req.destroy(error as Error);
          }
        });
        res.on('end', () => resolve({ status, headers: headersOf(res) }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** Follows up to `opts.redirects` redirects; returns the final URL with the response. */
async function follow(url: string, opts: GetOptions, onData: (chunk: Buffer) => void): Promise<{ url: string; status: number; headers: Record<string, string> }> {
  const deadline = AbortSignal.timeout(opts.deadlineMs ?? DEADLINE_MS);
  const signal = opts.signal !== undefined ? AbortSignal.any([opts.signal, deadline]) : deadline;
  let at = new URL(url);
  for (let hop = 0; ; hop += 1) {
    const r = await once(at, opts, signal, onData);
    const location = r.headers.location;
    // Unredirected, the URL is the one given, as it was spelled (a `:443` a URL object drops keys pip's cache).
    if (r.status < 300 || r.status >= 400 || location === undefined || hop >= (opts.redirects ?? 0)) return { url: hop === 0 ? url : at.toString(), ...r };
    const next = new URL(location, at);
    if (next.protocol !== 'https:' && next.protocol !== 'http:') return { url: at.toString(), ...r };
    // Credentials go to the host they were given for, never to another one.
    if (next.host !== at.host) {
      next.username = '';
      next.password = '';
    }
    at = next;
  }
}

/** A GET whose body is kept in memory (at most `opts.maxBytes`). */
export async function getBuffer(url: string, opts: GetOptions): Promise<Got & { url: string }> {
  const chunks: Buffer[] = [];
  const r = await follow(url, opts, (c) => chunks.push(c));
  return { ...r, body: Buffer.concat(chunks) };
}

/**
 * A GET whose body is written to `path` (made new, mode 0600) as it arrives, hashed on the way: what
 * is checked is exactly what was written. The caller removes `path` when it does not want it.
 */
export async function download(url: string, path: string, opts: GetOptions): Promise<{ status: number; headers: Record<string, string>; bytes: number; sha256: string }> {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  const hash = createHash('sha256');
  let bytes = 0;
  try {
    // A redirect's own body is never passed on: only the final response's is written.
    const r = await follow(url, opts, (c) => {
      writeSync(fd, c);
      hash.update(c);
      bytes += c.length;
    });
    return { status: r.status, headers: r.headers, bytes, sha256: hash.digest('hex') };
  } finally {
    closeSync(fd);
  }
}
