import { describe, expect, it } from 'vitest';
import { OutputCap, omissionMarker } from './output.js';

describe('OutputCap', () => {
  it('keeps short output whole', () => {
    const cap = new OutputCap(10);
    cap.push('abc');
    cap.push(Buffer.from('def'));
    expect(cap.result()).toEqual({ output: 'abcdef', originalChars: 6, truncated: false });
  });

  it('keeps the head and the tail around a marker that counts what was dropped', () => {
    const cap = new OutputCap(10);
    for (const c of 'abcdefghijklmnopqrstuvwxyz') cap.push(c);
    expect(cap.result()).toEqual({ output: `abcde${omissionMarker(16)}vwxyz`, originalChars: 26, truncated: true });
  });

  it('keeps the last non-empty line whole, whatever the cut kept of it: a failed check gives its reason there', () => {
    const cap = new OutputCap(20);
    cap.push('seq\n'.repeat(100));
    cap.push(Buffer.from("check failed: nothing the run printed contains 'Hello, Ada!'\n\n  \n"));
    expect(cap.result().output).not.toContain('check failed');
    expect(cap.lastLine()).toBe("check failed: nothing the run printed contains 'Hello, Ada!'");
    // Across chunks, with no newline at the end, and only whitespace: the line as printed, trimmed, or nothing.
    const split = new OutputCap(4);
    for (const piece of ['first\nsec', 'ond li', 'ne  ']) split.push(piece);
    expect(split.lastLine()).toBe('second line');
    const blank = new OutputCap(4);
    blank.push(' \n\t\n');
    expect(blank.lastLine()).toBe('');
    // A line is kept to its first 4096 characters, never cutting a character in two.
    const long = new OutputCap(4);
    long.push(`${'x'.repeat(4095)}🌍🌍\n`);
    expect(long.lastLine()).toBe('x'.repeat(4095));
  });

  it('keeps the tail right across many large chunks', () => {
    const cap = new OutputCap(8);
    cap.push('HEAD');
    for (let i = 0; i < 100; i++) cap.push('x'.repeat(1000));
    cap.push('TAIL');
    expect(cap.result()).toEqual({ output: `HEAD${omissionMarker(100_000)}TAIL`, originalChars: 100_008, truncated: true });
  });

  it('never cuts a character in two where the head ends or the tail begins (an emoji is two UTF-16 units)', () => {
    // A lone half of a pair is not text: a model API refuses the request that carries it.
    for (const max of [1, 2, 3, 7, 10, 11]) {
      for (const lead of ['', 'a']) {
        const cap = new OutputCap(max);
        const text = `${lead}${'🌍'.repeat(20)}x${'🌍'.repeat(20)}`;
        const bytes = Buffer.from(text);
        for (const piece of [bytes.subarray(0, 13), bytes.subarray(13)]) cap.push(piece);
        const r = cap.result();
        expect(r.output.isWellFormed(), `max ${max}, lead '${lead}': ${JSON.stringify(r.output)}`).toBe(true);
        expect(r.truncated).toBe(true);
        const m = /\[\.\.\. (\d+) characters omitted \.\.\.\]/.exec(r.output);
        expect(r.output.replace(omissionMarker(Number(m?.[1])), '').length + Number(m?.[1])).toBe(r.originalChars);
        expect(text.startsWith(r.output.slice(0, r.output.indexOf('\n[...')))).toBe(true);
        expect(text.endsWith(r.output.slice(r.output.indexOf('...]\n') + 5))).toBe(true);
      }
    }
  });

  it('does not split a UTF-8 character across chunks', () => {
    const cap = new OutputCap(100);
    const bytes = Buffer.from('é€');
    cap.push(bytes.subarray(0, 1));
    cap.push(bytes.subarray(1));
    expect(cap.result().output).toBe('é€');
  });
});
