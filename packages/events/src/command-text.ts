// Why a string cannot become a command line: what every stage that hands a task's text to bash checks first.

/**
 * Linux refuses a single argument of 32 pages or more (MAX_ARG_STRLEN, terminating NUL included)
 * with E2BIG, and the sandbox passes each command, and the whole check, as one `bash -c` argument.
 */
export const MAX_COMMAND_BYTES = 32 * 4096 - 1;

// A UTF-16 half without its other half: Node would send U+FFFD instead, a different command.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** One clause (`it contains a NUL byte…`) when bash cannot be given `text` as it is, else undefined. */
export function unrunnable(text: string, limit = MAX_COMMAND_BYTES): string | undefined {
  const nul = text.indexOf('\0');
  if (nul !== -1) return `it contains a NUL byte (at character ${nul + 1}), which no command line can carry`;
  const half = LONE_SURROGATE.exec(text);
  if (half) return `it contains a lone UTF-16 surrogate (\\u${half[0].charCodeAt(0).toString(16).toUpperCase()} at character ${half.index + 1}), which is not text bash can be given`;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limit) return `it is ${bytes} bytes long, over the ${limit} bytes one command line may hold`;
  return undefined;
}
