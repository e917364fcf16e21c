import { describe, expect, it } from 'vitest';
import type { WireEvent } from '@quickloop/events';
import { createRenderer } from './render.js';

const ev = (type: string, secs: number, payload: Record<string, unknown> = {}, run_id = 'r1'): WireEvent =>
  ({ v: 1, type, ts: new Date(Date.UTC(2026, 0, 1) + secs * 1000).toISOString(), run_id, stage: 'x', ...payload }) as WireEvent;

const renderAll = (events: WireEvent[], verbose = false): string => {
  const render = createRenderer({ verbose });
  return events.flatMap(render).join('\n');
};

describe('the stream renderer', () => {
  const stream = [
    ev('task.loaded', 0, { task: { name: 'greeter', goal: 'Greet.' }, mode: 'replay+agent' }),
    ev('sandbox.ready', 1, { backend: 'local', enforced: false, workspace: '/w' }),
    ev('tool.call', 2, { tool: 'bash', command: 'echo hi', id: 'c1' }),
    ev('tool.result', 3, { tool: 'bash', exit_code: 0, output: 'hi\n', duration_ms: 10 }),
    ev('tool.call', 4, { tool: 'bash', command: 'make', id: 'c2' }),
    ev('tool.call', 4, { tool: 'bash', command: "cat > a <<'X'\none\ntwo\nX\n", id: 'c3' }),
    ev('tool.result', 5, { tool: 'bash', exit_code: 2, output: `${'x'.repeat(500)}\nmake: *** no rule\n`, duration_ms: 1500 }),
    ev('egress.blocked', 5, { host: 'docs.greeter.test', port: 443, reason: 'docs_host' }),
    ev('egress.allowed', 5, { host: 'registry.test', port: 443, reason: 'registry' }),
    ev('sandbox.denied', 5, { path: '/etc/x', operation: 'write', reason: 'read_only', detected_from: 'stderr', line: 'bash: /etc/x: Read-only file system' }),
    ev('sandbox.denied', 5, { path: '/root/.npmrc', operation: 'read', reason: 'hidden', detected_from: 'stderr', line: 'cat: /root/.npmrc: No such file or directory' }),
    ev('sandbox.limit_hit', 5, { limit: 'memory', value: 4 * 1024 ** 3, unit: 'bytes', enforced_by: 'cgroup_v1', exit_code: 137, detected_from: 'counter', counter: 'memory.oom_control oom_kill', count: 1 }),
    ev('sandbox.limit_hit', 5, { limit: 'processes', value: 1024, unit: 'count', enforced_by: 'rlimit', exit_code: 254, detected_from: 'stderr', line: 'bash: fork: retry: Resource temporarily unavailable' }),
    ev('setup.failed', 6, { detail: 'setup step 1 exited 2: make deps' }),
    ev('agent.completed', 6, { stop_reason: 'command_failed', detail: 'replay step 2 exited 2: make', left_running: ['node server.js'] }),
    ev('custom.unknown', 6),
    ev('docs.read', 7, { url: 'https://d.test/long', resolved_to: 'https://d.test/guide/long', chars: 40_050, original_chars: 90_000, truncated: true, page: 1, pages: 3, from: 'fetch' }),
    ev('docs.changed', 7, { url: 'https://d.test/long', previous_fetched_at: '2025-12-31T09:00:00.000Z' }),
    ev('docs.affordances', 7, { affordances: 'none', probes: [{ kind: 'llms.txt', present: true, bytes: 812 }, { kind: 'md', present: false }] }),
    ev('run.completed', 12.3, { task: 'greeter', classification: 'docs_gap', label: 'FAIL', enforced: false, suspect_page: 'https://d.test/q' }),
  ];

  it('stamps lines from the first event, shows failed output (clipped from the front) and hides the rest', () => {
    const text = renderAll(stream);
    expect(text).toContain('[    0.0s] task greeter (replay+agent)');
    expect(text).toContain('[    1.0s] sandbox local (UNENFORCED) /w');
    expect(text).toContain('[    2.0s] $ echo hi');
    expect(text).not.toContain('| hi');
    expect(text).toContain('[    5.0s] exit 2 (1.5s)');
    expect(text).toContain("[    4.0s] $ cat > a <<'X'  … (3 more lines)");
    expect(text).toContain('    | make: *** no rule');
    expect(text).toContain('read https://d.test/long → https://d.test/guide/long (page 1 of 3, 40050 chars)');
    expect(text).toContain('docs changed https://d.test/long since the cached copy of 2025-12-31T09:00:00.000Z');
    expect(text).toContain('affordances (withheld from the agent): llms.txt yes (812 bytes), md no');
    expect(text).toContain('    | …xxx');
    expect(text).toContain('shell blocked from docs host docs.greeter.test:443 (use read_docs)');
    expect(text).toContain('DENIED write /etc/x (read-only outside the workspace)');
    expect(text).toContain('DENIED read /root/.npmrc (hidden by the sandbox)');
    expect(text).toContain('LIMIT memory 4.0 GiB (cgroup_v1): memory.oom_control oom_kill rose by 1');
    expect(text).toContain('LIMIT processes 1024 (rlimit): bash: fork: retry: Resource temporarily unavailable');
    expect(text).not.toContain('registry.test');
    expect(text).not.toContain('custom.unknown');
    expect(text).toContain('[    6.0s] setup failed: setup step 1 exited 2: make deps');
    expect(text).toContain('[    6.0s] killed at the end of the stage, still running: node server.js');
    expect(text).toContain('[   12.3s] FAIL greeter: docs_gap (UNENFORCED)');
    expect(text).toContain('where to look first: https://d.test/q');
  });

  it('shows everything with --verbose', () => {
    const text = renderAll(stream, true);
    expect(text).toContain('goal: Greet.');
    expect(text).toContain('    | hi');
    expect(text).toContain("$ cat > a <<'X'\n      one\n      two\n      X");
    expect(text).toContain('egress registry.test:443 allowed (registry)');
    expect(text).toContain('custom.unknown');
  });

  it('separates runs with a blank line', () => {
    const text = renderAll([ev('task.loaded', 0, { task: { name: 'a' }, mode: 'agent-only' }, 'a'), ev('task.loaded', 1, { task: { name: 'b' }, mode: 'agent-only' }, 'b')]);
    expect(text.split('\n')).toHaveLength(3);
    expect(text.split('\n')[1]).toBe('');
  });
});

