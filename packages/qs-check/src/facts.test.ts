import { describe, expect, it } from 'vitest';
import type { WireEvent } from '@quickloop/events';
import { closeOpen, newFacts, observe, observeCheckEgress } from './facts.js';

let n = 0;
const ev = (type: string, fields: Record<string, unknown> = {}): WireEvent =>
  ({ v: 1, type, ts: '2026-01-01T00:00:00.000Z', run_id: 'r', stage: 'qs-agent', ...fields }) as WireEvent;
const blocked = (reason: string): WireEvent => ev('egress.blocked', { host: 'h', port: 443, method: 'CONNECT', reason, message: 'm' });
const error = (): WireEvent => ev('egress.error', { host: 'h', port: 443, method: 'CONNECT', error: 'ENOTFOUND' });
const call = (id: string): WireEvent => ev('tool.call', { id, tool: 'bash', command: `c${(n += 1)}` });
const result = (parent: string, exit: number, timedOut = false): WireEvent =>
  ev('tool.result', { id: `${parent}r`, parent_id: parent, tool: 'bash', exit_code: exit, timed_out: timedOut, duration_ms: 1, output: '', original_chars: 0, truncated: false });
const denied = (parent: string): WireEvent => ev('sandbox.denied', { parent_id: parent, path: '/etc/x', operation: 'write', reason: 'read_only', detected_from: 'stderr', line: 'l' });

describe('observe: egress and denials belong to the command around them', () => {
  it('counts those of a failed command, and none of a command that succeeded', () => {
    const f = newFacts('r');
    for (const e of [call('a'), blocked('not_allowlisted'), error(), denied('a'), result('a', 0), call('b'), blocked('docs_host'), error(), denied('b'), result('b', 7)]) observe(f, e);
    expect([f.egressBlocked, f.egressErrors, f.denied, f.docsBypass]).toEqual([1, 1, 1, 1]);
  });

  it('a timed-out command failed; setup commands are commands too', () => {
    const f = newFacts('r');
    observe(f, call('a'));
    observe(f, blocked('ip_literal'));
    observe(f, result('a', 0, true));
    observe(f, ev('setup.started', { id: 's', index: 0, command: 'x' }));
    observe(f, error());
    observe(f, ev('setup.completed', { parent_id: 's', index: 0, command: 'x', exit_code: 1, timed_out: false, duration_ms: 1, output: '', original_chars: 0, truncated: false }));
    expect([f.egressBlocked, f.egressErrors]).toEqual([1, 1]);
  });

  it('egress between commands (a background server a finished step left running) is nobody\'s', () => {
    const f = newFacts('r');
    for (const e of [call('a'), result('a', 0), error(), blocked('not_allowlisted'), ev('tool.call', { id: 'd', tool: 'read_docs', url: 'u' }), error()]) observe(f, e);
    expect([f.egressBlocked, f.egressErrors]).toEqual([0, 0]);
  });

  it('a command that never ended counts as failed once the run is classified; the check\'s egress always counts', () => {
    const f = newFacts('r');
    observe(f, call('a'));
    observe(f, blocked('not_allowlisted'));
    observe(f, denied('a'));
    closeOpen(f);
    observeCheckEgress(f, 'egress.error');
    observeCheckEgress(f, 'egress.allowed');
    expect([f.egressBlocked, f.egressErrors, f.denied]).toEqual([1, 1, 1]);
  });
});
