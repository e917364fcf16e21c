// Redaction globs with Looper's semantics: Python fnmatch (where `*` crosses `/`), tried on every path suffix.
const cache = new Map<string, RegExp>();

/** Translates an fnmatch pattern: `*` any run (slashes included), `?` one char, `[...]` a class. */
export function fnmatchRegex(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (re) return re;
  let out = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i] as string;
    if (c === '*') out += '.*';
    else if (c === '?') out += '.';
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close === -1) out += '\\[';
      else {
        let body = pattern.slice(i + 1, close);
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        out += `[${body.replace(/\\/g, '\\\\')}]`;
        i = close;
      }
    } else out += c.replace(/[.+^${}()|\\/\]]/g, '\\$&');
  }
  re = new RegExp(`^${out}$`, 's');
  cache.set(pattern, re);
  return re;
}

/** True when the path (POSIX, relative to the loop dir) or any of its suffixes matches a glob. */
export function isRedacted(relPath: string, globs: readonly string[]): boolean {
  const parts = relPath.split('/').filter((p) => p !== '' && p !== '.');
  for (const raw of globs) {
    const pattern = raw.startsWith('**/') ? raw.slice(3) : raw;
    const re = fnmatchRegex(pattern);
    for (let i = 0; i < parts.length; i += 1) if (re.test(parts.slice(i).join('/'))) return true;
  }
  return false;
}
