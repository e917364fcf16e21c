// The prompts sent to the host, reviewers and judges; past Looper, each one carries the goal and definition of done.
import type { ResolvedSpec } from '@quickloop/loop-spec';

const goalBlock = (spec: ResolvedSpec): string => `Goal:\n${spec.goal.statement}\n\nDefinition of done:\n${spec.goal.definition_of_done}`;

export function planPrompt(spec: ResolvedSpec, context: string): string {
  return `Draft plan.md for this loop.\n\n${goalBlock(spec)}\n\nContext:\n${context}`;
}

export interface PriorDelivery {
  name: string;
  text: string;
  review: string | null;
}

/** Delivery N+1 is written with delivery N and its last review in view (Looper re-sends the same prompt). */
export function deliveryPrompt(spec: ResolvedSpec, o: { context: string; plan: string; iteration: number; prior: PriorDelivery | null }): string {
  let p = `Write the next delivery artifact for this loop (delivery-${o.iteration}.md, iteration ${o.iteration} of ${spec.loop_control.max_iterations}).\n\n${goalBlock(spec)}\n\nContext:\n${o.context}\n\nPlan:\n${o.plan}`;
  if (o.prior) {
    p += `\n\nThe previous delivery (${o.prior.name}) did not pass its gate. Do better than it.\n\nPrevious delivery:\n${o.prior.text}`;
    if (o.prior.review) p += `\n\nIts last review:\n${o.prior.review}`;
  }
  return p;
}

export function revisePrompt(spec: ResolvedSpec, artifact: string, review: string): string {
  return `Revise the artifact to address the review. Return only the revised artifact.\n\n${goalBlock(spec)}\n\nArtifact:\n${artifact}\n\nReview:\n${review}`;
}

export function reviewerPrompt(spec: ResolvedSpec, gate: string, label: string, artifact: string): string {
  return `You are a Looper reviewer. Return concise blocking and non-blocking notes. Do not return a verdict.\n\nGate: ${gate}\nArtifact: ${label}\n\n${goalBlock(spec)}\n\nArtifact content:\n${artifact}`;
}

export interface JudgeInputs {
  gate: string;
  label: string;
  artifact: string;
  criteria: string[];
  /** One JSON line per programmatic criterion of this round (Looper promises these and omits them). */
  programmatic: string[];
  reviews: { member: string; text: string }[];
}

export function judgePrompt(spec: ResolvedSpec, o: JudgeInputs): string {
  const lines = o.criteria.map((id) => {
    const c = spec.criteria_by_id[id];
    if (!c) return `- ${id}`;
    if (c.type === 'judge') return `- ${id}: ${c.rubric}`;
    if (c.type === 'programmatic') return `- ${id}: programmatic check result is included below.`;
    return `- ${id}: human signoff is required separately.`;
  });
  let p =
    'You are the Looper judge. Return only a fenced JSON object with keys verdict, blocking_issues, confidence, and notes. verdict must be pass or revise.\n\n' +
    `Gate: ${o.gate}\nArtifact: ${o.label}\n\n${goalBlock(spec)}\n\nCriteria:\n${lines.length ? lines.join('\n') : '- (none)'}`;
  if (o.programmatic.length) p += `\n\nProgrammatic check results:\n${o.programmatic.join('\n')}`;
  for (const r of o.reviews) p += `\n\nReviewer notes from ${r.member}:\n${r.text}`;
  return `${p}\n\nArtifact content:\n${o.artifact}`;
}
