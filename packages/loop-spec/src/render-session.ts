// RUN_IN_SESSION.md: a prompt that lets the current LLM session operate the loop by hand.
//
// The sections follow Looper's (an operator who knows one knows the other). The quickloop prose points
// at `loop run` as the strict, unattended alternative; the looper flavour is Looper's text verbatim.
import { pyJsonDumps } from './py-json.js';
import { pyIter, pyStr, truthy, type PyDict, type PyValue } from './py.js';
import { DEFAULT_MAX_REVISIONS, list, pick, text, type RenderOptions } from './render-loop.js';

/** The free text around the data lines; the data lines are the same in both flavours. */
interface Prose {
  /** From the preamble to the last numbered step, without the title. */
  opening: string[];
  boundary: string;
  observability: string;
  startNow: string;
}

// Looper's words, verbatim: a Looper command line must get Looper's file.
const LOOPER_PROSE: Prose = {
  opening: [
    'Use this prompt when the user wants to run the Looper-designed loop in the current LLM session.',
    'This is the default/easy execution path. The Python runner is the advanced path for running later or outside the session.',
    '',
    '## Operator Instructions',
    '',
    'You are executing a Looper-designed loop in this current session.',
    'Follow the resolved spec below, write handoff files into the workspace, and enforce the caps manually.',
    'Do not use `run-loop.py` unless the user explicitly asks for the advanced external runner.',
    '',
    '1. Create the workspace directory if it does not exist.',
    '2. Read the context sources before drafting the plan.',
    '3. Draft `plan.md` in the workspace.',
    '4. Run the plan gate. Apply programmatic checks when available. For judge criteria, use the configured judge only after consent for any non-local egress; otherwise ask the user to approve a human/current-session substitute.',
    '5. Revise until the gate passes or `max_revisions` is reached.',
    '6. Produce `delivery-N.md` in the workspace.',
    '7. Run the delivery gate after each delivery.',
    '8. Stop when all delivery criteria pass, a cap is reached, or the user stops the loop.',
    '9. Keep `state.json` current with status, iteration, last gate, consent, and blockers.',
    '10. Append a compact entry to `run-log.md` after every context read, model call, check, gate verdict, revision, blocker, and stop decision.',
    '11. Compare each blocker against the previous blocker. If the same blocker repeats for the configured no-progress window, stop or ask for the configured human checkpoint instead of revising again.',
    '12. Treat token and USD budgets as operator limits in this session: if exact accounting is unavailable, stop and ask before continuing when the loop appears likely to exceed them.',
  ],
  boundary:
    'If the loop needs scheduled runs, child-agent lifecycle management, concurrency control, or restart-safe step retries, stop and tell the user this Looper spec should be handed to a durable orchestrator.',
  observability: 'Use `state.json` for the latest resumable status and `run-log.md` for the append-only history of what happened.',
  startNow: 'If the user asked to run now, begin at step 1 under Operator Instructions and keep going until a stop condition is reached.',
};

function quickloopProse(stateFile: string, runLog: string): Prose {
  return {
    opening: [
      'Hand this file to the assistant in your current session when you want it to operate the loop itself.',
      'It is the quickest way to run a loop. For an unattended run with enforced caps, consent prompts and redaction, use `loop run` instead.',
      '',
      '## Operator Instructions',
      '',
      'You are the operator of the loop described below, working in this session.',
      'Keep every artifact in the workspace and hold yourself to the caps: nothing else enforces them here.',
      'Do not use `loop run` or any other external runner unless the user asks for one.',
      '',
      '1. Make sure the workspace directory exists.',
      '2. Read every context source listed below before you plan anything.',
      '3. Write the plan to `plan.md` in the workspace.',
      '4. Hold the plan gate: run the programmatic checks first. Send work to a configured judge only once the user has consented to that send when the judge is not local; otherwise ask the user to stand in, or to approve you judging in this session.',
      '5. Revise the plan until the gate passes or its `max_revisions` is used up.',
      '6. Write each delivery as `delivery-N.md` in the workspace, N counting from 1.',
      '7. Hold the delivery gate on every delivery.',
      '8. Stop once the delivery criteria all pass, a cap is hit, or the user calls a halt.',
      `9. Keep \`${stateFile}\` up to date: status, iteration, the last gate, consent given, open blockers.`,
      `10. Add one short line to \`${runLog}\` for every context read, model call, check, verdict, revision, blocker and stop.`,
      "11. Compare each round's blockers with the previous round's. When the same blockers come back for the whole No-progress window, stop (or ask for the configured human checkpoint) rather than revising again.",
      '12. Token and USD budgets are yours to watch: when you cannot count exactly, pause and ask before a step that could go over.',
    ],
    boundary:
      'A session is not an orchestrator: if this loop turns out to need schedules, long-lived child agents, concurrency limits or retries that survive a restart, stop and tell the user to move it to a durable orchestrator.',
    observability: `\`${stateFile}\` says where the loop stands now, so it can be picked up again; \`${runLog}\` only ever grows, and tells how it got there.`,
    startNow: 'When the user says go, start at step 1 of the Operator Instructions and carry on until a stop condition is met.',
  };
}

