// Records what bypasses the proxy inside an enforced sandbox: DNS lookups and direct dials to ports 80 and 443.
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import net from 'node:net';
import { normalizeHost } from './hosts.js';
import { decide } from './policy.js';
import type { EgressEvent, EgressPolicy } from './types.js';

export interface DirectCatcherOptions {
  policy: EgressPolicy;
  /** Each connection: one line `ADDRESS PORT` for a dial that reached a catcher inside. */
  tcpSocketPath: string;
  /** Each connection: one raw DNS query; the answer is REFUSED. */
  dnsSocketPath: string;
  report: (event: EgressEvent) => void;
}

/**
 * A resolver asks for A and AAAA and retries on REFUSED, so one lookup is several queries; the same
 * host within this window is one attempt. Only the count of events depends on it, never a decision.
 */
const SAME_ATTEMPT_MS = 2000;
/** Hosts remembered for that window at most: past it, the older ones are forgotten. */
const MAX_REMEMBERED = 10_000;

/** The queried name of a DNS message, or undefined when it is not a well-formed query. */
export function dnsQuestion(query: Buffer): { name: string; end: number } | undefined {
  if (query.length < 17 || query.readUInt16BE(4) < 1) return undefined;
  const labels: string[] = [];
  let i = 12;
  while (i < query.length) {
    const len = query[i] ?? 0;
    if (len === 0) break;
    if (len > 63 || i + 1 + len > query.length) return undefined;
    labels.push(query.subarray(i + 1, i + 1 + len).toString('latin1'));
    i += len + 1;
  }
  const end = i + 5; // the zero label, QTYPE, QCLASS
  if (end > query.length) return undefined;
  return { name: labels.join('.'), end };
}

/** A REFUSED answer echoing the question, so the resolver gives up at once instead of timing out. */
export function refusedAnswer(query: Buffer, questionEnd: number): Buffer {
  const answer = Buffer.from(query.subarray(0, questionEnd));
  answer[2] = 0x80 | ((query[2] ?? 0) & 0x79); // QR, the query's opcode and RD
  answer[3] = 0x05; // REFUSED
  answer.writeUInt16BE(1, 4);
  answer.writeUInt16BE(0, 6);
  answer.writeUInt16BE(0, 8);
  answer.writeUInt16BE(0, 10);
  return answer;
}

/** `[2001:0db8:0000:…:0001]` (socat's spelling) → `2001:db8::1`; IPv4 as is. */
function canonicalAddress(text: string): string {
  return normalizeHost(text.trim()) || text.trim().toLowerCase();
}

const BYPASS = 'only the egress proxy reaches the network: this tool ignored HTTP(S)_PROXY';

export async function startDirectCatcher(options: DirectCatcherOptions): Promise<{ close(): Promise<void> }> {
  const last = new Map<string, number>();
  const report = (event: EgressEvent): void => {
    const key = `${event.method} ${event.host} ${event.port}`;
    const now = Date.now();
    const before = last.get(key);
    last.set(key, now);
    // A name a lookup apiece (a flood of made-up ones) must not grow this for good: what is older
    // than the window decides nothing.
    if (last.size > MAX_REMEMBERED) {
      for (const [k, t] of last) if (now - t >= SAME_ATTEMPT_MS) last.delete(k);
      if (last.size > MAX_REMEMBERED) last.clear();
    }
    if (before !== undefined && now - before < SAME_ATTEMPT_MS) return;
    options.report(event);
  };

  const tcp = net.createServer((socket) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (text += c));
    socket.on('error', () => undefined);
    socket.on('end', () => {
      const [address = '', port = '0'] = text.trim().split(/\s+/);
      const host = canonicalAddress(address);
      if (host !== '') report({ type: 'egress.blocked', host, port: Number(port) || 0, method: 'TCP', reason: 'bypassed_proxy', message: `${host}:${port}: ${BYPASS}` });
      socket.end();
    });
  });

  const dns = net.createServer((socket) => {
    socket.on('error', () => undefined);
    socket.once('data', (query: Buffer) => {
      const q = dnsQuestion(query);
      if (!q) {
        socket.destroy();
        return;
      }
      const host = normalizeHost(q.name) || q.name.toLowerCase();
      // A name is looked up to be dialled, almost always on 443: decide it as that connection.
      const decision = decide(options.policy, host, 443);
      // A docs host looked up around the proxy is still a docs bypass attempt, and says so.
      const docs = !decision.allow && decision.reason === 'docs_host';
      report({
        type: 'egress.blocked',
        host: host || '(root)',
        port: 53,
        method: 'DNS',
        reason: docs ? 'docs_host' : 'bypassed_proxy',
        message: docs ? decision.message : `${host}: ${BYPASS}`,
      });
      socket.end(refusedAnswer(query, q.end));
    });
  });

  for (const [server, path] of [[tcp, options.tcpSocketPath], [dns, options.dnsSocketPath]] as const) {
    rmSync(path, { force: true });
    server.listen(path);
    await once(server, 'listening');
  }
  return {
    close: async () => {
      await Promise.all([tcp, dns].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
