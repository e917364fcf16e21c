// The characters a stream's text could disguise itself with in a report or a summary: every control and
// format character (bidi marks and overrides, zero-width ones, U+061C, U+2060–U+2064, tag characters),
// the line and paragraph separators, and a lone surrogate; not a tab or a line end. Used with the `u` flag.
export const DISGUISE = '(?![\\t\\n\\r])[\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\p{Cs}]';

/** A disguising character as the reader is shown it: `U+202E`. */
export const codePoint = (c: string): string => `U+${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;
