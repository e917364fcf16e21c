// Makes text from inside a sandbox (or any stream) harmless on a terminal: no byte of it can move the cursor, set a title, clear the screen, reorder a line or forge one.
/**
 * How a piece of text is shown:
 * - `line`: a single-line field (a host, a path, a process name, a reason). Newline and tab are made
 *   visible too, so it cannot forge a second line or a column.
 * - `block`: output shown as lines (command output, model text). Newline and tab stay: they only
 *   start a line or step to the next tab stop, and cannot overwrite what is already shown.
 */
export type TextShape = 'line' | 'block';

// C0 controls but newline and tab (CR among them: it returns to the start of the line and lets the
// rest overwrite it), DEL and the C1 controls (U+009B is CSI on terminals that read 8-bit controls),
// line and paragraph separators, lone surrogates, and the format characters (Cf): bidi embeddings,
// overrides, isolates and marks reorder what follows, zero-width ones hide characters in a host or
// a path. Zero-width non-joiner and joiner stay in a block only: emoji sequences and several scripts
// need them, and they cannot reorder anything.
const BLOCK = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\p{Cs}]|(?![\u200c\u200d])\p{Cf}/gu;
const LINE = /[\x00-\x1f\x7f-\x9f\u2028\u2029\p{Cs}\p{Cf}]/gu;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function visible(ch: string): string {
  const named = NAMED[ch];
  if (named !== undefined) return named;
  const cp = ch.codePointAt(0) as number;
  const hex = cp.toString(16);
  if (cp <= 0xff) return `\\x${hex.padStart(2, '0')}`;
  if (cp <= 0xffff) return `\\u${hex.padStart(4, '0')}`;
  return `\\u{${hex}}`;
}

/**
 * Text made safe to print on a terminal, each unsafe character replaced by a visible escape in
 * JavaScript's notation: `\n`, `\r`, `\t`; `\xHH` up to U+00FF (ESC is `\x1b`, CSI `\x9b`, DEL
 * `\x7f`); `\uHHHH` for the rest of the BMP (U+202E is `\u202e`, a lone surrogate `\ud800`);
 * `\u{HHHHH}` beyond it. A backslash is left as it is, so a literal `\x1b` in the text looks the
 * same as an escaped ESC: the promise is that nothing acts on the terminal, not that the display can
 * be decoded back. Printable text, including every other non-ASCII letter and emoji, is unchanged.
 */
export function terminalSafe(text: string, shape: TextShape = 'line'): string {
  const pattern = shape === 'block' ? BLOCK : LINE;
  pattern.lastIndex = 0;
  if (!pattern.test(text)) return text;
  pattern.lastIndex = 0;
  return text.replace(pattern, visible);
}

// What chalk writes (SGR: colour and weight only), the one escape a stage's own stderr may hold.
const SGR = /\x1b\[[0-9;]*m/g;

/**
 * A block made safe like terminalSafe, keeping the SGR colour sequences in it: the logger's last
 * line of defence, for text a caller forgot to make safe. Callers still make sandbox text safe
 * themselves, since an SGR from inside (conceal, say) would survive here.
 */
export function terminalSafeStyled(text: string): string {
  if (!text.includes('\x1b')) return terminalSafe(text, 'block');
  let out = '';
  let last = 0;
  for (const m of text.matchAll(SGR)) {
    out += terminalSafe(text.slice(last, m.index), 'block') + m[0];
    last = m.index + m[0].length;
  }
  return out + terminalSafe(text.slice(last), 'block');
}

/** How many characters of a name a log line shows. */
export const SHOWN_NAME_CHARS = 80;

/**
 * A name (a task's, a loop's) as a log line shows it: made safe like terminalSafe, and cut to its
 * first SHOWN_NAME_CHARS characters with `…`, so a long name cannot fill a screen on every line.
 * Results, reports and events keep the name whole.
 */
export function shownName(name: string, max = SHOWN_NAME_CHARS): string {
  const chars = [...name];
  return terminalSafe(chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : name);
}
