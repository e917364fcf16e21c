// LOOP.md and its ASCII flow preview, in the layout Looper's renderer uses (same sections, same box).
import { pyJsonDumps } from './py-json.js';
import { get, isDict, pyStr, pyStrip, truthy, type PyDict, type PyValue } from './py.js';

const BOX_WIDTH = 30;

/** What a gate without max_revisions gets at run time in quickloop (loop-gate agrees). */
export const DEFAULT_MAX_REVISIONS = 1;
const INDENT = '               ';

/**
 * Whose text a render follows. `quickloop` (the directory form of `loop compile`) shows the revision cap
 * the runner applies; `looper` is Looper's renderer byte for byte, for the files a Looper command line
 * (`--render`, `--session-prompt`, `loop session-prompt`) asks for by name.
 */
export type RenderFlavour = 'quickloop' | 'looper';

export interface RenderOptions {
  flavour?: RenderFlavour;
}

/** `d.get(key, fallback)` on a value that may not be a dict (a renderer must never throw). */
function pick(value: PyValue | undefined, key: string, fallback?: PyValue): PyValue | undefined {
  if (!isDict(value)) return fallback;
  const found = get(value, key);
  return found === undefined ? fallback : found;
}

function dict(value: PyValue | undefined): PyDict {
  return isDict(value) ? value : {};
}

function list(value: PyValue | undefined): PyValue[] {
  return Array.isArray(value) ? value : [];
}

