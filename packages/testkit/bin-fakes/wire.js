// The fake CLIs at the wire level: with a base URL and no script, they call the model API as the real CLIs do,
// run the shell commands the model asks for, loop until it ends its turn, and print the real JSON output.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

/** Wire mode: no scripted step was given, so the model (a mock server, or a forwarder in front of one) decides. */
function wireMode(kind) {
  if (process.env.QL_FAKE_STEP || process.env.QL_FAKE_SCRIPT) return false;
  if (kind === 'claude') return Boolean(process.env.ANTHROPIC_BASE_URL);
  return Boolean(process.env.CODEX_HOME && fs.existsSync(path.join(process.env.CODEX_HOME, 'config.toml')));
}

const out = (value) => new Promise((resolve) => process.stdout.write(JSON.stringify(value) + '\n', resolve));

/** What `bash -c` printed (stdout and stderr merged) and its exit status, as the CLIs' shell tools report it. */
function runShell(command) {
  const r = spawnSync('bash', ['-c', `exec 2>&1; ${command}`], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { exitCode: r.status === null ? 128 + 9 : r.status, output: (r.stdout || '') + (r.error ? String(r.error.message) : '') };
}

/** Reads an SSE body into its events' data objects. */
async function sseEvents(response) {
  const text = await response.text();
  const events = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
    if (!data || data === '[DONE]') continue;
    try {
      events.push(JSON.parse(data));
    } catch {
      // a broken event: the real CLIs skip it too
    }
  }
  return events;
}

async function claude(flags, prompt) {
  const base = process.env.ANTHROPIC_BASE_URL.replace(/\/+$/, '');
  const key = process.env.ANTHROPIC_API_KEY || '';
  const model = (flags['--model'] || ['claude-sonnet-4-6'])[0];
  const maxTurns = Number((flags['--max-turns'] || ['100'])[0]);
  const format = (flags['--output-format'] || ['text'])[0];
  const session = `wire-session-${process.pid}`;
  const usage = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
  const messages = [{ role: 'user', content: [{ type: 'text', text: prompt }] }];
  const tools = [{ name: 'Bash', description: 'Run a shell command', input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } }];
  const stream = format === 'stream-json';
  if (stream) await out({ type: 'system', subtype: 'init', session_id: session, model, tools: ['Bash'] });
  const started = Date.now();
  let turns = 0;
  const finish = async (fields, code) => {
    const result = { type: 'result', subtype: 'success', is_error: false, duration_ms: Date.now() - started, num_turns: turns, result: '', stop_reason: 'end_turn', terminal_reason: 'completed', session_id: session, total_cost_usd: 0, usage, api_error_status: null, ...fields };
    if (format === 'text') process.stdout.write(`${result.result}\n`);
    else await out(result);
    process.exit(code);
  };
  for (;;) {
    if (turns >= maxTurns) return finish({ subtype: 'error_max_turns', is_error: true, terminal_reason: 'max_turns', stop_reason: null }, 1);
    turns += 1;
    let response;
    // Like claude, a transient status is retried (CLAUDE_CODE_MAX_RETRIES times), at once here.
    const retries = Number(process.env.CLAUDE_CODE_MAX_RETRIES || '2');
    for (let attempt = 0; ; attempt++) {
      try {
        response = await fetch(`${base}/v1/messages?beta=true`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01', 'x-app': 'cli', 'user-agent': 'claude-cli/2.1.332 (fake wire)' },
          body: JSON.stringify({ model, max_tokens: 32000, stream: true, messages, tools, system: [{ type: 'text', text: 'You are Claude Code (fake).' }] }),
        });
      } catch (error) {
        return finish({ is_error: true, result: `API Error: Connection error. ${error.message}`, terminal_reason: 'api_error' }, 1);
      }
      const transient = [408, 409, 429, 529].includes(response.status) || response.status >= 500;
      if (!transient || attempt >= retries) break;
      await response.text();
    }
    if (!response.ok) {
      const body = await response.text();
      if (/prompt is too long/i.test(body)) return finish({ is_error: true, result: 'Prompt is too long', terminal_reason: 'prompt_too_long', api_error_status: response.status }, 1);
      return finish({ is_error: true, result: `API Error: ${response.status} ${body}`, terminal_reason: 'api_error', api_error_status: response.status }, 1);
    }
    const content = [];
    let stop = 'end_turn';
    for (const e of await sseEvents(response)) {
      if (e.type === 'message_start') {
        const u = e.message.usage || {};
        usage.input_tokens += u.input_tokens || 0;
        usage.cache_creation_input_tokens += u.cache_creation_input_tokens || 0;
        usage.cache_read_input_tokens += u.cache_read_input_tokens || 0;
      } else if (e.type === 'content_block_start') content[e.index] = { ...e.content_block, _json: '' };
      else if (e.type === 'content_block_delta') {
        const b = content[e.index];
        if (e.delta.type === 'text_delta') b.text = (b.text || '') + e.delta.text;
        else if (e.delta.type === 'input_json_delta') b._json += e.delta.partial_json;
      } else if (e.type === 'message_delta') {
        stop = e.delta.stop_reason || stop;
        usage.output_tokens += (e.usage && e.usage.output_tokens) || 0;
      }
    }
    const blocks = content.filter(Boolean).map(({ _json, ...b }) => (b.type === 'tool_use' ? { ...b, input: _json ? JSON.parse(_json) : b.input || {} } : b));
    const assistant = { role: 'assistant', content: blocks };
    messages.push(assistant);
    if (stream) await out({ type: 'assistant', message: { ...assistant, model, type: 'message' }, session_id: session });
    const text = blocks.filter((b) => b.type === 'text').map((b) => b.text).join('');
    if (stop === 'refusal') return finish({ is_error: true, result: text, stop_reason: 'refusal', terminal_reason: 'api_error' }, 1);
    if (stop !== 'tool_use') return finish({ result: text, stop_reason: stop }, 0);
    const results = [];
    for (const b of blocks) {
      if (b.type !== 'tool_use') continue;
      if (b.name !== 'Bash' || typeof b.input.command !== 'string') {
        results.push({ type: 'tool_result', tool_use_id: b.id, content: `<tool_use_error>No such tool available: ${b.name}</tool_use_error>`, is_error: true });
        continue;
      }
      const r = runShell(b.input.command);
      results.push({ type: 'tool_result', tool_use_id: b.id, content: r.exitCode === 0 ? r.output : `Exit code ${r.exitCode}\n${r.output}`, is_error: r.exitCode !== 0 });
    }
    const user = { role: 'user', content: results };
    messages.push(user);
    if (stream) await out({ type: 'user', message: user, session_id: session });
  }
}

