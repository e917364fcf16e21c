// Python's shlex.split(s) in POSIX mode, which Looper applies to argv fields written as strings.

/** Thrown on an unterminated quote or a trailing backslash, the two inputs shlex refuses. */
export class ShlexError extends Error {}

const WHITESPACE = new Set([' ', '\t', '\r', '\n']);

export function shlexSplit(input: string): string[] {
  const words: string[] = [];
  let word = '';
  // A word exists once any character or quote pair is seen: `''` is one empty word, as in shlex.
  let inWord = false;
  let i = 0;
  while (i < input.length) {
    const ch = input[i] as string;
    if (WHITESPACE.has(ch)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i += 1;
    } else if (ch === '\\') {
      if (i + 1 >= input.length) throw new ShlexError('No escaped character');
      word += input[i + 1];
      inWord = true;
      i += 2;
    } else if (ch === "'") {
      const end = input.indexOf("'", i + 1);
      if (end < 0) throw new ShlexError('No closing quotation');
      word += input.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (ch === '"') {
      inWord = true;
      i += 1;
      let closed = false;
      while (i < input.length) {
        const c = input[i] as string;
        if (c === '"') {
          closed = true;
          i += 1;
          break;
        }
        // Inside double quotes only \" and \\ are escapes; any other backslash is kept literally.
        if (c === '\\' && i + 1 < input.length && (input[i + 1] === '"' || input[i + 1] === '\\')) {
          word += input[i + 1];
          i += 2;
        } else {
          word += c;
          i += 1;
        }
      }
      if (!closed) throw new ShlexError('No closing quotation');
    } else {
      word += ch;
      inWord = true;
      i += 1;
    }
  }
  if (inWord) words.push(word);
  return words;
}
