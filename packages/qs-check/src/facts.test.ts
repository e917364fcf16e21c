import { describe, expect, it } from 'vitest';
import type { WireEvent } from '@quickloop/events';
import { newFacts, observe } from './facts.js';

const blocked = (reason: string): WireEvent =>
  ({ v: 1, type: 'egress.blocked', ts: '2026-01-01T00:00:00.000Z', run_id: 'r', stage: 'qs-agent', host: 'h', port: 443, method: 'CONNECT', reason, message: 'm' }) as WireEvent;

describe('observe: egress blocks', () => {
  it('counts docs-host blocks as bypass attempts and policy blocks for rule 8', () => {
    const f = newFacts('r');
    for (const reason of ['docs_host', 'not_allowlisted', 'ip_literal', 'bypassed_proxy', 'bad_request']) observe(f, blocked(reason));
    expect(f.egressBlocked).toBe(5);
    expect(f.docsBypass).toBe(1);
    // a raw IP and a tool that ignored the proxy are policy blocks like an unlisted host; a malformed request is not
    expect(f.egressNotAllowlisted).toBe(3);
  });
});
