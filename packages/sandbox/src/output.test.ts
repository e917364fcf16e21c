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

  it('keeps the tail right across many large chunks', () => {
    const cap = new OutputCap(8);
    cap.push('HEAD');
    for (let i = 0; i < 100; i++) cap.push('x'.repeat(1000));
    cap.push('TAIL');
    expect(cap.result()).toEqual({ output: `HEAD${omissionMarker(100_000)}TAIL`, originalChars: 100_008, truncated: true });
  });

  it('does not split a UTF-8 character across chunks', () => {
    const cap = new OutputCap(100);
    const bytes = Buffer.from('é€');
    cap.push(bytes.subarray(0, 1));
    cap.push(bytes.subarray(1));
    expect(cap.result().output).toBe('é€');
  });
});
