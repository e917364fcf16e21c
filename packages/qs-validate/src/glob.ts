// Glob expansion for task arguments, done here because shells differ (PowerShell, quoted args) and Node 20 has no fs.glob.
import { lstatSync, readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve, sep } from 'node:path';

export const GLOB_CHARS = /[*?[]/;

/** One path segment's pattern as a RegExp: `*` and `?` never cross `/`, `[…]` is a class. */
function segmentRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        let body = pattern.slice(i + 1, end).replace(/\\/g, '\\\\');
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        re += `[${body}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  // Hidden files only match a pattern that names the dot, as in shells.
  return new RegExp(`^${pattern.startsWith('.') ? '' : '(?!\\.)'}${re}$`);
}

const list = (dir: string): string[] => {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
};

const isDir = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/** A folder itself, not a link to one: `**` does not follow links, as in shells, so a link loop cannot repeat tasks. */
const isRealDir = (path: string): boolean => {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
};

/** Paths matching `pattern` (relative ones resolved against cwd but returned as written), sorted. */
export function expandGlob(pattern: string, cwd: string): string[] {
  const absolute = isAbsolute(pattern);
  const parts = pattern.split(/[\\/]+/).filter((p, i) => p !== '' || (i === 0 && absolute));
  let current: string[] = [absolute ? sep : ''];
  if (absolute) parts.shift();
  for (const [index, part] of parts.entries()) {
    const last = index === parts.length - 1;
    const next: string[] = [];
    for (const base of current) {
      const dir = resolve(cwd, base === '' ? '.' : base);
      if (part === '**') {
        // Zero or more directories.
        const stack = [base];
        while (stack.length > 0) {
          const d = stack.pop()!;
          next.push(d);
          for (const name of list(resolve(cwd, d === '' ? '.' : d))) {
            const child = d === '' ? name : join(d, name);
            if (!name.startsWith('.') && isRealDir(resolve(cwd, child))) stack.push(child);
          }
        }
      } else if (!GLOB_CHARS.test(part)) {
        const child = base === '' ? part : join(base, part);
        if (last || isDir(resolve(cwd, child))) next.push(child);
      } else {
        const re = segmentRegExp(part);
        for (const name of list(dir)) {
          if (!re.test(name)) continue;
          const child = base === '' ? name : join(base, name);
          if (last || isDir(resolve(cwd, child))) next.push(child);
        }
      }
    }
    current = next;
  }
  return [...new Set(current)].filter((p) => p !== '').sort();
}