/** Text longer than the box is cut to width-1 characters plus `~`. */
function clip(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, width - 1).join('')}~`;
}

function box(...rows: string[]): string[] {
  const border = `+${'-'.repeat(BOX_WIDTH + 2)}+`;
  return [border, ...rows.map((row) => `| ${clip(row, BOX_WIDTH).padEnd(BOX_WIDTH)} |`), border];
}

/** The six-box diagram: goal, plan, plan gate, delivery, delivery gate, final output; then the stops. */
export function renderAsciiDiagram(resolved: PyDict, options: RenderOptions = {}): string {
  const revisionDefault = options.flavour === 'looper' ? 0 : DEFAULT_MAX_REVISIONS;
  const gates = pick(resolved, 'gates', {});
  const control = pick(resolved, 'loop_control', {});
  const observability = pick(resolved, 'observability', {});
  const planGate = pick(gates, 'plan_gate', {});
  const deliveryGate = pick(gates, 'delivery_gate', {});
  const noProgress = pick(control, 'no_progress', {});
  const budget = pick(control, 'budget', {});
  const bits: string[] = [];
  const wall = pick(budget, 'wall_clock_min');
  const usd = pick(budget, 'usd');
  const tokens = pick(budget, 'tokens');
  if (wall !== undefined && wall !== null) bits.push(`${pyStr(wall)}m`);
  if (usd !== undefined && usd !== null) bits.push(`$${pyStr(usd)}`);
  if (tokens !== undefined && tokens !== null) bits.push(`${pyStr(tokens)} tokens`);
  const budgetText = bits.join(', ') || 'configured caps';

  const lines: string[] = [];
  const arrow = (): void => {
    lines.push(`${INDENT}|`, `${INDENT}v`);
  };
  const gateExit = (gate: PyValue | undefined, step: number): void => {
    // An absent max_revisions is shown as the 1 quickloop's runner applies; Looper shows (and runs) 0,
    // although its compiler validates against a default of 1.
    lines.push(`${INDENT}| needs work -> revise <= ${pyStr(pick(gate, 'max_revisions', revisionDefault))} -> step ${step}`, `${INDENT}| pass`, `${INDENT}v`);
  };
  lines.push(...box('1. Goal + context', 'read sources'));
  arrow();
  lines.push(...box('2. Draft plan.md', `state -> ${pyStr(pick(observability, 'state_file', 'state.json'))}`));
  arrow();
  lines.push(...box('3. Plan gate', `verdict: ${pyStr(pick(planGate, 'verdict_source', 'human'))}`));
  gateExit(planGate, 2);
  lines.push(...box('4. Write delivery-N.md', `log -> ${pyStr(pick(observability, 'run_log', 'run-log.md'))}`));
  arrow();
  lines.push(...box('5. Delivery gate', `verdict: ${pyStr(pick(deliveryGate, 'verdict_source', 'human'))}`));
  gateExit(deliveryGate, 4);
  lines.push(...box('6. Final output', 'all gates clean'));
  lines.push(
    '',
    `Stops: pass gates | max ${pyStr(pick(control, 'max_iterations'))} iterations | no progress x${pyStr(pick(noProgress, 'max_stalled_iterations', 2))} | budget ${budgetText}`,
  );
  return lines.join('\n');
}

/** `x.strip()` for the free-text fields that open each section; a null (where Looper crashes) is empty. */
function text(value: PyValue | undefined): string {
  return pyStrip(typeof value === 'string' ? value : value === undefined || value === null ? '' : pyStr(value));
}

/** LOOP.md: the human summary of a resolved spec. */
export function renderLoopMd(resolved: PyDict, options: RenderOptions = {}): string {
  const meta = pick(resolved, 'meta', {});
  const goal = pick(resolved, 'goal', {});
  const gates = pick(resolved, 'gates', {});
  const control = pick(resolved, 'loop_control', {});
  const execution = pick(resolved, 'execution', {});
  const observability = pick(resolved, 'observability', {});
  const name = pick(meta, 'name');
  const title = truthy(name) ? pyStr(name) : 'Looper Generated Loop';

  const lines = [`# ${title}`, '', text(pick(meta, 'description', '')), '', '## Goal', '', text(pick(goal, 'statement', '')), ''];
  lines.push('## Definition of Done', '', text(pick(goal, 'definition_of_done', '')), '', '## Verification', '');
  for (const item of list(pick(goal, 'verification', []))) {
    lines.push(`- \`${pyStr(pick(item, 'id'))}\` (${pyStr(pick(item, 'type'))})`);
  }
  lines.push('', '## Council', '');
  const council = list(pick(resolved, 'council', []));
  if (council.length > 0) {
    for (const member of council) {
      lines.push(`- \`${pyStr(pick(member, 'id'))}\`: ${pyStr(pick(member, 'role'))} via ${pyStr(pick(member, 'cli'))} (${pyStr(pick(member, 'model', 'default'))})`);
    }
  } else {
    lines.push('- No council members configured.');
  }
  lines.push(
    '',
    '## Gates',
    '',
    `- Plan gate: ${pyStr(pick(pick(gates, 'plan_gate', {}), 'verdict_policy'))}`,
    `- Delivery gate: ${pyStr(pick(pick(gates, 'delivery_gate', {}), 'verdict_policy'))}`,
    '',
    '## Loop Control',
    '',
    `- Max iterations: ${pyStr(pick(control, 'max_iterations'))}`,
    `- Budget: \`${pyJsonDumps(dict(pick(control, 'budget', {})), { sortKeys: true })}\``,
    `- No-progress: \`${pyJsonDumps(pick(control, 'no_progress', {}), { sortKeys: true })}\``,
    '',
    '## Execution Boundary',
    '',
    `- Mode: \`${pyStr(pick(execution, 'mode', 'in_session'))}\``,
    `- Isolation: \`${pyStr(pick(execution, 'isolation', 'current_workspace'))}\``,
    `- Side effects: \`${pyJsonDumps(pick(execution, 'side_effects', {}), { sortKeys: true })}\``,
    '',
    '## Observability',
    '',
    `- State file: \`${pyStr(pick(observability, 'state_file', 'state.json'))}\``,
    `- Run log: \`${pyStr(pick(observability, 'run_log', 'run-log.md'))}\``,
    `- Checkpoint granularity: \`${pyStr(pick(observability, 'checkpoint_granularity', 'gate'))}\``,
    '',
    '## Flow Preview',
    '',
    '```text',
    renderAsciiDiagram(resolved, options),
    '```',
    '',
  );
  return lines.join('\n');
}

export { pick, list, dict, text };
