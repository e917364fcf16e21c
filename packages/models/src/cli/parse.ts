// Reads each model CLI's output mode into text, usage and cost, or a classified failure.
import { usage, type ErrorKind, type Usage } from '../types.js';
import { classifyStatus, classifyText } from './classify.js';

export type OutputMode = 'text' | 'claude-json' | 'codex-json' | 'gemini-json';

export interface ParsedOutput {
  text: string;
  usage?: Usage;
  costUsd?: number;
  errorKind?: ErrorKind;
  transient?: boolean;
  /** One line saying what went wrong, for logs and state files. */
  message?: string;
}

const snippet = (s: string) => JSON.stringify(s.length > 120 ? `${s.slice(0, 120)}…` : s);

function harness(message: string): ParsedOutput {
  return { text: '', errorKind: 'harness', transient: false, message };
}

function failure(text: string, message: string, classifiedFrom: string, status?: number): ParsedOutput {
  const fromText = classifyText(classifiedFrom);
  // A 400 that says "prompt is too long" is an overflow, not a bad request.
  const c = fromText.errorKind === 'context_overflow' || status === undefined || status === null ? fromText : classifyStatus(status);
  return { text, errorKind: c.errorKind, transient: c.transient, message };
}

function parseJsonLines(stdout: string): { values: any[]; bad?: { line: number; text: string } } {
  const values: any[] = [];
  const lines = stdout.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    try {
      values.push(JSON.parse(line));
    } catch {
      return { values, bad: { line: i + 1, text: line } };
    }
  }
  return { values };
}

/** `claude -p --output-format json` (one object) or `stream-json` (JSONL ending with the same `result` object). */
function parseClaude(stdout: string, stderr: string, exitCode: number): ParsedOutput {
  const trimmed = stdout.trim();
  if (!trimmed) {
    if (exitCode !== 0) return failure('', `claude exited ${exitCode} without a result: ${snippet(stderr.trim())}`, stderr);
    return harness('claude -p printed nothing on stdout (expected a JSON result)');
  }
  let result: any;
  try {
    result = JSON.parse(trimmed);
  } catch {
    const { values, bad } = parseJsonLines(trimmed);
    if (bad) return exitCode !== 0 ? failure(stdout, `claude exited ${exitCode}: ${snippet(trimmed)}`, `${stdout}\n${stderr}`) : harness(`claude output line ${bad.line} is not JSON: ${snippet(bad.text)}`);
    result = values.reverse().find((v) => v?.type === 'result');
  }
  if (!result || typeof result !== 'object' || result.type !== 'result') return harness(`claude output has no "type":"result" object: ${snippet(trimmed)}`);
  const u = result.usage ?? {};
  const parsed: ParsedOutput = {
    text: typeof result.result === 'string' ? result.result : '',
    usage: usage({
      input: u.input_tokens,
      cache_read: u.cache_read_input_tokens,
      cache_write: u.cache_creation_input_tokens,
      output: u.output_tokens,
      reasoning: u.output_tokens_details?.reasoning_tokens,
    }),
  };
  if (typeof result.total_cost_usd === 'number') parsed.costUsd = result.total_cost_usd;
  // `subtype` stays "success" even on API errors; is_error, the statuses and the exit code tell the truth.
  if (result.is_error === true || exitCode !== 0) {
    const what = `${result.terminal_reason ?? 'error'}${result.api_error_status ? ` ${result.api_error_status}` : ''}`;
    const message = `claude reported ${what}: ${snippet(parsed.text)}`;
    if (result.stop_reason === 'refusal') return { ...parsed, errorKind: 'refusal', transient: false, message: `claude: the model refused: ${snippet(parsed.text)}` };
    if (result.terminal_reason === 'prompt_too_long') return { ...parsed, errorKind: 'context_overflow', transient: false, message };
    const f = failure(parsed.text, message, `${parsed.text}\n${stderr}`, typeof result.api_error_status === 'number' ? result.api_error_status : undefined);
    return { ...parsed, ...f, text: parsed.text };
  }
  if (result.stop_reason === 'refusal') return { ...parsed, errorKind: 'refusal', transient: false, message: 'claude: the model refused' };
  return parsed;
}

