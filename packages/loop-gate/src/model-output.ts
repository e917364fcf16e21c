// Reads a model CLI's answer and token usage from its JSON output mode (claude -p, codex exec --json, gemini -o json).
export interface TokenUsage {
  input_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
}

export interface ModelOutput {
  text: string;
  /** null when the CLI ran in plain text mode (or its JSON could not be read): usage unknown. */
  usage: TokenUsage | null;
  usd: number | null;
  /** The CLI said the call failed inside its JSON (claude is_error, codex turn.failed, gemini error). */
  error?: string;
  /** Set when a JSON mode was asked for but the output was not that JSON; the raw text is used. */
  warning?: string;
}

type Mode = 'claude' | 'codex' | 'gemini' | 'text';

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Which output mode an invoke argv asked for; decided by its flags, so any CLI that mimics one is read alike. */
export function outputMode(argv: readonly string[]): Mode {
  const prog = (argv[0] ?? '').split('/').pop() ?? '';
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i] as string;
    const next = argv[i + 1];
    const value = a.includes('=') ? a.slice(a.indexOf('=') + 1) : next;
    const flag = a.includes('=') ? a.slice(0, a.indexOf('=')) : a;
    if ((flag === '--output-format' || flag === '-o') && (value === 'json' || value === 'stream-json')) {
      return prog.includes('gemini') || flag === '-o' ? 'gemini' : 'claude';
    }
    if (a === '--json') return 'codex';
  }
  return 'text';
}

export function parseModelOutput(argv: readonly string[], stdout: string): ModelOutput {
  const mode = outputMode(argv);
  if (mode === 'text') return { text: stdout.trim(), usage: null, usd: null };
  try {
    const parsed = mode === 'claude' ? fromClaude(stdout) : mode === 'codex' ? fromCodex(stdout) : fromGemini(stdout);
    if (parsed) return parsed;
  } catch {
    /* fall through to the raw text */
  }
  return { text: stdout.trim(), usage: null, usd: null, warning: `${mode} JSON output expected but not found; used the raw output and counted no usage` };
}

function jsonLines(stdout: string): unknown[] {
  return stdout
    .split(/\r?\n/)
    .filter((l) => l.trim().startsWith('{'))
    .map((l) => JSON.parse(l) as unknown);
}

function fromClaude(stdout: string): ModelOutput | undefined {
  const trimmed = stdout.trim();
  // json mode is one object; stream-json ends with the same `result` object on its own line.
  const candidates = trimmed.startsWith('{') && !trimmed.includes('\n{') ? [JSON.parse(trimmed) as unknown] : jsonLines(trimmed);
  const result = [...candidates].reverse().find((o) => isObj(o) && o.type === 'result');
  if (!isObj(result)) return undefined;
  const u = isObj(result.usage) ? result.usage : {};
  const out: ModelOutput = {
    text: typeof result.result === 'string' ? result.result.trim() : '',
    usage: {
      input_tokens: num(u.input_tokens),
      cache_read_tokens: num(u.cache_read_input_tokens),
      cache_write_tokens: num(u.cache_creation_input_tokens),
      output_tokens: num(u.output_tokens),
      reasoning_tokens: 0,
    },
    usd: typeof result.total_cost_usd === 'number' ? result.total_cost_usd : null,
  };
  if (result.is_error === true) out.error = `claude reported an error: ${String(result.result ?? result.subtype ?? 'unknown')}`;
  return out;
}

function fromCodex(stdout: string): ModelOutput | undefined {
  const events = jsonLines(stdout).filter(isObj);
  if (events.length === 0) return undefined;
  let text = '';
  const usage: TokenUsage = { input_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, output_tokens: 0, reasoning_tokens: 0 };
  let sawUsage = false;
  let error: string | undefined;
  for (const e of events) {
    if (e.type === 'item.completed' && isObj(e.item) && e.item.type === 'agent_message' && typeof e.item.text === 'string') text = e.item.text;
    if (e.type === 'turn.completed' && isObj(e.usage)) {
      sawUsage = true;
      // codex counts cached input inside input_tokens; keep the counters disjoint.
      const cached = num(e.usage.cached_input_tokens);
      usage.input_tokens += Math.max(0, num(e.usage.input_tokens) - cached);
      usage.cache_read_tokens += cached;
      usage.cache_write_tokens += num(e.usage.cache_write_input_tokens);
      usage.output_tokens += num(e.usage.output_tokens);
      usage.reasoning_tokens += num(e.usage.reasoning_output_tokens);
    }
    if (e.type === 'turn.failed') error = `codex turn failed: ${JSON.stringify(e.error ?? {})}`;
  }
  const out: ModelOutput = { text: text.trim(), usage: sawUsage ? usage : null, usd: null };
  if (error) out.error = error;
  return out;
}

function fromGemini(stdout: string): ModelOutput | undefined {
  const obj = JSON.parse(stdout.trim()) as unknown;
  if (!isObj(obj)) return undefined;
  if (isObj(obj.error)) return { text: '', usage: null, usd: null, error: `gemini reported an error: ${String(obj.error.message ?? '')}` };
  if (typeof obj.response !== 'string') return undefined;
  const usage: TokenUsage = { input_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, output_tokens: 0, reasoning_tokens: 0 };
  let sawUsage = false;
  const models = isObj(obj.stats) && isObj(obj.stats.models) ? obj.stats.models : {};
  for (const m of Object.values(models)) {
    if (!isObj(m) || !isObj(m.tokens)) continue;
    sawUsage = true;
    const t = m.tokens;
    const cached = num(t.cached);
    usage.input_tokens += Math.max(0, num(t.prompt ?? t.input) - cached);
    usage.cache_read_tokens += cached;
    usage.output_tokens += num(t.candidates);
    usage.reasoning_tokens += num(t.thoughts);
  }
  return { text: obj.response.trim(), usage: sawUsage ? usage : null, usd: null };
}
