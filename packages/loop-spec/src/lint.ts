// `loop lint`: Looper's 16 rubric checks (ids, severities, order and texts unchanged), then ours.
//
// Severity contract (Looper's): an error means the spec will not behave the way it reads at run
// time; a warning is design coaching. Looper's findings always come first and in Looper's order, so
// `--compat` (Looper's rules only) prints exactly what Looper prints.
import { isRedactedPath } from './glob.js';
import { cliOutputMode } from './output-mode.js';
import { get, has, isDict, pyIter, pyRepr, pyStr, truthy, type PyDict, type PyValue } from './py.js';
import { DEFAULT_REDACTIONS, type Finding, type Severity } from './types.js';

export interface LintOptions {
  /** Only Looper 0.4's sixteen rules. */
  compat?: boolean;
}

/** Every rule id, in the order findings are reported; the first sixteen are Looper's. */
export const LINT_RULES: readonly { id: string; severity: Severity; looper: boolean }[] = [
  { id: 'no-verification-criteria', severity: 'warning', looper: true },
  { id: 'all-vibe-verification', severity: 'warning', looper: true },
  { id: 'judge-criterion-unreachable', severity: 'error', looper: true },
  { id: 'same-family-judge', severity: 'warning', looper: true },
  { id: 'missing-max-revisions', severity: 'warning', looper: true },
  { id: 'delivery-gate-no-programmatic', severity: 'warning', looper: true },
  { id: 'unreferenced-council-member', severity: 'warning', looper: true },
  { id: 'unscoped-egress', severity: 'error', looper: true },
  { id: 'non-local-member-without-egress', severity: 'warning', looper: true },
  { id: 'egress-unknown-member', severity: 'error', looper: true },
  { id: 'egress-consent-pregranted', severity: 'warning', looper: true },
  { id: 'unhonored-human-checkpoint', severity: 'warning', looper: true },
  { id: 'no-wall-clock-cap', severity: 'warning', looper: true },
  { id: 'no-stop-conditions', severity: 'warning', looper: true },
  { id: 'shell-string-check', severity: 'warning', looper: true },
  { id: 'unresolved-placeholders', severity: 'warning', looper: true },
  { id: 'council-member-named-host', severity: 'error', looper: false },
  { id: 'observability-path-escape', severity: 'error', looper: false },
  { id: 'egress-entry-malformed', severity: 'error', looper: false },
  { id: 'hardcoded-delivery-path', severity: 'warning', looper: false },
  { id: 'context-source-redacted', severity: 'warning', looper: false },
  { id: 'budget-usage-unmeasurable', severity: 'warning', looper: false },
];

const PLACEHOLDER = /\{\{[A-Za-z0-9_]+\}\}/g;

/** Sorted unique `{{TOKEN}}` placeholders in keys and values, recursively. */
export function findPlaceholders(value: PyValue | undefined): string[] {
  const found = new Set<string>();
  const walk = (v: PyValue | undefined): void => {
    if (typeof v === 'string') for (const m of v.match(PLACEHOLDER) ?? []) found.add(m);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (isDict(v)) {
      for (const key of Object.keys(v)) {
        walk(key);
        walk(v[key]);
      }
    }
  };
  walk(value);
  return [...found].sort();
}

/** The message compile prints as a warning and lint reports as a finding. */
export function placeholderWarningText(placeholders: readonly string[]): string {
  return `unresolved template placeholders remain (${placeholders.join(', ')}); fill them in before running this loop`;
}

const dictOf = (v: PyValue | undefined): PyDict => (isDict(v) ? v : {});

const listOf = (v: PyValue | undefined): PyValue[] => (Array.isArray(v) ? v : []);

/** The CLIs whose JSON output modes report token usage (and, for some, cost). */

/**
 * Lints a compiled spec. `rawStringChecks` are the ids of programmatic criteria whose `check` was a
 * string before compilation split it (compile rewrites it, so lint cannot see it afterwards).
 */
