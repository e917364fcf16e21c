// The progress view's live line: while a call is out, a person sees who is being called and for how long.
import { createLogger } from '@quickloop/cli-kit/logger';
import { describe, expect, it } from 'vitest';
import { ProgressView, type LiveLine } from './progress.js';

/** A terminal whose clock and timer the test turns by hand: everything written, in order. */
function terminal(columns?: number) {
  let now = 0;
  let tick: (() => void) | undefined;
  const screen: string[] = [];
  const live: LiveLine = {
    now: () => now,
    every: (_ms, fn) => {
      tick = fn;
      return () => (tick = undefined);
    },
    write: (text) => screen.push(text),
    columns: () => columns,
  };
  const view = new ProgressView((l) => screen.push(`${l}\n`), createLogger({ stream: process.stderr, colour: false }).color, live);
  return {
    view,
    screen,
    advance(ms: number) {
      now += ms;
      tick?.();
    },
    ticking: () => tick !== undefined,
  };
}

const call = (member: string, purpose: string, id: string) => ['model.call', { member, role: 'judge', purpose, argv0: 'x', prompt_chars: 1, attempt: 1 }, { id }] as const;
const result = (member: string, id: string, ms: number) => ['model.result', { member, ok: true, duration_ms: ms, exit_code: 0 }, { parent_id: id }] as const;

describe('the live line', () => {
  it("shows a call at the first tick even when the timer fires a few ms short of a second by the run's clock", () => {
    // setInterval keeps the event loop's clock, which trails the wall clock the call's start was read from.
    const t = terminal();
    t.view.on(...call('judge-1', 'verdict', 'c1'));
    t.advance(996);
    expect(t.screen.at(-1)).toBe('\r  … waiting on judge-1 (verdict) 1 s');
  });


  it('names a call that has been out a second or more, with its seconds, and is taken back before the next line', () => {
    const t = terminal();
    t.view.on(...call('judge-1', 'verdict', 'c1'));
    expect(t.screen).toEqual(['  calling judge-1 (judge: verdict) …\n']);
    t.advance(500);
    expect(t.screen).toHaveLength(1);
    t.advance(700);
    expect(t.screen.at(-1)).toBe('\r  … waiting on judge-1 (verdict) 1 s');
    t.advance(11_000);
    expect(t.screen.at(-1)).toBe('\r  … waiting on judge-1 (verdict) 12 s');
    t.view.on(...result('judge-1', 'c1', 12_200));
    const width = '  … waiting on judge-1 (verdict) 12 s'.length;
    expect(t.screen.slice(-2)).toEqual([`\r${' '.repeat(width)}\r`, '  judge-1 (verdict) answered in 12 s\n']);
    expect(t.ticking()).toBe(false);
    // No escape sequence at all: NO_COLOR and a dumb terminal read it the same.
    expect(t.screen.join('')).not.toContain('\u001b');
  });

  it('shows every call out at once, redraws what is still out after each answer, and stops when the last one answers', () => {
    const t = terminal();
    t.view.on(...call('a', 'review', 'c1'));
    t.view.on(...call('bee-longer-name', 'review', 'c2'));
    t.advance(2000);
    expect(t.screen.at(-1)).toBe('\r  … waiting on a (review) 2 s, bee-longer-name (review) 2 s');
    t.view.on(...result('bee-longer-name', 'c2', 2000));
    expect(t.ticking()).toBe(true);
    // The answer's line took the live line back first; the next tick draws what is still out.
    const width = '  … waiting on a (review) 2 s, bee-longer-name (review) 2 s'.length;
    expect(t.screen.slice(-2)).toEqual([`\r${' '.repeat(width)}\r`, '  bee-longer-name (review) answered in 2.0 s\n']);
    t.advance(1000);
    expect(t.screen.at(-1)).toBe('\r  … waiting on a (review) 3 s');
    t.advance(1000);
    t.view.on(...call('c', 'review', 'c3'));
    t.advance(1000);
    expect(t.screen.at(-1)).toBe(`\r  … waiting on a (review) 5 s, c (review) 1 s`);
    t.view.on(...result('a', 'c1', 5000));
    t.view.on(...result('c', 'c3', 1000));
    expect(t.ticking()).toBe(false);
  });

  it('fits one row of the terminal, and shows a member name as text', () => {
    const t = terminal(30);
    t.view.on(...call('judge\u001b[2Jwith-a-long-name', 'verdict', 'c1'));
    t.advance(1000);
    const drawn = t.screen.at(-1)!;
    expect(drawn.startsWith('\r')).toBe(true);
    expect(drawn.length - 1).toBeLessThanOrEqual(29);
    expect(drawn.endsWith('…')).toBe(true);
    expect(drawn).not.toContain('\u001b');
    // A pseudo-terminal nobody sized says 0 columns: taken as 80, not as room for nothing.
    const unsized = terminal(0);
    unsized.view.on(...call('judge-1', 'verdict', 'c1'));
    unsized.advance(1000);
    expect(unsized.screen.at(-1)).toBe('\r  … waiting on judge-1 (verdict) 1 s');
  });

  it('close() stops the timer and takes the line back when a run ends with a call still out', () => {
    const t = terminal();
    t.view.on(...call('judge-1', 'verdict', 'c1'));
    t.advance(3000);
    t.view.close();
    expect(t.ticking()).toBe(false);
    expect(t.screen.at(-1)).toMatch(/^\r +\r$/);
  });
});

describe('a verdict line', () => {
  it('says blocked, and why, for a round nobody could answer', () => {
    const t = terminal();
    t.view.on('gate.verdict', { gate: 'plan_gate', round: 1, verdict: 'blocked', source: 'human', failures: ['interactive_input_required:human criterion signoff'], warnings: [], review: null }, {});
    expect(t.screen).toEqual(['plan_gate: blocked — interactive_input_required:human criterion signoff\n']);
  });
});
