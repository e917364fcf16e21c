// An attempt's stream written again in quickstarted's trace format: each of our events as the prior
// art's tracer names it, and a stream that ends without a verdict still ends its trace.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WireEvent } from '@quickloop/events';
import { describe, expect, it } from 'vitest';
import { parseQuickstartedTrace, quickstartedLines } from './trace.js';
import { quickstartedEvents, TRACE_FILE, writeQuickstartedTrace } from './trace-export.js';

const EVENTS = fileURLToPath(new URL('../../../../fixtures/events/', import.meta.url));
const example = (type: string, extra: Record<string, unknown> = {}): WireEvent => ({ ...(JSON.parse(readFileSync(join(EVENTS, `${type}.json`), 'utf8')) as WireEvent), run_id: 'r-1', ...extra });

describe("quickstarted's trace from a stream", () => {
  const events = [
    example('task.loaded'),
    example('sandbox.ready'),
    example('setup.completed'),
    example('agent.started', { agent: 'anthropic' }),
    example('agent.retry'),
    example('agent.turn'),
    example('tool.call', { tool: 'read_docs', command: undefined, url: 'https://docs.example.test/quickstart' }),
    example('docs.read'),
    example('docs.error', { reason: 'robots' }),
    example('docs.error'),
    example('tool.call'),
    example('egress.allowed'),
    example('egress.blocked'),
    example('egress.blocked', { host: 'evil.test', reason: 'not_allowed' }),
    example('egress.error'),
    example('tool.result'),
    example('agent.completed', { agent: 'anthropic', final_text: 'x'.repeat(2500) }),
    example('check.completed'),
    example('run.completed'),
  ];

  it("names each event as quickstarted's tracer does, with its fields", () => {
    const trace = quickstartedEvents({ slug: 'hello-cli', attempt: 2, events });
    expect(trace.map((e) => e.type)).toEqual(['run_start', 'setup', 'api_retry', 'agent_turn', 'tool_call', 'docs_read', 'docs_redirect_followed', 'docs_read_blocked', 'docs_read_error', 'tool_call', 'egress_allowed', 'egress_blocked', 'egress_blocked', 'egress_error', 'tool_result', 'agent_final', 'success_check', 'run_end']);
    expect(trace[0]).toMatchObject({ type: 'run_start', agent: 'anthropic', backend: 'bwrap', enforced: true, attempt: 2, ts: Date.parse(events[1]?.ts as string) / 1000 });
    expect(trace.find((e) => e.type === 'setup')).toMatchObject({ command: 'git init -q .', exit_code: 0 });
    expect(trace.find((e) => e.type === 'api_retry')).toMatchObject({ turn: 2, attempt: 1, sleep: 0.75 });
    expect(trace.find((e) => e.type === 'agent_turn')).toMatchObject({ turn: 1, model: 'claude-sonnet-4-6', stop_reason: 'tool_use', input_tokens: 1200, cache_write_tokens: 1100, output_tokens: 40 });
    expect(trace.filter((e) => e.type === 'tool_call')).toEqual([expect.objectContaining({ tool: 'read_docs', url: 'https://docs.example.test/quickstart' }), expect.objectContaining({ tool: 'bash', command: 'npm install left-pad' })]);
    expect(trace.find((e) => e.type === 'docs_read')).toMatchObject({ url: 'https://docs.example.test/quickstart', chars: 1432, truncated: false, from_cache: false });
    expect(trace.find((e) => e.type === 'docs_read_blocked')).toMatchObject({ reason: 'robots' });
    expect(trace.find((e) => e.type === 'docs_read_error')).toMatchObject({ error: 'HTTP 404 Not Found: https://docs.example.test/missing' });
    expect(trace.filter((e) => e.type === 'egress_blocked').map((e) => e.reason)).toEqual(['docs_host_requires_read_docs', 'not_allowlisted']);
    expect(trace.find((e) => e.type === 'tool_result')).toMatchObject({ tool: 'bash', exit_code: 0, duration: 1.83, timed_out: false });
    expect((trace.find((e) => e.type === 'agent_final')?.text as string).length).toBe(2000);
    expect(trace.find((e) => e.type === 'success_check')).toMatchObject({ exit_code: 1, passed: false });
    expect(trace.at(-1)).toMatchObject({ type: 'run_end', passed: false });
    // Nothing of our envelope: quickstarted's readers take every other key as the event's data.
    expect(trace.every((e) => typeof e.ts === 'number' && !('run_id' in e) && !('v' in e) && !('stage' in e))).toBe(true);
  });

  // quickstarted's `show` prints one `setup: COMMAND` line per `setup` event, and its run_start's agent
  // as it is (a null came out as "agent None"): one event per setup command, and the sweep's agent.
  it('a failed setup command is one setup event with its output, and run_start names the sweep agent its stream never reached', () => {
    const failing = { ...example('setup.completed'), index: 1, command: 'make deps', exit_code: 2, output: 'make: *** No rule to make target' } as WireEvent;
    const stream = { slug: 't', attempt: 1, events: [example('task.loaded'), example('sandbox.ready'), example('setup.completed'), failing, example('setup.failed'), example('run.completed', { classification: 'harness_error', stop_reason: 'error' })] };
    const trace = quickstartedEvents(stream, { agent: 'replay' });
    expect(trace.filter((e) => e.type === 'setup')).toEqual([
      expect.objectContaining({ command: 'git init -q .', exit_code: 0 }),
      expect.objectContaining({ command: 'make deps', exit_code: 2, output: 'make: *** No rule to make target' }),
    ]);
    expect(trace[0]).toMatchObject({ type: 'run_start', agent: 'replay' });
    // A stream that does name its agent keeps it; a setup.failed with no setup.completed before it still gives its command.
    const own = quickstartedEvents({ slug: 't', attempt: 1, events: [example('task.loaded'), example('agent.started', { agent: 'anthropic' }), example('setup.failed')] }, { agent: 'replay' });
    expect(own[0]).toMatchObject({ agent: 'anthropic' });
    expect(own.filter((e) => e.type === 'setup')).toEqual([expect.objectContaining({ command: 'make deps', exit_code: 2 })]);
    // With no agent anywhere, a string still: quickstarted always writes one.
    expect(quickstartedEvents({ slug: 't', attempt: 1, events: [example('task.loaded'), example('run.failed')] })[0]).toMatchObject({ agent: '' });
    const dir = mkdtempSync(join(tmpdir(), 'qs-trace-'));
    try {
      writeQuickstartedTrace(dir, stream, { agent: 'replay' });
      expect(JSON.parse(readFileSync(join(dir, TRACE_FILE), 'utf8').split('\n')[0] as string)).toMatchObject({ type: 'run_start', agent: 'replay' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ends the trace of a run that failed or was cut, as harness_error; a stream with nothing in it writes no file', () => {
    const failed = quickstartedEvents({ slug: 't', attempt: 1, events: [example('task.loaded'), example('run.failed')] });
    expect(failed.map((e) => e.type)).toEqual(['run_start', 'run_end']);
    expect(failed[1]).toMatchObject({ stop_reason: 'error', passed: false, classification: 'harness_error' });
    const dir = mkdtempSync(join(tmpdir(), 'qs-trace-'));
    try {
      writeQuickstartedTrace(dir, { slug: 't', attempt: 1, events: [example('task.loaded'), example('run.failed')] });
      const text = readFileSync(join(dir, TRACE_FILE), 'utf8');
      // Our own reader of quickstarted traces takes it as one.
      expect(quickstartedLines(parseQuickstartedTrace(text, TRACE_FILE), false).at(-1)).toMatch(/INCONCLUSIVE vite-build: harness_error \(stop reason error\)$/);
      writeQuickstartedTrace(join(dir, 'missing', 'folder'), { slug: 't', attempt: 1, events });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
