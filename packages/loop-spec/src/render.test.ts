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
