// The ASCII flow preview's rules: box width, clipping with ~, the display quirks Looper has.
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { compileSpec } from './compile.js';

function preview(patch: (s: Record<string, any>) => void): string {
  const spec: Record<string, any> = {
    version: 1,
    goal: { statement: 's', definition_of_done: 'd' },
    host: { cli: 'claude', invoke: ['claude', '-p'] },
    council: [{ id: 'a-judge-with-a-rather-long-identifier', role: 'judge', cli: 'codex', invoke: ['codex', 'exec'] }],
    gates: {
      plan_gate: { verdict_policy: 'revise_until_clean', verdict_source: 'a-judge-with-a-rather-long-identifier', members: ['a-judge-with-a-rather-long-identifier'], max_revisions: 4 },
      delivery_gate: { verdict_policy: 'fixed_passes' },
    },
    loop_control: { max_iterations: 7 },
  };
  patch(spec);
  return compileSpec(stringify(spec), { path: '/l/loop.yaml' }).loopMd;
}

describe('flow preview', () => {
  it('clips text longer than the box to 29 characters and a ~', () => {
    const md = preview(() => {});
    expect(md).toContain('| verdict: a-judge-with-a-rathe~ |');
    for (const line of md.split('\n').filter((l) => l.startsWith('|') || l.startsWith('+'))) expect(line).toHaveLength(34);
  });

  it('shows a fixed_passes gate without verdict_source as human, and a missing max_revisions as the 1 the runner applies', () => {
    const md = preview(() => {});
    expect(md).toContain('| 5. Delivery gate               |\n| verdict: human                 |');
    expect(md).toContain('               | needs work -> revise <= 1 -> step 4');
    expect(md).toContain('               | needs work -> revise <= 4 -> step 2');
  });

  it('says "configured caps" only when every budget is null', () => {
    expect(preview((s) => (s.loop_control.budget = { wall_clock_min: null }))).toContain('Stops: pass gates | max 7 iterations | no progress x2 | budget configured caps');
    expect(preview((s) => (s.loop_control.budget = { usd: 2.5, tokens: 2000000 }))).toContain('budget 30m, $2.5, 2000000 tokens');
  });

  it('has no mermaid, and titles an unnamed loop', () => {
    const md = preview(() => {});
    expect(md).not.toContain('flowchart TD');
    expect(md.startsWith('# Looper Generated Loop\n')).toBe(true);
  });
});

describe('RUN_IN_SESSION.md with a string where a list belongs (the compiler lets these through)', () => {
  const yaml = `version: 1
goal: {statement: s, definition_of_done: d}
host: {cli: claude, invoke: [claude, -p]}
council:
  - {id: j, role: judge, cli: codex, invoke: [codex, exec]}
gates:
  plan_gate: {verdict_policy: revise_until_clean, verdict_source: j, members: [j], max_revisions: 1}
  delivery_gate: {verdict_policy: fixed_passes, max_revisions: 1}
loop_control:
  max_iterations: 1
  human_checkpoints: after_plan
  stop_conditions: done
privacy:
  egress:
    - {to: j, sends: plan, redact: "*.md", consent: required}
    - {to: j, sends: {a: 1}}
`;

  it("renders Looper's file as Looper's renderer iterates them: a string by character, a mapping by key", () => {
    // These lines are what Looper 0.4's compile --session-prompt wrote for this spec.
    const md = compileSpec(yaml, { path: '/l/loop.yaml' }).looper.runInSessionMd;
    expect(md).toContain('- Human checkpoints: `a, f, t, e, r, _, p, l, a, n`\n- Stop conditions:\n  - d\n  - o\n  - n\n  - e\n');
    expect(md).toContain('- Before sending `p, l, a, n` to `j`, confirm consent and apply redactions `*, ., m, d`.\n');
    expect(md).toContain('- Before sending `a` to `j`, confirm consent and apply redactions `.env, .env.*, secrets/**, **/*.key`.\n');
  });

  it("renders quickloop's file with a string as the one item it names, as the runner reads it", () => {
    const md = compileSpec(yaml, { path: '/l/loop.yaml' }).runInSessionMd;
    expect(md).toContain('- Human checkpoints: `after_plan`\n- Stop conditions:\n  - done\n');
    expect(md).toContain('- Before sending `plan` to `j`, confirm consent and apply redactions `*.md`.\n');
  });
});