/** `codex exec --json`: JSONL events; the answer is the last agent_message, usage sums every turn.completed. */
function parseCodex(stdout: string, stderr: string, exitCode: number): ParsedOutput {
  const { values, bad } = parseJsonLines(stdout);
  if (bad) {
    if (exitCode !== 0) return failure('', `codex exited ${exitCode}: ${snippet(stderr.trim() || bad.text)}`, `${stderr}\n${stdout}`);
    return harness(`codex output line ${bad.line} is not JSON: ${snippet(bad.text)}`);
  }
  let text: string | undefined;
  let total: Usage | undefined;
  let failed: string | undefined;
  for (const event of values) {
    if (event?.type === 'item.completed' && event.item?.type === 'agent_message' && typeof event.item.text === 'string') text = event.item.text;
    else if (event?.type === 'turn.completed' && event.usage) {
      const u = event.usage;
      const cacheRead = u.cached_input_tokens ?? 0;
      const cacheWrite = u.cache_write_input_tokens ?? 0;
      const turn = usage({ input: (u.input_tokens ?? 0) - cacheRead - cacheWrite, cache_read: cacheRead, cache_write: cacheWrite, output: u.output_tokens, reasoning: u.reasoning_output_tokens });
      total = total ? usage({ input: total.input + turn.input, cache_read: total.cache_read + turn.cache_read, cache_write: total.cache_write + turn.cache_write, output: total.output + turn.output, reasoning: total.reasoning + turn.reasoning }) : turn;
    } else if (event?.type === 'turn.failed') failed = String(event.error?.message ?? 'turn failed');
    // `error` items and events are often warnings (an unknown model's metadata); only turn.failed is a failure.
  }
  const base: ParsedOutput = { text: text ?? '' };
  if (total) base.usage = total;
  if (failed !== undefined) return { ...base, ...failure(base.text, `codex turn failed: ${snippet(failed)}`, failed) };
  if (exitCode !== 0) return { ...base, ...failure(base.text, `codex exited ${exitCode}: ${snippet(stderr.trim())}`, stderr) };
  if (text === undefined) return harness('codex --json output has no agent_message item');
  return base;
}

/** The last JSON object in a stream of log lines: gemini ends stderr with a pretty-printed one after warnings and a stack. */
function lastJsonObject(text: string): any {
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i]!.startsWith('{')) continue;
    try {
      return JSON.parse(lines.slice(i).join('\n'));
    } catch {
      // Not where the object starts; keep looking further up.
    }
  }
  return undefined;
}

/** `gemini -o json`: one object with `response` and per-model `stats`; errors come as JSON on stderr. */
function parseGemini(stdout: string, stderr: string, exitCode: number): ParsedOutput {
  const trimmed = stdout.trim();
  if (!trimmed) {
    const err = lastJsonObject(stderr);
    const message = err?.error?.message ? String(err.error.message) : stderr.trim();
    if (exitCode !== 0) return failure('', `gemini exited ${exitCode}: ${snippet(message)}`, message, typeof err?.error?.code === 'number' ? err.error.code : undefined);
    return harness('gemini -o json printed nothing on stdout');
  }
  let doc: any;
  try {
    doc = JSON.parse(trimmed);
  } catch {
    return exitCode !== 0 ? failure('', `gemini exited ${exitCode}: ${snippet(trimmed)}`, `${stdout}\n${stderr}`) : harness(`gemini output is not JSON: ${snippet(trimmed)}`);
  }
  if (!doc || typeof doc !== 'object') return harness(`gemini output is not a JSON object: ${snippet(trimmed)}`);
  const base: ParsedOutput = { text: typeof doc.response === 'string' ? doc.response : '' };
  const models = doc.stats?.models;
  if (models && typeof models === 'object') {
    let input = 0;
    let cached = 0;
    let output = 0;
    let thoughts = 0;
    for (const m of Object.values<any>(models)) {
      const t = m?.tokens ?? {};
      // Tool-use prompt tokens are billed as input but are not part of `prompt` (total = prompt + candidates + thoughts + tool).
      input += (t.prompt ?? 0) - (t.cached ?? 0) + (t.tool ?? 0);
      cached += t.cached ?? 0;
      output += (t.candidates ?? 0) + (t.thoughts ?? 0);
      thoughts += t.thoughts ?? 0;
    }
    base.usage = usage({ input, cache_read: cached, output, reasoning: thoughts });
  }
  if (doc.error) return { ...base, ...failure(base.text, `gemini reported an error: ${snippet(String(doc.error.message ?? ''))}`, String(doc.error.message ?? ''), doc.error.code) };
  if (exitCode !== 0) return { ...base, ...failure(base.text, `gemini exited ${exitCode}: ${snippet(stderr.trim())}`, stderr) };
  if (typeof doc.response !== 'string') return harness('gemini -o json output has no "response" string');
  return base;
}

export function parseCliOutput(mode: OutputMode, stdout: string, stderr: string, exitCode: number): ParsedOutput {
  switch (mode) {
    case 'claude-json':
      return parseClaude(stdout, stderr, exitCode);
    case 'codex-json':
      return parseCodex(stdout, stderr, exitCode);
    case 'gemini-json':
      return parseGemini(stdout, stderr, exitCode);
    case 'text': {
      if (exitCode === 0) return { text: stdout };
      // Text-mode CLIs print API errors on stdout (claude: "API Error: 529 …"), so read both streams.
      const said = (stderr.trim() || stdout.trim()).split('\n').at(-1) ?? '';
      return { text: stdout, ...classifyText(`${stderr}\n${stdout}`), message: said ? `exited ${exitCode}: ${snippet(said)}` : `exited ${exitCode} with no output` };
    }
  }
}