describe('the renderer on a hostile stream', () => {
  // Anything a terminal acts on: C0 but newline and tab, DEL, C1, bidi and zero-width format characters.
  const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b\u2028\u2029]/;
  const ev = (type: string, payload: Record<string, unknown>): WireEvent =>
    ({ v: 1, type, ts: '2026-01-01T00:00:00.000Z', run_id: 'r1\x1b[2J', stage: 'x', ...payload }) as WireEvent;
  const evil = '\x1b]0;owned\x07\x1b[2J\rok\u202egnp.exe\u009b31m\u2066';
  const stream = [
    ev('task.loaded', { task: { name: `t${evil}`, goal: `g${evil}` }, mode: 'replay' }),
    ev('sandbox.ready', { backend: 'local', enforced: false, workspace: `/w${evil}` }),
    ev('setup.started', { id: 's1', command: `make${evil}` }),
    ev('setup.completed', { exit_code: 1, output: `line one${evil}\nline two\n` }),
    ev('tool.call', { tool: 'bash', command: `printf${evil}\nsecond line` }),
    ev('tool.call', { tool: 'read_docs', url: `https://d.test/${evil}` }),
    ev('tool.result', { tool: 'bash', exit_code: 2, output: `out${evil}\n` }),
    ev('docs.read', { url: `https://d.test/${evil}`, chars: 1 }),
    ev('docs.error', { url: `https://d.test/${evil}`, error: `e${evil}` }),
    ev('docs.read', { url: `https://d.test/a`, resolved_to: `https://d.test/${evil}`, chars: 1, page: 1, pages: 2, truncated: true }),
    ev('docs.changed', { url: `https://d.test/${evil}`, previous_fetched_at: `t${evil}` }),
    ev('docs.affordances', { affordances: 'none', probes: [{ kind: `k${evil}`, present: true, bytes: `b${evil}` }] }),
    ev('egress.blocked', { host: `evil.test\n[    1.0s] PASS forged`, port: 443, reason: `r${evil}` }),
    ev('egress.allowed', { host: `h${evil}`, port: 443, reason: `r${evil}` }),
    ev('egress.error', { host: `h${evil}`, error: `e${evil}` }),
    ev('sandbox.denied', { path: `/etc/${evil}\nforged`, operation: `write${evil}`, reason: 'read_only' }),
    ev('agent.completed', { stop_reason: `s${evil}`, detail: `d${evil}`, left_running: [`node ${evil}`, 'x\ny'] }),
    ev('check.completed', { passed: false, exit_code: 1, output: `c${evil}\n`, reason: `why${evil}\nPASS` }),
    ev('custom.unknown', {}),
    ev('run.completed', { task: `t${evil}`, classification: `c${evil}`, label: `L${evil}`, suspect_page: `p${evil}`, workspace_kept: `/k${evil}` }),
    ev('run.failed', { failed_stage: `s${evil}`, error: `e${evil}` }),
  ];

  it('shows every field with its controls made visible, and no field forges a line', () => {
    for (const verbose of [false, true]) {
      const render = createRenderer({ verbose, style: (k, t) => `<${k}>${t}</${k}>` });
      const out = stream.flatMap(render).join('\n').replace(/<\/?[a-z]+>/g, '');
      expect(out).not.toMatch(RAW);
      expect(out).toContain('\\x1b]0;owned\\x07\\x1b[2J\\rok\\u202egnp.exe\\x9b31m\\u2066');
      expect(out).toContain('BLOCKED evil.test\\n[    1.0s] PASS forged:443');
      expect(out).toContain('/etc/\\x1b]0;owned');
      // Blocks keep their lines: the output and a multi-line command with --verbose.
      expect(out).toMatch(/\n {4}\| line two\n/);
      if (verbose) expect(out).toMatch(/\n {6}second line\n/);
      for (const line of out.split('\n')) expect(line).not.toMatch(/^\[ *[0-9.]+s\] PASS forged/);
    }
  });

  it('renders a model run: numbered turns, their tool calls folded under them, tokens and cost per turn and in all', () => {
    const at = (type: string, secs: number, payload: Record<string, unknown>): WireEvent =>
      ({ v: 1, type, ts: new Date(Date.UTC(2026, 0, 1) + secs * 1000).toISOString(), run_id: 'r1', stage: 'x', ...payload }) as WireEvent;
    const usage = (i: number, o: number, cr = 0) => ({ input_tokens: i, cache_read_tokens: cr, cache_write_tokens: 0, output_tokens: o, reasoning_tokens: 0 });
    const text = renderAll([
      at('agent.started', 0, { agent: 'anthropic', model: 'claude-sonnet-4-6' }),
      at('agent.retry', 1, { turn: 1, attempt: 1, status: 429, error_kind: 'infra', error: 'rate limited', wait_ms: 1200 }),
      at('agent.turn', 2, { id: 't1', turn: 1, model: 'claude-sonnet-4-6', stop: 'tool_use', blocks: [{ type: 'text', text: 'Reading the install page.' }, { type: 'tool_call', id: 'c1', name: 'read_docs', input: {} }], usage: usage(1200, 56), usd: 0.00444, duration_ms: 2100, request_id: null, attempts: 2 }),
      at('tool.call', 2, { id: 'k1', parent_id: 't1', tool: 'read_docs', url: 'https://d.test/install' }),
      at('docs.read', 2, { id: 'k2', parent_id: 'k1', url: 'https://d.test/install', chars: 900, from: 'fetch' }),
      at('agent.turn', 3, { id: 't2', turn: 2, model: 'claude-sonnet-4-6', stop: 'tool_use', blocks: [], usage: usage(30, 9, 1100), usd: null, duration_ms: 900, request_id: 'r', attempts: 1 }),
      at('tool.call', 3, { id: 'k3', parent_id: 't2', tool: 'bash', command: 'npm test' }),
      at('tool.result', 4, { id: 'k4', parent_id: 'k3', tool: 'bash', exit_code: 1, output: 'boom\n', duration_ms: 100 }),
      at('tool.call', 4, { id: 'k5', parent_id: 't2', tool: 'fly', input: { to: 'moon' } }),
      at('tool.error', 4, { id: 'k6', parent_id: 'k5', tool: 'fly', error: "unknown tool 'fly'" }),
      at('agent.completed', 5, { stop_reason: 'completed', detail: 'the model finished after 2 turns', commands: 1, turns: 2, usage: usage(1230, 65, 1100), usd: null, final_text: 'It works.\nThe docs miss a step.' }),
    ]);
    const lines = text.split('\n').map((l) => l.replace(/^\[ *[0-9.]+s\] /, ''));
    expect(lines).toEqual([
      'agent anthropic (claude-sonnet-4-6)',
      'retry turn 1 after attempt 1: HTTP 429, waiting 1.2s (rate limited)',
      'turn 1 claude-sonnet-4-6: 1,200 in, 56 out, $0.0044, 2.1s, 2 attempts',
      '    Reading the install page.',
      '    read_docs https://d.test/install',
      '    read https://d.test/install (900 chars)',
      'turn 2 claude-sonnet-4-6: 30 in + 1,100 cache read, 9 out, cost unknown, 0.9s',
      '    $ npm test',
      '    exit 1 (0.1s)',
      '        | boom',
      "    fly {\"to\":\"moon\"}",
      "    tool error: unknown tool 'fly'",
      'agent stopped: completed — the model finished after 2 turns',
      'model total: 2 turns, 1,230 in + 1,100 cache read, 65 out, cost unknown (a model not in the price book)',
      'final answer:',
      '    It works.',
      '    The docs miss a step.',
    ]);
  });
});
