// The sweep's progress lines off a terminal: under GitHub Actions the runner reads them for workflow
// commands, and a stage's line or a verdict's detail carries text from inside the sandbox.
import { describe, expect, it } from 'vitest';
import { createProgress } from './progress.js';

function progressOf(workflowCommands: boolean): { lines: () => string[]; progress: ReturnType<typeof createProgress> } {
  let text = '';
  const progress = createProgress({ stream: { write: (t: string) => (text += t) }, colour: false, live: false, quiet: false, total: 1, now: () => 0, workflowCommands });
  return { progress, lines: () => text.split('\n').filter((l) => l !== '') };
}

// The runner's legacy form is honoured anywhere in a line, not only at its start (as `::name::` is).
const HOSTILE = 'replay step 1 exited 1: echo ##[add-mask]Failed; echo ##[set-output name=ok]1; ##[stop-commands]t';

describe('sweep progress', () => {
  it('under GitHub Actions, no line carries the runner\'s legacy workflow command form from a stage or a verdict', () => {
    const { progress, lines } = progressOf(true);
    progress.started('greeter');
    progress.line('greeter', `qs-agent: greeter: command_failed — ${HOSTILE}`);
    progress.finished('greeter', 'FAIL', `docs_gap — ${HOSTILE}`);
    expect(lines()).toHaveLength(3);
    for (const l of lines()) {
      expect(l).not.toContain('##[');
      expect(l.trimStart().startsWith('::')).toBe(false);
    }
    // Still readable: the text is shown, not dropped.
    expect(lines()[2]).toBe('[   0s] greeter FAIL docs_gap — replay step 1 exited 1: echo #\\x23[add-mask]Failed; echo #\\x23[set-output name=ok]1; #\\x23[stop-commands]t');
  });

  it('elsewhere the same line is shown as it is', () => {
    const { progress, lines } = progressOf(false);
    progress.finished('greeter', 'FAIL', `docs_gap — ${HOSTILE}`);
    expect(lines()).toEqual([`[   0s] greeter FAIL docs_gap — ${HOSTILE}`]);
  });
});

describe('the live status line', () => {
  it('counts every finished attempt, interrupted ones too: its counts add up to what is done', () => {
    let text = '';
    const progress = createProgress({ stream: { write: (t: string) => (text += t), isTTY: true }, colour: false, live: true, quiet: false, total: 4, now: () => 0 });
    progress.started('a#1');
    progress.finished('a#1', 'PASS', 'passed');
    progress.started('a#2');
    progress.finished('a#2', 'PASS', 'passed');
    progress.started('a#3');
    progress.finished('a#3', 'INTERRUPTED', 'interrupted');
    progress.finished('a#4', 'INTERRUPTED', 'interrupted');
    // The status line is drawn last, after the finished lines, without a newline.
    expect(text.split('\n').at(-1)).toBe('[   0s] 4/4 done · 2 pass · 0 fail · 0 inconclusive · 0 skip · 2 interrupted');
  });
});
