import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, shownName, SHOWN_NAME_CHARS, terminalSafe } from './index.js';

// Anything a terminal may act on: C0 but newline and tab, DEL, C1, separators, bidi and other format characters.
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200b\u200e\u200f\u2060\ufeff\p{Cs}]/u;

describe('terminalSafe', () => {
  it('shows ESC sequences, bell, CR and C1 as escapes, in one documented style', () => {
    expect(terminalSafe('\x1b]0;owned\x07title')).toBe('\\x1b]0;owned\\x07title');
    expect(terminalSafe('a\x1b[2Jb')).toBe('a\\x1b[2Jb');
    expect(terminalSafe('ok\rFAIL', 'block')).toBe('ok\\rFAIL');
    expect(terminalSafe('\u009b31m\u0085\x7f\x00')).toBe('\\x9b31m\\x85\\x7f\\x00');
  });

  it('shows bidi overrides, isolates, marks and zero-width characters', () => {
    expect(terminalSafe('evil\u202egnp.exe')).toBe('evil\\u202egnp.exe');
    expect(terminalSafe('\u2066a\u2067b\u2068c\u2069\u202a\u202b\u202c\u202d')).toBe('\\u2066a\\u2067b\\u2068c\\u2069\\u202a\\u202b\\u202c\\u202d');
    expect(terminalSafe('pay\u200bpal.com\u200e\u200f\u061c\ufeff\u00ad')).toBe('pay\\u200bpal.com\\u200e\\u200f\\u061c\\ufeff\\xad');
    expect(terminalSafe('a\u2028b\u2029c', 'block')).toBe('a\\u2028b\\u2029c');
    // A tag character (beyond the BMP) gets the braced form.
    expect(terminalSafe('x\u{e0041}')).toBe('x\\u{e0041}');
  });

  it('shows lone surrogates but keeps paired ones (emoji) as they are', () => {
    expect(terminalSafe('a\ud800b\udfffc')).toBe('a\\ud800b\\udfffc');
    expect(terminalSafe('ok 🎉 done', 'line')).toBe('ok 🎉 done');
  });

  it('keeps newlines and tabs in a block, shows them in a single-line field', () => {
    expect(terminalSafe('one\n\ttwo\n', 'block')).toBe('one\n\ttwo\n');
    expect(terminalSafe('evil.example\n[  12.0s] PASS forged')).toBe('evil.example\\n[  12.0s] PASS forged');
    expect(terminalSafe('a\tb', 'line')).toBe('a\\tb');
  });

  it('keeps zero-width joiners in a block (emoji, scripts) but not in a field, where they hide a character', () => {
    const family = '👨\u200d👩\u200d👧';
    expect(terminalSafe(family, 'block')).toBe(family);
    expect(terminalSafe('goo\u200dgle.com')).toBe('goo\\u200dgle.com');
    expect(terminalSafe('a\u200cb')).toBe('a\\u200cb');
  });

  it('leaves printable text alone: ASCII, accents, CJK, backslashes', () => {
    const text = 'café 東京 Ünïcödé C:\\path\\x1b [ok] ~!@#$%^&*()';
    expect(terminalSafe(text)).toBe(text);
    expect(terminalSafe(text, 'block')).toBe(text);
    expect(terminalSafe('')).toBe('');
  });

  it('leaves no unsafe character in any string of every code unit', () => {
    let all = '';
    for (let u = 0; u < 0x10000; u += 1) all += String.fromCharCode(u);
    for (const shape of ['line', 'block'] as const) {
      const safe = terminalSafe(all, shape);
      expect(UNSAFE.test(safe)).toBe(false);
      expect(/\p{Cf}/u.test(safe.replace(/[\u200c\u200d]/g, ''))).toBe(false);
      // The same regex state must not leak from one call to the next (a global regex's lastIndex).
      expect(terminalSafe('\x1b', shape)).toBe('\\x1b');
    }
    expect(terminalSafe(all, 'line')).not.toMatch(/[\n\t\u200c\u200d]/);
  });

  it('is stable: making safe text safe again changes nothing', () => {
    const once = terminalSafe('\x1b[31mred\r\n\u202e\ud800', 'block');
    expect(terminalSafe(once, 'block')).toBe(once);
    expect(terminalSafe(once, 'line')).toBe(terminalSafe('\x1b[31mred\r\n\u202e\ud800', 'line'));
  });
});

describe('the logger as a last line of defence', () => {
  const capture = (): { stream: PassThrough; text: () => string } => {
    const stream = new PassThrough();
    let text = '';
    stream.on('data', (c: Buffer) => (text += c.toString()));
    return { stream, text: () => text };
  };

  it('without colour, writes no escape at all, keeping the lines of a block', () => {
    const out = capture();
    const log = createLogger({ stream: out.stream, colour: false });
    log.info('one\x1b]0;t\x07\ntwo\rthree\u202e');
    log.error('\x1b[31mred\x1b[0m');
    expect(out.text()).toBe('one\\x1b]0;t\\x07\ntwo\\rthree\\u202e\n\\x1b[31mred\\x1b[0m\n');
  });

  it('with colour, keeps its own SGR and nothing else', () => {
    const out = capture();
    const log = createLogger({ stream: out.stream, colour: true });
    log.warn(`${log.color.red('FAIL')} \x1b[2J\x1b]8;;http://x\x07link\u009b1A`);
    expect(out.text()).toBe('\x1b[31mFAIL\x1b[39m \\x1b[2J\\x1b]8;;http://x\\x07link\\x9b1A\n');
  });
});

describe('shownName', () => {
  it('keeps a name that fits, and cuts a long one to its first characters and an ellipsis', () => {
    expect(shownName('greeter-quickstart')).toBe('greeter-quickstart');
    const fits = 'n'.repeat(SHOWN_NAME_CHARS);
    expect(shownName(fits)).toBe(fits);
    const long = shownName('a'.repeat(2000));
    expect(long).toBe(`${'a'.repeat(SHOWN_NAME_CHARS - 1)}…`);
    expect([...long]).toHaveLength(SHOWN_NAME_CHARS);
  });

  it('counts characters, not UTF-16 units: an emoji is never cut in half', () => {
    const shown = shownName('🦀'.repeat(100), 5);
    expect(shown).toBe('🦀🦀🦀🦀…');
    expect(shown).not.toMatch(/\p{Cs}/u);
  });

  it('makes the name safe for a terminal as terminalSafe does', () => {
    expect(shownName('evil\u202egnp\x1b[2J')).toBe('evil\\u202egnp\\x1b[2J');
  });
});
