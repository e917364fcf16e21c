// One gate round on one artifact: programmatic and human criteria, reviewers in parallel, then the verdict source.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, relative } from 'node:path';
import { InterruptedError } from '@quickloop/cli-kit/errors';
import { pyJsonDumps, type GateName, type PyMap, type ProgrammaticCriterion } from '@quickloop/loop-spec';
import { InputRequired } from './errors.js';
import { runArgv, tailKeptWarning } from './exec.js';
import { ownVerdictBlock, parseJudge, verdictBlock, type JudgeVerdict } from './judge.js';
import { judgePrompt, reviewerPrompt } from './prompts.js';
import type { Session } from './session.js';
import { criterion, gateOf, maxRevisions, member, timeoutMs } from './spec.js';

/** The fixed_passes "one more reviewer pass" marker: it makes a round revise but is never a real failure. */
export const FIXED_PASSES_MARKER = 'fixed_passes reviewer pass';

export interface RoundInput {
  gate: GateName;
  /** Absolute path of the artifact under review. */
  artifact: string;
  iteration: number;
  /** The gate's round number across the run: review-<gate>-<round>.md. */
  round: number;
  /** Host revisions of this artifact so far (fixed_passes counts its passes with it). */
  revision: number;
  /** Absolute path of the review file to write when the round does not pass; none for a dry round. */
  reviewPath?: string;
}

export interface RoundResult {
  passed: boolean;
  /** Real blocking issues (programmatic, human, judge); never the fixed_passes marker. */
  failures: string[];
  /** True when the only reason to go round again is fixed_passes asking for another pass. */
  anotherPass: boolean;
  /** The review text (also written to reviewPath when the round did not pass). */
  review: string;
  reviewRel: string | null;
  source: string;
  warnings: string[];
  verdict: JudgeVerdict | null;
  /** For each failed programmatic check's entry in `failures`: what it printed last (scrubbed), or what it ran when it printed nothing. */
  said: Record<string, string>;
}

/** The failures with what each failed check said, for a person's line: `Programmatic check failed: x (cat: …)`. */
export function namedFailures(r: Pick<RoundResult, 'failures' | 'said'>): string[] {
  return r.failures.map((f) => (Object.hasOwn(r.said, f) ? `${f} (${r.said[f]})` : f));
}

/** `{artifact}` (relative to the loop dir) and `{n}` (the iteration) in a check's argv. */
export function substitute(argv: readonly string[], artifactRel: string, iteration: number): string[] {
  return argv.map((a) => a.split('{artifact}').join(artifactRel).split('{n}').join(String(iteration)));
}

/** The last line of a check's output with anything but blanks on it ('' for none). */
function lastLine(text: string): string {
  const lines = text.split(/\r?\n/);
  for (let i = lines.length - 1; i >= 0; i -= 1) if (lines[i]!.trim() !== '') return lines[i]!.trim();
  return '';
}

/** `containsSeen` is the search over the whole of stdout; `stdout` may be only its kept tail. */
export function evaluate(c: ProgrammaticCriterion, exitCode: number, stdout: string, containsSeen?: boolean): boolean {
  if (c.expect === 'exit_zero') return exitCode === 0;
  if (c.expect === 'exit_nonzero') return exitCode !== 0;
  return typeof c.contains === 'string' && (containsSeen ?? stdout.includes(c.contains));
}

