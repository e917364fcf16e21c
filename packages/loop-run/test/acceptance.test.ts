// The acceptance list, end to end with fake host and judge CLIs: state.json status + failure + exit code each time.
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeLoop, runLoopIn, type Loop } from './helpers.js';

const loops: Loop[] = [];
const track = (l: Loop): Loop => (loops.push(l), l);
afterEach(() => {
  for (const l of loops.splice(0)) l.cleanup();
});

describe('loop-run acceptance', () => {
  it('happy path: plan revised once, then both gates pass', async () => {
    const loop = track(makeLoop({ judge: ['--verdicts', 'revise,pass,pass'] }));
    const { code, events } = await runLoopIn(loop);
    const state = loop.state();
    expect(code).toBe(0);
    expect(state.status).toBe('passed');
    expect(state.failure).toBeUndefined();
    expect(state.final_delivery).toBe(loop.ws('delivery-1.md'));
    for (const f of ['plan.md', 'delivery-1.md', 'review-plan_gate-1.md', 'context.md', 'run-log.md']) expect(existsSync(loop.ws(f))).toBe(true);
    expect(loop.calls('judge')).toBe(3);
    expect(loop.calls('host')).toBe(3); // plan, revise, delivery
    const [plan, revise, delivery] = loop.prompts('host');
    expect(plan).toMatch(/^Draft plan.md for this loop\./);
    expect(plan).toContain('Loops go round.');
    expect(revise).toContain('the plan has no milestones');
    expect(delivery).toContain('iteration 1 of 2');
    // Past Looper: the judge sees the goal, the definition of done and the programmatic results.
    const deliveryJudge = loop.prompts('judge')[2]!;
    expect(deliveryJudge).toContain('Write a haiku about loops.');
    expect(deliveryJudge).toContain('Three lines that mention a gate.');
    expect(deliveryJudge).toMatch(/Programmatic check results:\n\{"id":"has-haiku","type":"programmatic","passed":true,"returncode":0/);
    expect(events.at(-1)?.type).toBe('loop.completed');
    expect(events.filter((e) => e.type === 'gate.verdict').map((e) => `${e.gate}:${e.verdict}`)).toEqual(['plan_gate:revise', 'plan_gate:pass', 'delivery_gate:pass']);
    expect(events.filter((e) => ['loop.completed', 'loop.failed'].includes(e.type))).toHaveLength(1);
    const log = loop.log();
    for (const e of ['run_start', 'context', 'host_start', 'judge_verdict', 'gate_blocked', 'revision', 'gate_passed', 'programmatic_check', 'run_passed']) expect(log).toContain(`\`${e}\``);
  });
});