/**
 * The items of a field the compiler leaves unchecked (`sends`, `redact`, `human_checkpoints`,
 * `stop_conditions`). Looper's renderer iterates it as Python does, so `sends: plan` shows as
 * `p, l, a, n` in Looper's file; quickloop's file shows a string as the one item the runner reads.
 */
function items(value: PyValue | undefined, flavour: RenderOptions['flavour']): PyValue[] {
  if (flavour === 'looper') return pyIter(value);
  return typeof value === 'string' ? [value] : list(value);
}

function joined(value: PyValue | undefined, flavour: RenderOptions['flavour']): string {
  return items(value, flavour).map((item) => pyStr(item)).join(', ');
}

/** Path(source).name; Looper on POSIX splits at `/` only, so a Windows source stays whole there. */
function baseName(source: PyValue | undefined, flavour: RenderOptions['flavour']): string {
  const path = typeof source === 'string' ? source : 'loop.yaml';
  const parts = path.split(flavour === 'looper' ? '/' : /[\\/]/).filter((p) => p !== '');
  return parts[parts.length - 1] ?? path;
}

export function renderRunInSessionMd(resolved: PyDict, options: RenderOptions = {}): string {
  const meta = pick(resolved, 'meta', {});
  const goal = pick(resolved, 'goal', {});
  const gates = pick(resolved, 'gates', {});
  const control = pick(resolved, 'loop_control', {});
  const workspace = pick(resolved, 'workspace', {});
  const execution = pick(resolved, 'execution', {});
  const observability = pick(resolved, 'observability', {});
  const name = pick(meta, 'name');
  const title = truthy(name) ? pyStr(name) : 'Looper Generated Loop';
  const stateFile = pyStr(pick(observability, 'state_file', 'state.json'));
  const runLog = pyStr(pick(observability, 'run_log', 'run-log.md'));

  const prose = options.flavour === 'looper' ? LOOPER_PROSE : quickloopProse(stateFile, runLog);
  const lines = [`# Run \`${title}\` In This Session`, '', ...prose.opening, ''];
  lines.push(
    '## Files',
    '',
    `- Source spec: \`${baseName(pick(resolved, 'source', 'loop.yaml'), options.flavour)}\``,
    '- Human summary: `LOOP.md`',
    '- Resolved spec: `loop.resolved.json`',
    `- Workspace: \`${pyStr(pick(workspace, 'dir', './loop-workspace'))}\``,
    `- State file: \`${stateFile}\``,
    `- Run log: \`${runLog}\``,
    '',
    '## Goal',
    '',
    text(pick(goal, 'statement', '')),
    '',
    '## Definition Of Done',
    '',
    text(pick(goal, 'definition_of_done', '')),
    '',
    '## Context Sources',
    '',
  );

  const sources = list(pick(goal, 'context_sources', []));
  if (sources.length > 0) {
    for (const source of sources) {
      if (pick(source, 'file') !== undefined) lines.push(`- Read file \`${pyStr(pick(source, 'file'))}\``);
      else if (pick(source, 'cmd') !== undefined) lines.push(`- Run command \`${pyJsonDumps(pick(source, 'cmd'))}\``);
    }
  } else {
    lines.push('- No context sources configured.');
  }

  lines.push('', '## Verification Criteria', '');
  for (const item of list(pick(goal, 'verification', []))) {
    const id = pyStr(pick(item, 'id'));
    const type = pick(item, 'type');
    if (type === 'programmatic') {
      lines.push(`- \`${id}\` programmatic: run \`${pyJsonDumps(pick(item, 'check'))}\` and expect \`${pyStr(pick(item, 'expect'))}\``);
    } else if (type === 'judge') {
      lines.push(`- \`${id}\` judge rubric: ${pyStr(pick(item, 'rubric'))}`);
    } else if (type === 'human') {
      lines.push(`- \`${id}\` human signoff: ${pyStr(pick(item, 'prompt'))}`);
    }
  }

  lines.push('', '## Council', '');
  const council = list(pick(resolved, 'council', []));
  if (council.length > 0) {
    for (const member of council) {
      const locality = truthy(pick(member, 'local')) ? 'local' : 'non-local';
      lines.push(
        `- \`${pyStr(pick(member, 'id'))}\` ${pyStr(pick(member, 'role'))} via \`${pyJsonDumps(pick(member, 'invoke', []))}\` (${locality}; timeout ${pyStr(pick(member, 'timeout_sec', 600))}s)`,
      );
    }
  } else {
    lines.push('- No council members configured.');
  }

  lines.push('', '## Gates', '');
  for (const gateName of ['plan_gate', 'delivery_gate']) {
    const gate = pick(gates, gateName, {});
    lines.push(
      `### ${gateName}`,
      '',
      `- When: \`${pyStr(pick(gate, 'when'))}\``,
      `- Policy: \`${pyStr(pick(gate, 'verdict_policy'))}\``,
      `- Verdict source: \`${pyStr(pick(gate, 'verdict_source', 'none'))}\``,
      `- Criteria: \`${joined(pick(gate, 'criteria', []), options.flavour)}\``,
      `- Max revisions: \`${pyStr(pick(gate, 'max_revisions', options.flavour === 'looper' ? null : DEFAULT_MAX_REVISIONS))}\``,
      '',
    );
  }

  lines.push(
    '## Loop Control',
    '',
    `- Max iterations: \`${pyStr(pick(control, 'max_iterations'))}\``,
    `- Budget: \`${pyJsonDumps(pick(control, 'budget', {}), { sortKeys: true })}\``,
    `- No-progress: \`${pyJsonDumps(pick(control, 'no_progress', {}), { sortKeys: true })}\``,
    `- Human checkpoints: \`${joined(pick(control, 'human_checkpoints', []), options.flavour) || 'none'}\``,
    '- Stop conditions:',
  );
  for (const condition of items(pick(control, 'stop_conditions', []), options.flavour)) lines.push(`  - ${pyStr(condition)}`);

  lines.push(
    '',
    '## Execution Boundary',
    '',
    `- Mode: \`${pyStr(pick(execution, 'mode', 'in_session'))}\``,
    `- Isolation: \`${pyStr(pick(execution, 'isolation', 'current_workspace'))}\``,
    `- Side effects: \`${pyJsonDumps(pick(execution, 'side_effects', {}), { sortKeys: true })}\``,
    '',
    prose.boundary,
    '',
    '## Observability',
    '',
    `- State file: \`${stateFile}\``,
    `- Run log: \`${runLog}\``,
    `- Checkpoint granularity: \`${pyStr(pick(observability, 'checkpoint_granularity', 'gate'))}\``,
    '',
    prose.observability,
    '',
    '## Privacy',
    '',
  );
  const egress = list(pick(pick(resolved, 'privacy', {}), 'egress', []));
  if (egress.length > 0) {
    for (const entry of egress) {
      lines.push(
        `- Before sending \`${joined(pick(entry, 'sends', []), options.flavour)}\` to \`${pyStr(pick(entry, 'to'))}\`, confirm consent and apply redactions \`${joined(pick(entry, 'redact', []), options.flavour)}\`.`,
      );
    }
  } else {
    lines.push('- No cross-vendor egress configured.');
  }
  lines.push('', '## Start Now', '', prose.startNow, '');
  return lines.join('\n');
}
