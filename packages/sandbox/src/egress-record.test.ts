import { describe, expect, it } from 'vitest';
import { egressRecord, MAX_LATE_KINDS, MAX_RECORDED } from './egress-record.js';
import type { EgressEvent } from './types.js';

const blocked = (host: string, path = '/'): EgressEvent => ({ type: 'egress.blocked', host, port: 80, method: 'GET', path, reason: 'not_allowlisted', message: `${host}: not allowed` });

describe('the egress record', () => {
  it('passes every decision on, each field cut to its bound, until the budget is spent', () => {
    const seen: EgressEvent[] = [];
    const record = egressRecord((e) => seen.push(e));
    record.report(blocked('h'.repeat(5000), `/${'p'.repeat(20_000)}`));
    const [e] = seen as [Extract<EgressEvent, { type: 'egress.blocked' }>];
    expect(e.host).toHaveLength(255);
    expect(e.host.endsWith('…')).toBe(true);
    expect(e.path).toHaveLength(1024);
    expect(e.message).toHaveLength(512);
    expect(e.port).toBe(80);
    record.report(blocked('short.test'));
    expect(seen[1]).toEqual(blocked('short.test'));
    expect(record.unrecorded()).toBe(0);
  });

  it('past the budget keeps one event per kind, up to a bound, and counts the rest', () => {
    const seen: EgressEvent[] = [];
    const record = egressRecord((e) => seen.push(e));
    for (let i = 0; i < MAX_RECORDED + 10; i++) record.report(blocked('same.test', `/${i}`));
    expect(seen).toHaveLength(MAX_RECORDED + 1);
    for (let i = 0; i < MAX_LATE_KINDS + 10; i++) record.report(blocked(`h${i}.test`));
    expect(seen).toHaveLength(MAX_RECORDED + MAX_LATE_KINDS);
    expect(record.unrecorded()).toBe(9 + 11);
    expect(seen.length + record.unrecorded()).toBe(MAX_RECORDED + 10 + MAX_LATE_KINDS + 10);
  });
});