export function lintSpec(resolved: PyDict, rawStringChecks: readonly PyValue[], options: LintOptions = {}): Finding[] {
  const findings: Finding[] = [];
  const add = (check: string, severity: Severity, message: string): void => {
    findings.push({ check, severity, message });
  };

  const criteria = dictOf(get(resolved, 'criteria_by_id'));
  const members = dictOf(get(resolved, 'council_by_id'));
  const memberIds = listOf(get(resolved, 'council')).filter(isDict).map((m) => get(m, 'id')).filter((id): id is string => typeof id === 'string' && has(members, id));
  const host = dictOf(get(resolved, 'host'));
  const hostCli = get(host, 'cli') ?? '';
  const gates = dictOf(get(resolved, 'gates'));
  const control = dictOf(get(resolved, 'loop_control'));
  const egress = listOf(get(dictOf(get(resolved, 'privacy')), 'egress'));
  const egressTargets = egress.filter(isDict).map((entry) => get(entry, 'to'));
  const criterion = (cid: PyValue): PyDict => (typeof cid === 'string' ? dictOf(get(criteria, cid)) : {});

  const programmaticIds = new Set(Object.keys(criteria).filter((cid) => get(criterion(cid), 'type') === 'programmatic'));
  if (Object.keys(criteria).length === 0) {
    add(
      'no-verification-criteria',
      'warning',
      'goal.verification is empty; nothing checkable defines done - add programmatic checks first, then judge rubrics (verification rubric)',
    );
  } else if (programmaticIds.size === 0) {
    add(
      'all-vibe-verification',
      'warning',
      "every verification criterion is judge or human ('all-vibe'); add at least one programmatic check so something objective can block the loop (verification rubric)",
    );
  }

  for (const gateName of ['plan_gate', 'delivery_gate']) {
    const gate = dictOf(get(gates, gateName));
    const policy = get(gate, 'verdict_policy');
    const source = get(gate, 'verdict_source');
    const gateCriteria = listOf(get(gate, 'criteria'));
    const dead = gateCriteria.filter((cid) => get(criterion(cid), 'type') === 'judge').map((cid) => pyStr(cid));
    if (dead.length > 0 && policy === 'fixed_passes') {
      add(
        'judge-criterion-unreachable',
        'error',
        `${gateName} uses fixed_passes but lists judge criteria (${dead.join(', ')}); runners only consult a judge under revise_until_clean, so these rubrics are never evaluated`,
      );
    } else if (dead.length > 0 && policy === 'revise_until_clean' && source === 'human') {
      add(
        'judge-criterion-unreachable',
        'error',
        `${gateName} lists judge criteria (${dead.join(', ')}) but its verdict_source is human; the runner asks the human for a bare pass/revise and never shows or evaluates these rubrics`,
      );
    }
    if (policy === 'revise_until_clean' && truthy(source) && source !== 'human') {
      const sourceCli = typeof source === 'string' ? (get(dictOf(get(members, source)), 'cli') ?? '') : '';
      if (truthy(sourceCli) && sourceCli === hostCli) {
        add(
          'same-family-judge',
          'warning',
          `${gateName} verdict_source ${pyRepr(source)} runs on the same CLI family as the host (${pyStr(hostCli)}); a different model family closes self-grading blind spots (council rubric)`,
        );
      }
    }
    if (!has(gate, 'max_revisions')) {
      add('missing-max-revisions', 'warning', `${gateName} does not set max_revisions; make the revision cap explicit (control rubric requires one per gate)`);
    }
  }

  if (programmaticIds.size > 0) {
    const deliveryCriteria = listOf(get(dictOf(get(gates, 'delivery_gate')), 'criteria'));
    if (!deliveryCriteria.some((cid) => typeof cid === 'string' && programmaticIds.has(cid))) {
      add(
        'delivery-gate-no-programmatic',
        'warning',
        'delivery_gate applies no programmatic criteria even though some are defined; the shipped artifact is gated by judgment alone',
      );
    }
  }

  const referenced = new Set<PyValue>();
  for (const gateName of ['plan_gate', 'delivery_gate']) {
    const gate = dictOf(get(gates, gateName));
    for (const mid of listOf(get(gate, 'members'))) referenced.add(mid);
    const source = get(gate, 'verdict_source');
    if (truthy(source) && source !== 'human' && source !== undefined) referenced.add(source);
  }
  for (const memberId of memberIds) {
    const member = dictOf(get(members, memberId));
    if (!referenced.has(memberId)) {
      add(
        'unreferenced-council-member',
        'warning',
        `council member ${pyRepr(memberId)} is not listed in any gate's members or verdict_source; the runner will never invoke it (dead config)`,
      );
      continue;
    }
    if (truthy(get(member, 'local'))) continue;
    if (egressTargets.includes(memberId)) continue;
    if (get(member, 'cli') !== hostCli) {
      add(
        'unscoped-egress',
        'error',
        `council member ${pyRepr(memberId)} is non-local and cross-vendor (${pyStr(get(member, 'cli'))}) but has no privacy.egress entry; declare what it receives, the redaction globs, and consent (privacy contract)`,
      );
    } else {
      add(
        'non-local-member-without-egress',
        'warning',
        `council member ${pyRepr(memberId)} is non-local but has no privacy.egress entry; project content leaves this machine undeclared - name the sends and redactions even for a same-vendor CLI`,
      );
    }
  }

  const entriesByTarget = new Map<string, PyDict[]>();
  for (const entry of egress) {
    if (!isDict(entry)) continue;
    const target = get(entry, 'to');
    const key = pyStr(target);
    entriesByTarget.set(key, [...(entriesByTarget.get(key) ?? []), entry]);
    // quickloop's runner governs the host by `to: host` entries (consent and redaction like any
    // member); only Looper, which has no such target, would misread one.
    const hostEntry = !options.compat && target === 'host' && !has(members, 'host');
    if (!hostEntry && (typeof target !== 'string' || !has(members, target))) {
      add(
        'egress-unknown-member',
        'error',
        `privacy.egress entry targets unknown council member ${pyRepr(target)} (renamed or mistyped id?); its sends/consent scoping binds to no member, though its redact globs still extend context redaction`,
      );
    }
  }
  for (const [memberId, entries] of entriesByTarget) {
    if (!has(members, memberId)) continue;
    const member = dictOf(get(members, memberId));
    if (truthy(get(member, 'local'))) continue;
    if (entries.every((entry) => get(entry, 'consent') === 'granted')) {
      add('egress-consent-pregranted', 'warning', `every privacy.egress entry for ${pyRepr(memberId)} pre-grants consent; the runner will skip the first-send prompt for it`);
    }
  }

  const checkpoints = get(control, 'human_checkpoints');
  const unhonored = (truthy(checkpoints) ? pyIter(checkpoints) : []).filter((name) => typeof name === 'string' && name !== 'after_plan');
  if (unhonored.length > 0) {
    add(
      'unhonored-human-checkpoint',
      'warning',
      `human_checkpoints entries ${pyRepr(unhonored)} are not recognized by the external runner (run-loop.py fires only 'after_plan'); they bind only when an in-session operator runs the loop`,
    );
  }

  const budget = dictOf(get(control, 'budget'));
  const wall = get(budget, 'wall_clock_min');
  if (wall === undefined || wall === null) {
    add('no-wall-clock-cap', 'warning', 'loop_control.budget.wall_clock_min is null; the runner will not enforce any wall-clock cap');
  }

  if (!truthy(get(control, 'stop_conditions'))) {
    add(
      'no-stop-conditions',
      'warning',
      'loop_control.stop_conditions is empty; state the success stop and the failure/no-progress stops explicitly (control rubric)',
    );
  }

  for (const id of rawStringChecks) {
    add(
      'shell-string-check',
      'warning',
      `criterion ${pyRepr(id)} writes its check as a shell string; prefer an argv array (verification rubric) unless a placeholder must be shlex-split after substitution`,
    );
  }

  const placeholders = findPlaceholders(resolved);
  if (placeholders.length > 0) add('unresolved-placeholders', 'warning', placeholderWarningText(placeholders));

  if (!options.compat) lintBeyondLooper(resolved, add);
  return findings;
}

