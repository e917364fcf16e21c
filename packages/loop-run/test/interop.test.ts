// Workspaces shared with Looper's runner.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeLoop, runLoopIn, type Loop } from './helpers.js';

const loops: Loop[] = [];
const track = (l: Loop): Loop => (loops.push(l), l);
afterEach(() => {
  for (const l of loops.splice(0)) l.cleanup();
});

describe('a workspace Looper’s runner left', () => {
  it('keeps the review files Looper wrote: new rounds are numbered after them', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'revise,pass'] }));
    const ws = join(loop.dir, 'loop-workspace');
    mkdirSync(ws);
    // What run-loop.py leaves after a plan gate that ran out of revisions: its state has no
    // review_rounds, and its review files are numbered from 1 in each process.
    writeFileSync(join(ws, 'plan.md'), '# Plan\n');
    writeFileSync(join(ws, 'review-plan_gate-1.md'), 'Looper round 1\n');
    writeFileSync(join(ws, 'review-plan_gate-2.md'), 'Looper round 2\n');
    writeFileSync(
      join(ws, 'state.json'),
      `${JSON.stringify({ status: 'failed', failure: 'plan_gate_max_revisions_reached', iteration: 0, started_at: '2026-07-05T06:02:07+00:00', updated_at: '2026-07-05T06:03:00+00:00', wall_clock_used_sec: 1.2, warnings: [], consent: {}, no_progress: { count: 1, gate: 'plan_gate', signature: 'x', threshold: 2 }, last_review: join(ws, 'review-plan_gate-2.md') }, null, 2)}\n`,
    );
    const { code } = await runLoopIn(loop);
    expect(code).toBe(0);
    expect(readFileSync(join(ws, 'review-plan_gate-1.md'), 'utf8')).toBe('Looper round 1\n');
    expect(readFileSync(join(ws, 'review-plan_gate-2.md'), 'utf8')).toBe('Looper round 2\n');
    expect(readFileSync(join(ws, 'review-plan_gate-3.md'), 'utf8')).toContain('the plan has no milestones');
    expect(loop.state().review_rounds.plan_gate).toBe(4);
  });
});