/** The few keys of codex's config.toml the wire mode reads (the provider's base_url and env_key). */
function codexConfig(file) {
  const text = fs.readFileSync(file, 'utf8');
  const get = (name) => {
    const m = new RegExp(`^${name}\\s*=\\s*"([^"]*)"`, 'm').exec(text);
    return m ? m[1] : undefined;
  };
  return { baseUrl: get('base_url'), envKey: get('env_key'), model: get('model') };
}

async function codex(flags, prompt) {
  const cfg = codexConfig(path.join(process.env.CODEX_HOME, 'config.toml'));
  if (!cfg.baseUrl) {
    process.stderr.write('Error: config.toml has no base_url (fake codex wire mode)\n');
    process.exit(1);
  }
  const key = (cfg.envKey && process.env[cfg.envKey]) || '';
  const model = (flags['--model'] || [cfg.model || 'gpt-5.5-codex'])[0];
  const json = Boolean(flags['--json']);
  const emit = (e) => (json ? out(e) : Promise.resolve());
  await emit({ type: 'thread.started', thread_id: `wire-thread-${process.pid}` });
  await emit({ type: 'turn.started' });
  const input = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: prompt }] }];
  const tools = [{ type: 'function', name: 'exec_command', description: 'Run a shell command', parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } }];
  const usage = { input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0 };
  let item = 0;
  const failed = async (message) => {
    await emit({ type: 'turn.failed', error: { message } });
    if (!json) process.stderr.write(`ERROR: ${message}\n`);
    process.exit(1);
  };
  for (;;) {
    let response;
    try {
      response = await fetch(`${cfg.baseUrl.replace(/\/+$/, '')}/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${key}`, originator: 'codex_exec', 'user-agent': 'codex_exec/0.171.0 (fake wire)' },
        body: JSON.stringify({ model, input, tools, tool_choice: 'auto', parallel_tool_calls: false, store: false, stream: true }),
      });
    } catch (error) {
      return failed(`stream disconnected before completion: ${error.message}`);
    }
    if (!response.ok) {
      const body = await response.text();
      return failed(`unexpected status ${response.status}: ${body}`);
    }
    let done;
    for (const e of await sseEvents(response)) if (e.type === 'response.completed' || e.type === 'response.incomplete' || e.type === 'response.failed') done = e.response;
    if (!done) return failed('stream closed before response.completed');
    const u = done.usage || {};
    usage.input_tokens += u.input_tokens || 0;
    usage.cached_input_tokens += (u.input_tokens_details && u.input_tokens_details.cached_tokens) || 0;
    usage.output_tokens += u.output_tokens || 0;
    usage.reasoning_output_tokens += (u.output_tokens_details && u.output_tokens_details.reasoning_tokens) || 0;
    const calls = [];
    for (const o of done.output || []) {
      input.push(o);
      if (o.type === 'function_call') calls.push(o);
      else if (o.type === 'message') {
        const text = (o.content || []).map((c) => c.text || c.refusal || '').join('');
        await emit({ type: 'item.completed', item: { id: `item_${item++}`, type: 'agent_message', text } });
        if (!json) process.stdout.write(`${text}\n`);
      }
    }
    if (calls.length === 0) {
      await emit({ type: 'turn.completed', usage });
      process.exit(0);
    }
    for (const call of calls) {
      let args = {};
      try {
        args = JSON.parse(call.arguments || '{}');
      } catch {
        // unparseable arguments: the command is empty and fails
      }
      const command = typeof args.cmd === 'string' ? args.cmd : '';
      const id = `item_${item++}`;
      await emit({ type: 'item.started', item: { id, type: 'command_execution', command: `bash -lc ${JSON.stringify(command)}`, aggregated_output: '', exit_code: null, status: 'in_progress' } });
      const r = call.name === 'exec_command' ? runShell(command) : { exitCode: 1, output: `unsupported call: ${call.name}` };
      await emit({ type: 'item.completed', item: { id, type: 'command_execution', command: `bash -lc ${JSON.stringify(command)}`, aggregated_output: r.output, exit_code: r.exitCode, status: r.exitCode === 0 ? 'completed' : 'failed' } });
      input.push({ type: 'function_call_output', call_id: call.call_id, output: `Exit code: ${r.exitCode}\nOutput:\n${r.output}` });
    }
  }
}

module.exports = { wireMode, claude, codex };
