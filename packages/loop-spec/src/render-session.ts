// RUN_IN_SESSION.md: a prompt that lets the current LLM session operate the loop by hand.
//
// The sections follow Looper's (an operator who knows one knows the other); the prose is ours and
// points at `loop run` as the strict, unattended alternative.
import { pyJsonDumps } from './py-json.js';
import { pyStr, truthy, type PyDict, type PyValue } from './py.js';
import { DEFAULT_MAX_REVISIONS, list, pick, text } from './render-loop.js';

function joined(value: PyValue | undefined): string {
  return list(value).map((item) => pyStr(item)).join(', ');
}

function baseName(source: PyValue | undefined): string {
  const path = typeof source === 'string' ? source : 'loop.yaml';
  const parts = path.split(/[\\/]/).filter((p) => p !== '');
  return parts[parts.length - 1] ?? path;
}

export function renderRunInSessionMd(resolved: PyDict): string {
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

  const lines = [
    `# Run \`${title}\` In This Session`,
    '',
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
    '11. Compare each round\'s blockers with the previous round\'s. When the same blockers come back for the whole No-progress window, stop (or ask for the configured human checkpoint) rather than revising again.',
    '12. Token and USD budgets are yours to watch: when you cannot count exactly, pause and ask before a step that could go over.',
    '',
    '## Files',
    '',
    `- Source spec: \`${baseName(pick(resolved, 'source', 'loop.yaml'))}\``,
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
  ];

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
      `- Criteria: \`${joined(pick(gate, 'criteria', []))}\``,
      `- Max revisions: \`${pyStr(pick(gate, 'max_revisions', DEFAULT_MAX_REVISIONS))}\``,
      '',
    );
  }

  lines.push(
    '## Loop Control',
    '',
    `- Max iterations: \`${pyStr(pick(control, 'max_iterations'))}\``,
    `- Budget: \`${pyJsonDumps(pick(control, 'budget', {}), { sortKeys: true })}\``,
    `- No-progress: \`${pyJsonDumps(pick(control, 'no_progress', {}), { sortKeys: true })}\``,
    `- Human checkpoints: \`${joined(pick(control, 'human_checkpoints', [])) || 'none'}\``,
    '- Stop conditions:',
  );
  for (const condition of list(pick(control, 'stop_conditions', []))) lines.push(`  - ${pyStr(condition)}`);

  lines.push(
    '',
    '## Execution Boundary',
    '',
    `- Mode: \`${pyStr(pick(execution, 'mode', 'in_session'))}\``,
    `- Isolation: \`${pyStr(pick(execution, 'isolation', 'current_workspace'))}\``,
    `- Side effects: \`${pyJsonDumps(pick(execution, 'side_effects', {}), { sortKeys: true })}\``,
    '',
    'A session is not an orchestrator: if this loop turns out to need schedules, long-lived child agents, concurrency limits or retries that survive a restart, stop and tell the user to move it to a durable orchestrator.',
    '',
    '## Observability',
    '',
    `- State file: \`${stateFile}\``,
    `- Run log: \`${runLog}\``,
    `- Checkpoint granularity: \`${pyStr(pick(observability, 'checkpoint_granularity', 'gate'))}\``,
    '',
    `\`${stateFile}\` says where the loop stands now, so it can be picked up again; \`${runLog}\` only ever grows, and tells how it got there.`,
    '',
    '## Privacy',
    '',
  );
  const egress = list(pick(pick(resolved, 'privacy', {}), 'egress', []));
  if (egress.length > 0) {
    for (const entry of egress) {
      lines.push(
        `- Before sending \`${joined(pick(entry, 'sends', []))}\` to \`${pyStr(pick(entry, 'to'))}\`, confirm consent and apply redactions \`${joined(pick(entry, 'redact', []))}\`.`,
      );
    }
  } else {
    lines.push('- No cross-vendor egress configured.');
  }
  lines.push('', '## Start Now', '', 'When the user says go, start at step 1 of the Operator Instructions and carry on until a stop condition is met.', '');
  return lines.join('\n');
}
