// Python fnmatch, as Looper's redaction matching uses it: `*` crosses `/`, tried on every path suffix.

function toRegExp(pattern: string): RegExp {
  let out = '';
  let i = 0;
  while (i < pattern.length) {
    const ch = pattern[i] as string;
    i += 1;
    if (ch === '*') out += '.*';
    else if (ch === '?') out += '.';
    else if (ch === '[') {
      let j = i;
      if (pattern[j] === '!' || pattern[j] === ']') j += 1;
      while (j < pattern.length && pattern[j] !== ']') j += 1;
      if (j >= pattern.length) {
        out += '\\[';
      } else {
        let body = pattern.slice(i, j).replaceAll('\\', '\\\\');
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        else if (body.startsWith('^')) body = `\\${body}`;
        out += `[${body}]`;
        i = j + 1;
      }
    } else out += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^(?:${out})$`, 's');
}

// A scrub matches every path of a loop folder against the same few globs: compile each once
// (as Python's fnmatch caches its patterns).
const compiled = new Map<string, RegExp>();

/** fnmatch.fnmatch on a POSIX system (case-sensitive). */
export function fnmatch(name: string, pattern: string): boolean {
  let re = compiled.get(pattern);
  if (!re) {
    if (compiled.size >= 1024) compiled.clear();
    re = toRegExp(pattern);
    compiled.set(pattern, re);
  }
  return re.test(name);
}

/**
 * Looper's is_redacted: a leading `**\/` is dropped from the pattern, and the pattern is tried
 * against `a/b/c`, `b/c` and `c`, so a bare `.env` also catches `config/.env`.
 */
export function isRedactedPath(relPath: string, globs: readonly string[]): boolean {
  const parts = relPath.split('/').filter((p) => p !== '' && p !== '.');
  for (const raw of globs) {
    const pattern = raw.startsWith('**/') ? raw.slice(3) : raw;
    for (let i = 0; i < parts.length; i += 1) {
      if (fnmatch(parts.slice(i).join('/'), pattern)) return true;
    }
  }
  return false;
}