/** Rules for the gaps quickloop closes: specs Looper lets through silently that will not run as they read. */
function lintBeyondLooper(resolved: PyDict, add: (check: string, severity: Severity, message: string) => void): void {
  // `host` names the host wherever a member id goes (its consent, --consent host, privacy.egress to: host),
  // so the runner refuses a member called that: say so here, before CI lets the spec through.
  if (has(dictOf(get(resolved, 'council_by_id')), 'host')) {
    add(
      'council-member-named-host',
      'error',
      "council member 'host' shares its id with the host CLI (its consent, --consent host, privacy.egress to: host); loop run refuses it - rename the member",
    );
  }
  const observability = dictOf(get(resolved, 'observability'));
  for (const key of ['state_file', 'run_log']) {
    const value = get(observability, key);
    if (typeof value !== 'string') continue;
    const parts = value.split(/[\\/]/);
    if (value.startsWith('/') || value.startsWith('\\') || /^[A-Za-z]:/.test(value) || parts.includes('..')) {
      add(
        'observability-path-escape',
        'error',
        `observability.${key} ${pyRepr(value)} points outside the workspace; the runner would write there - use a plain file name`,
      );
    }
  }

  const egress = listOf(get(dictOf(get(resolved, 'privacy')), 'egress'));
  egress.forEach((entry, index) => {
    if (!isDict(entry)) return;
    const problems: string[] = [];
    if (typeof get(entry, 'to') !== 'string') problems.push('`to` must be a council member id');
    const sends = get(entry, 'sends');
    if (sends !== undefined && !(Array.isArray(sends) && sends.every((s) => typeof s === 'string'))) problems.push('`sends` must be a list of strings');
    const redact = get(entry, 'redact');
    if (!(Array.isArray(redact) && redact.every((s) => typeof s === 'string'))) problems.push('`redact` must be a list of glob strings');
    const consent = get(entry, 'consent');
    if (consent !== 'required' && consent !== 'granted') problems.push(`\`consent\` must be required or granted (got ${pyRepr(consent)})`);
    if (problems.length > 0) {
      add('egress-entry-malformed', 'error', `privacy.egress[${index}]: ${problems.join('; ')}; a runner cannot apply this entry as written`);
    }
  });

  const criteria = dictOf(get(resolved, 'criteria_by_id'));
  for (const cid of Object.keys(criteria)) {
    const item = dictOf(criteria[cid]);
    if (get(item, 'type') !== 'programmatic') continue;
    const check = listOf(get(item, 'check'));
    const literal = check.find((arg) => typeof arg === 'string' && /delivery-[0-9]+\.md/.test(arg) && !arg.includes('{n}') && !arg.includes('{artifact}'));
    if (literal !== undefined) {
      add(
        'hardcoded-delivery-path',
        'warning',
        `criterion ${pyRepr(cid)} checks ${pyRepr(literal)} literally; from iteration 2 on it would re-check an old delivery - write {artifact} or delivery-{n}.md`,
      );
    }
  }

  const globs = [...DEFAULT_REDACTIONS];
  for (const entry of egress) {
    if (isDict(entry)) for (const g of listOf(get(entry, 'redact'))) if (typeof g === 'string') globs.push(g);
  }
  listOf(get(dictOf(get(resolved, 'goal')), 'context_sources')).forEach((source, index) => {
    const file = isDict(source) ? get(source, 'file') : undefined;
    if (typeof file === 'string' && isRedactedPath(file, globs)) {
      add(
        'context-source-redacted',
        'warning',
        `context_sources[${index}].file ${pyRepr(file)} matches a redaction glob; it is never read and every prompt gets [redacted] in its place`,
      );
    }
  });

  const budget = dictOf(get(dictOf(get(resolved, 'loop_control')), 'budget'));
  const capped = ['usd', 'tokens'].filter((key) => {
    const v = get(budget, key);
    return v !== undefined && v !== null;
  });
  if (capped.length > 0) {
    const callers: [string, PyDict][] = [['host', dictOf(get(resolved, 'host'))]];
    const members = dictOf(get(resolved, 'council_by_id'));
    for (const id of Object.keys(members)) callers.push([id, dictOf(members[id])]);
    const blind = callers
      // A local member (ollama) spends nothing that leaves the machine.
      .filter(([id, m]) => id === 'host' || !truthy(get(m, 'local')))
      // The runner reads usage only from a JSON output mode the invoke asks for: `claude -p` alone
      // reports none, however well its CLI could.
      .filter(([, m]) => cliOutputMode(listOf(get(m, 'invoke')).filter((a): a is string => typeof a === 'string')) === 'text')
      .map(([id]) => id);
    if (blind.length > 0) {
      add(
        'budget-usage-unmeasurable',
        'warning',
        `loop_control.budget.${capped.join('/')} is advisory for ${blind.join(', ')}: usage is read only from a JSON output mode (claude -p --output-format json, codex exec --json, gemini -o json), so spend through these invokes is not counted`,
      );
    }
  }
}
