// str(pathlib.Path(arg)): how Looper echoes the spec path it was given (lint prefixes every finding).

/** Collapses `//` and `.` segments and drops a trailing slash, but keeps `..` (Path does not resolve). */
export function pythonPathText(arg: string): string {
  if (arg === '') return '.';
  const absolute = arg.startsWith('/');
  const parts = arg.split('/').filter((p) => p !== '' && p !== '.');
  const body = parts.join('/');
  if (absolute) return `/${body}`;
  return body === '' ? '.' : body;
}