export async function runGateRound(s: Session, input: RoundInput): Promise<RoundResult> {
  const { spec, loopDir } = s.loaded;
  const gate = gateOf(spec, input.gate);
  const rel = (p: string): string => relative(loopDir, p).split('\\').join('/');
  const label = rel(input.artifact);
  const text = readFileSync(input.artifact, 'utf8');
  const roundId = s.hooks.newId();
  const ev = { parent_id: roundId };
  s.hooks.emit('gate.started', { gate: input.gate, artifact: label, iteration: input.iteration, round: input.round, revision: input.revision }, { id: roundId });
  s.hooks.log('gate_start', { gate: input.gate, artifact: basename(input.artifact), round: input.round, revision: input.revision, iteration: input.iteration });
  s.hooks.info(`${input.gate}: round ${input.round} on ${label}`);

  // Nobody can answer (stdin closed): the round ends undecided, and says so before the run stops.
  const blocked: (what: string) => never = (what) => {
    const stop = new InputRequired(what);
    s.hooks.emit('gate.verdict', { gate: input.gate, round: input.round, verdict: 'blocked', source: 'human', failures: [stop.failure], warnings: [], review: null }, ev);
    throw stop;
  };
  const failures: string[] = [];
  const parts: string[] = [];
  const programmatic: string[] = [];
  const warnings: string[] = [];
  const said: Record<string, string> = {};

  for (const id of gate.criteria ?? []) {
    const c = criterion(spec, id);
    if (!c) continue;
    if (c.type === 'programmatic') {
      const argv = substitute(c.check, label, input.iteration);
      const watch = c.expect === 'stdout_contains' && typeof c.contains === 'string' ? { contains: c.contains } : {};
      const r = await runArgv(argv, { cwd: loopDir, timeoutMs: timeoutMs(c.timeout_sec, 300), env: s.env, ...watch, ...(s.signal ? { signal: s.signal } : {}) });
      // A check killed by our own Ctrl-C did not fail: recording it would spend the round (and on the
      // last revision mark the gate exhausted, so the resume would refuse the artifact).
      if (s.signal?.aborted) throw new InterruptedError(`interrupted while programmatic check ${id} ran`);
      const passed = evaluate(c, r.exitCode, r.stdout, r.containsSeen);
      if (r.truncated) {
        const w = tailKeptWarning(`programmatic check ${id}`);
        s.hooks.addWarning(w);
        s.hooks.warn(`warning: ${w}`);
      }
      const printed = passed ? '' : lastLine(r.stderr) || lastLine(r.stdout);
      // What a person reads first about a failed check; it leaves the run in events, so it is scrubbed like a prompt.
      const shownSaid = printed ? s.scrubber.scrub(printed, s.hostGlobs()).text.slice(0, 200) : '';
      s.hooks.emit('gate.check', { gate: input.gate, criterion: id, kind: 'programmatic', passed, exit_code: r.exitCode, argv, ...(shownSaid ? { said: shownSaid } : {}) }, ev);
      s.hooks.log('programmatic_check', { criterion: id, passed, returncode: r.exitCode });
      const result = { id, type: 'programmatic', passed, returncode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
      programmatic.push(JSON.stringify(result));
      // As Looper's runner writes it: json.dumps(result, indent=2), non-ASCII escaped.
      parts.push(`## Programmatic ${id}\n\n\`\`\`json\n${pyJsonDumps(result, { indent: 2 })}\n\`\`\``);
      if (!passed) {
        failures.push(`Programmatic check failed: ${id}`);
        said[`Programmatic check failed: ${id}`] = shownSaid || `${argv.join(' ')} printed nothing`;
      }
    } else if (c.type === 'human') {
      const answer = await s.hooks.ask(`${c.prompt}\nType 'pass' to approve, anything else to request revision: `);
      if (answer === null) blocked(`human criterion ${id}`);
      const passed = answer.trim().toLowerCase() === 'pass';
      s.hooks.emit('gate.check', { gate: input.gate, criterion: id, kind: 'human', passed, exit_code: null }, ev);
      s.hooks.log('human_check', { criterion: id, passed });
      parts.push(`## Human ${id}\n\n${passed ? 'approved' : `revision requested: ${answer.trim()}`}`);
      if (!passed) failures.push(`Human check failed: ${id}`);
    }
  }

  // Reviewers every round, even after a failed check. Consent questions go one at a time; calls in parallel.
  const reviewers = (gate.members ?? []).filter((id) => member(spec, id)?.role === 'reviewer');
  const prepared: { id: string; prompt: string }[] = [];
  for (const id of reviewers) {
    const m = member(spec, id);
    if (m) prepared.push({ id, prompt: await s.prepare(id, m, reviewerPrompt(spec, input.gate, label, text)) });
  }
  // allSettled: when one reviewer fails, the others still finish before the round fails, so no CLI
  // is left writing after the run has recorded its terminal state.
  const settled = await Promise.allSettled(
    prepared.map(async ({ id, prompt }) => ({ member: id, text: await s.call(id, 'reviewer', member(spec, id)!, prompt, 'review') })),
  );
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  const reviews = settled.map((r) => (r as PromiseFulfilledResult<{ member: string; text: string }>).value);
  for (const r of reviews) {
    parts.push(`## ${r.member}\n\n${r.text}`);
    s.hooks.emit('review.completed', { gate: input.gate, member: r.member, chars: r.text.length }, ev);
    s.hooks.log('reviewer_notes', { gate: input.gate, member: r.member });
  }

  let verdict: JudgeVerdict | null = null;
  // The verdict as Looper's runner holds it (the judge's own dict), for the review file.
  let block: PyMap | null = null;
  let source = failures.length > 0 ? 'checks' : gate.verdict_policy === 'fixed_passes' ? 'fixed_passes' : String(gate.verdict_source);
  // The judge costs money: it is asked only once the cheap checks pass.
  if (gate.verdict_policy === 'revise_until_clean' && failures.length === 0) {
    if (gate.verdict_source === 'human') {
      const answer = await s.hooks.ask(`Type 'pass' if ${label} is clean: `);
      if (answer === null) blocked(`human verdict on ${input.gate}`);
      const pass = answer.trim().toLowerCase() === 'pass';
      verdict = { verdict: pass ? 'pass' : 'revise', blocking_issues: pass ? [] : [`Human requested revision: ${answer.trim()}`], confidence: 1, notes: 'human verdict' };
      block = ownVerdictBlock(verdict);
      source = 'human';
    } else {
      const id = String(gate.verdict_source);
      const judge = member(spec, id)!;
      const prompt = judgePrompt(spec, { gate: input.gate, label, artifact: text, criteria: gate.criteria ?? [], programmatic, reviews });
      const parsed = parseJudge(await s.send(id, 'judge', judge, prompt, 'verdict'));
      verdict = { ...parsed.verdict, member: id };
      block = parsed.block;
      block.set('member', id);
      if (verdict.warning) {
        warnings.push(verdict.warning);
        s.hooks.addWarning(`judge ${id} gave ${verdict.warning} at ${input.gate} round ${input.round}; treated as revise`);
        s.hooks.warn(`warning: ${id}'s output was ${verdict.warning === 'unparseable_judge_output' ? 'not parseable JSON' : 'not a valid verdict'}; treated as revise`);
      }
      // Contradictory, but Looper's runner passes it, and a loop written for it must run the same here: passed, and said.
      if (verdict.verdict === 'pass' && verdict.blocking_issues.length > 0) {
        const n = verdict.blocking_issues.length;
        warnings.push('pass_with_blocking_issues');
        s.hooks.addWarning(`judge ${id} passed ${input.gate} round ${input.round} with ${n} blocking issue${n === 1 ? '' : 's'} listed`);
        s.hooks.warn(`warning: ${id} passed ${input.gate} with ${n} blocking issue${n === 1 ? '' : 's'} listed (${verdict.blocking_issues.join('; ').replace(/\s+/g, ' ').slice(0, 200)}); passed, as its verdict says`);
      }
      s.hooks.log('judge_verdict', { gate: input.gate, member: id, verdict: verdict.verdict, ...(verdict.warning ? { warning: verdict.warning } : {}) });
    }
    parts.push(`## Verdict\n\n\`\`\`json\n${verdictBlock(block!)}\n\`\`\``);
    if (verdict.verdict === 'revise') failures.push(...(verdict.blocking_issues.length ? verdict.blocking_issues : ['Judge requested revision']));
  }

  const anotherPass = gate.verdict_policy === 'fixed_passes' && failures.length === 0 && input.revision < maxRevisions(gate);
  const passed = failures.length === 0 && !anotherPass;
  const shown = anotherPass ? [FIXED_PASSES_MARKER] : failures;
  const review = `${parts.join('\n\n')}${parts.length ? '\n\n' : ''}## Blocking Issues\n\n${shown.length ? shown.map((f) => `- ${f}`).join('\n') : '- none'}\n`;
  let reviewRel: string | null = null;
  if (!passed && input.reviewPath) {
    writeFileSync(input.reviewPath, review);
    reviewRel = rel(input.reviewPath);
    // The run log names files as Looper's does: by their names in the workspace.
    if (anotherPass) s.hooks.log('fixed_pass_round', { gate: input.gate, review: basename(input.reviewPath), pass: input.revision + 1 });
    else s.hooks.log('gate_blocked', { gate: input.gate, review: basename(input.reviewPath), failures });
  }
  s.hooks.emit('gate.verdict', { gate: input.gate, round: input.round, verdict: passed ? 'pass' : 'revise', source, failures, warnings, review: reviewRel }, ev);
  return { passed, failures, anotherPass, review, reviewRel, source, warnings, verdict, said };
}
