import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { WireEvent } from '@quickloop/events';
import { closeOpen, docsUnread, HELPER_FAILURES, limitHitDetail, newFacts, observe, observeCheckEgress, recordedDiverged } from './facts.js';

let n = 0;
const ev = (type: string, fields: Record<string, unknown> = {}): WireEvent =>
  ({ v: 1, type, ts: '2026-01-01T00:00:00.000Z', run_id: 'r', stage: 'qs-agent', ...fields }) as WireEvent;
const blocked = (reason: string): WireEvent => ev('egress.blocked', { host: 'h', port: 443, method: 'CONNECT', reason, message: 'm' });
const error = (): WireEvent => ev('egress.error', { host: 'h', port: 443, method: 'CONNECT', error: 'ENOTFOUND' });
const call = (id: string): WireEvent => ev('tool.call', { id, tool: 'bash', command: `c${(n += 1)}` });
const result = (parent: string, exit: number, timedOut = false): WireEvent =>
  ev('tool.result', { id: `${parent}r`, parent_id: parent, tool: 'bash', exit_code: exit, timed_out: timedOut, duration_ms: 1, output: '', original_chars: 0, truncated: false });
const hit = (parent: string, exit = 254): WireEvent =>
  ev('sandbox.limit_hit', { parent_id: parent, limit: 'processes', value: 48, unit: 'count', enforced_by: 'cgroup_v1', exit_code: exit, detected_from: 'counter', counter: 'pids.events max', count: 3, line: 'bash: fork: retry: Resource temporarily unavailable' });
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
    observeCheckEgress(f, { type: 'egress.error', host: 'api.example.test', port: 443, error: 'connect ECONNREFUSED' });
    observeCheckEgress(f, { type: 'egress.allowed', host: 'api.example.test', port: 443 });
    expect([f.egressBlocked, f.egressErrors, f.denied]).toEqual([1, 1, 1]);
    // The first of each kind that counted, in words, for the run's detail.
    expect(f.egressErrorNote).toBe('api.example.test:443: connect ECONNREFUSED');
    expect(f.egressBlockedNote).toBeDefined();
  });
});

describe('observe: sandbox limit hits belong to their command, and count only where it failed', () => {
  const named = (id: string, command: string): WireEvent => ev('tool.call', { id, tool: 'bash', command });

  it('keeps the hits of a failed command and drops those of a command that succeeded', () => {
    const f = newFacts('r');
    for (const e of [call('a'), hit('a', 0), result('a', 0), call('b'), hit('b'), result('b', 254)]) observe(f, e);
    expect(f.limitHits.map((h) => h.parent_id)).toEqual(['b']);
    expect(f.limitHits[0]?.command).toMatch(/^c\d+$/);
  });

  it('a hit in a failed command the run later ran again and got through decided nothing', () => {
    const f = newFacts('r');
    for (const e of [named('a', 'npm test'), hit('a'), result('a', 137), named('b', 'npm test'), result('b', 0)]) observe(f, e);
    expect(f.limitHits).toEqual([]);
    // Another command succeeding does not excuse it.
    const g = newFacts('r');
    for (const e of [named('a', 'npm test'), hit('a'), result('a', 137), named('b', 'ls'), result('b', 0)]) observe(g, e);
    expect(g.limitHits).toHaveLength(1);
  });

  it('a setup step and a command that never ended are commands too', () => {
    const f = newFacts('r');
    observe(f, ev('setup.started', { id: 's', index: 0, command: 'make deps' }));
    observe(f, hit('s'));
    observe(f, ev('setup.completed', { parent_id: 's', index: 0, command: 'make deps', exit_code: 2, timed_out: false, duration_ms: 1, output: '', original_chars: 0, truncated: false }));
    observe(f, call('x'));
    observe(f, hit('x'));
    closeOpen(f);
    expect(f.limitHits.map((h) => [h.parent_id, h.command])).toEqual([['s', 'setup step 1: make deps'], ['x', expect.stringMatching(/^c\d+$/)]]);
  });

  it('names the limit, its value, what enforces it, the evidence and how (not) to raise it', () => {
    const f = newFacts('r');
    for (const e of [named('a', 'for i in $(seq 1 5000); do sleep 30 & done; wait'), hit('a'), result('a', 254)]) observe(f, e);
    const text = limitHitDetail(f.limitHits[0]!);
    expect(text).toContain('for i in $(seq 1 5000)');
    expect(text).toContain('process limit (48 processes and threads at once, enforced by cgroup_v1)');
    expect(text).toContain('pids.events max rose by 3');
    expect(text).toContain('bash: fork: retry: Resource temporarily unavailable');
    expect(text).toContain('says nothing about the docs');
    expect(text).toMatch(/raise it with qs run --max-processes \(or qs-sandbox's\) if the quickstart needs more$/);
    const memory = limitHitDetail({ ...f.limitHits[0]!, limit: 'memory', value: 256 * 1024 ** 2, unit: 'bytes', enforced_by: 'rlimit', detected_from: 'stderr', line: 'MemoryError', counter: undefined, count: undefined } as never);
    expect(memory).toContain('memory limit (256 MiB per process, enforced by rlimit)');
    expect(memory).toContain('qs run --max-memory');
    expect(memory).toContain('its output says "MemoryError" (read from the text: rlimits count nothing)');
    const tmp = limitHitDetail({ ...f.limitHits[0]!, limit: '/tmp', value: 1024 ** 3, unit: 'bytes', enforced_by: 'tmpfs', detected_from: 'statfs', line: 'head: error writing: No space left on device', counter: undefined, count: undefined } as never);
    expect(tmp).toContain('size of its private /tmp (1 GiB, enforced by tmpfs)');
    expect(tmp).toContain('/tmp was full when it ended');
    // The host's disk under the workspace: nothing of the sandbox's caps it, and no flag raises it.
    const disk = limitHitDetail({ ...f.limitHits[0]!, limit: 'disk', value: 4 * 1024 ** 2, unit: 'bytes', enforced_by: 'none', detected_from: 'statfs', line: "head: error writing 'standard output': No space left on device", counter: undefined, count: undefined } as never);
    expect(disk).toContain("ran out of the host's disk that holds the sandbox's folders (4 MiB, which the sandbox does not cap)");
    expect(disk).toContain('the disk was full when it ended');
    expect(disk).toMatch(/free space on that disk, or move the sandboxes to a larger one \(TMPDIR\), if the quickstart needs more$/);
    expect(disk).not.toContain('--max-');
  });
});

describe('docsUnread and recordedDiverged: a run whose agent did not follow these docs', () => {
  const loaded = ev('task.loaded', { task: { name: 't', docs: { path: ['https://docs.example.test/q.html'], allow: ['example.test'] } } });
  const done = (agent: string): WireEvent => ev('agent.completed', { agent, stop_reason: 'completed', detail: 'd', commands: 0, duration_ms: 0 });
  const facts = (...events: WireEvent[]) => {
    const f = newFacts('r');
    for (const e of [loaded, ...events]) observe(f, e);
    return f;
  };

  it('a model agent that read no page is unread; a page read, or a CLI agent\'s connection to a docs host (or a subdomain), is reading', () => {
    expect(docsUnread(facts(done('openai')))).toMatchObject({ infra: false, detail: expect.stringContaining('the agent read no page of the docs') });
    expect(docsUnread(facts(ev('docs.read', { url: 'https://docs.example.test/q.html' }), done('openai')))).toBeUndefined();
    const connected = ev('egress.allowed', { host: 'docs.example.test', port: 443, method: 'CONNECT', reason: 'explicit', rule: 'example.test' });
    expect(docsUnread(facts(connected, done('claude-code')))).toBeUndefined();
    const elsewhere = ev('egress.allowed', { host: 'registry.npmjs.test', port: 443, method: 'CONNECT', reason: 'registry', rule: 'registry.npmjs.test:443' });
    expect(docsUnread(facts(elsewhere, done('claude-code')))).toMatchObject({ infra: false });
  });

  it('replay, and an agent stage that names no agent, are not judged by what they read', () => {
    expect(docsUnread(facts(done('replay')))).toBeUndefined();
    expect(docsUnread(facts())).toBeUndefined();
  });

  it('reads that all failed are the site\'s when it failed (5xx, no answer), else the agent\'s', () => {
    const down = ev('docs.error', { url: 'https://docs.example.test/other.html', error: 'HTTP 503', reason: 'http_status', status: 503 });
    expect(docsUnread(facts(down, done('gemini')))).toMatchObject({ infra: true, detail: expect.stringContaining('the docs site failed') });
    const missing = ev('docs.error', { url: 'https://docs.example.test/guess.html', error: 'HTTP 404', reason: 'http_status', status: 404 });
    expect(docsUnread(facts(missing, done('gemini')))).toMatchObject({ infra: false, detail: expect.stringContaining('the one page it asked for could not be read (https://docs.example.test/guess.html: HTTP 404)') });
  });

  it('a recorded divergence counts when a model would have acted on it (exit code, timeout, tool error, page), not for output alone', () => {
    const div = (field: string): WireEvent => ev('replay.diverged', { turn: 2, call_id: 'call_1', tool: 'bash', field, recorded: '0', actual: '1' });
    expect(recordedDiverged(facts(div('output'), done('recorded')))).toBeUndefined();
    for (const field of ['exit_code', 'timed_out', 'error', 'docs']) expect(recordedDiverged(facts(div('output'), div(field), done('recorded'))), field).toContain(`turn 2 bash call call_1 got another result than the recording (${field}: recorded 0, now 1)`);
  });
});

describe('HELPER_FAILURES: every way a helper of the check fails before it checks anything', () => {
  it('covers each qs_fail of the prelude that is not a verdict, and no verdict', () => {
    const prelude = readFileSync(fileURLToPath(new URL('../../task/prelude.sh', import.meta.url)), 'utf8');
    const messages = [...prelude.matchAll(/qs_fail "([^"]*)"/g), ...prelude.matchAll(/echo "check failed: ([^"]*)"/g)].map((m) => (m[1] as string).replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}?|\$\d/g, 'X'));
    // The verdicts: what the run left did not answer, or did not print, as the task asks.
    const verdicts = messages.filter((m) => m.startsWith('X did not answer as expected') || m.startsWith('nothing the run printed'));
    expect(verdicts).toHaveLength(2);
    for (const m of messages.filter((x) => !verdicts.includes(x))) expect(HELPER_FAILURES.some((r) => r.test(m)), m).toBe(true);
    for (const m of verdicts) expect(HELPER_FAILURES.some((r) => r.test(m)), m).toBe(false);
  });
});
