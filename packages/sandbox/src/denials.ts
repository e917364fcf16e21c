// Filesystem denials of the enforced backend, read from the error lines a command printed: the kernel tells only the caller.
import { isAbsolute, normalize, resolve } from 'node:path';
import type { Payload } from '@quickloop/events';
import { OutputLines, type Stream } from './output-lines.js';
import { hiddenFromSandbox } from './rootfs.js';

/** One refused filesystem access, shaped as the payload of the sandbox.denied event it becomes. */
export type Denial = Payload<'sandbox.denied'>;

/** Where a path can and cannot be denied, for one sandbox. */
export interface DenialRules {
  /** Writable inside (the layout's folders and the private tmpfs): an EROFS claimed there is not real. */
  writable: readonly string[];
  /** Host paths the sandbox shows (read-only): a missing file under one is an ordinary missing file. */
  visible: readonly string[];
  /** The layout's own folders, the workspace first: a missing file there is the command's business. */
  own: readonly string[];
  /** Whether the host has a path (default: lstat); tests give a fixed host. */
  exists?: (path: string) => boolean;
}

/** At most this many denials per command: a recursive copy into /usr must not flood the stream. */
export const MAX_DENIALS = 20;


const EROFS_TEXT = 'Read-only file system';
const ENOENT_TEXT = 'No such file or directory';

/** What one line claims: a path and the error, before the rules decide whether it is the sandbox's doing. */
interface Claim {
  path: string;
  errno: 'EROFS' | 'ENOENT' | 'EACCES';
  write: boolean;
}

// node: `EROFS: read-only file system, open '/etc/x'` (also inside npm's `npm error rofs …` line).
// Two-path calls (symlink, link, rename, copyfile) name the path they write last: `'src' -> 'dest'`.
const NODE = /\b(EROFS|ENOENT|EACCES): [a-z -]+, ([a-z_]+) '([^']+)'(?: -> '([^']+)')?/;
// python: `OSError: [Errno 30] Read-only file system: '/etc/x'`, also pip's `… due to an OSError: [Errno 30] …`.
const PYTHON = /\[Errno (30|2|13)\] (?:Read-only file system|No such file or directory|Permission denied): (?:'([^']+)'|"([^"]+)")/;
// coreutils, bash, git, tee…: `tool: [what ]PATH: Read-only file system`, the message closing the line.
const GENERIC = /^(.*): (Read-only file system|No such file or directory|Permission denied)\s*$/;
// Quoted paths as coreutils prints them (ASCII or typographic quotes), git's and others' too.
const QUOTED = /'([^']+)'|‘([^’]+)’|"([^"]+)"|`([^']+)'/g;
// A missing path is a failed write when the tool says it was making something there.
const WRITE_VERB = /\b(cannot (touch|create|make|move|remove|write|link|open '[^']*' for writing)|failed to create|could not (create|lock|write|open '[^']*' for writing))\b/i;
const NODE_WRITE_SYSCALLS = new Set(['mkdir', 'rmdir', 'unlink', 'rename', 'symlink', 'link', 'copyfile', 'utime', 'chmod', 'chown', 'mkdtemp', 'write']);

/** The path and error one line claims, or undefined when the line has none of the known shapes. */
export function parseDenialLine(line: string): Claim | undefined {
  if (!/EROFS|ENOENT|EACCES|Read-only file system|No such file or directory|Permission denied/.test(line)) return undefined;
  const node = NODE.exec(line);
  if (node) {
    const errno = node[1] as Claim['errno'];
    return { errno, path: (node[4] ?? node[3]) as string, write: errno === 'EROFS' || NODE_WRITE_SYSCALLS.has(node[2] as string) };
  }
  const py = PYTHON.exec(line);
  if (py) {
    const errno = py[1] === '30' ? 'EROFS' : py[1] === '2' ? 'ENOENT' : 'EACCES';
    return { errno, path: (py[2] ?? py[3]) as string, write: errno === 'EROFS' };
  }
  const generic = GENERIC.exec(line);
  if (!generic) return undefined;
  const before = generic[1] as string;
  const errno = generic[2] === EROFS_TEXT ? 'EROFS' : generic[2] === ENOENT_TEXT ? 'ENOENT' : 'EACCES';
  const path = pathIn(before);
  if (path === undefined) return undefined;
  return { errno, path, write: errno === 'EROFS' || WRITE_VERB.test(before) };
}

/** The path in the text before the message: the last quoted one (`mv … 'a' to 'b'` names the target last), else the last field. */
function pathIn(before: string): string | undefined {
  let quoted: string | undefined;
  for (const m of before.matchAll(QUOTED)) quoted = m[1] ?? m[2] ?? m[3] ?? m[4];
  if (quoted !== undefined) return quoted;
  const field = before.split(': ').at(-1)?.trim() ?? '';
  if (field === '') return undefined;
  // `cat: /etc/a b` (a path may hold spaces) or `bash: line 1: x` (a relative one).
  if (field.startsWith('/') || !/\s/.test(field)) return field;
  // `error: could not lock config file /etc/x`: the last word that is an absolute path.
  return field.split(/\s+/).filter((w) => w.startsWith('/')).at(-1);
}

const under = (path: string, dir: string): boolean => path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

/**
 * Decides whether a claimed error is the sandbox's doing. EROFS anywhere the sandbox keeps read-only
 * (an absolute path inside a writable folder cannot have failed so: the line only mentions it); a
 * missing absolute path only when the host has it and the sandbox does not show it. EACCES is the
 * file's own mode, which the sandbox does not change.
 */
export function classify(claim: Claim, rules: DenialRules): Pick<Denial, 'path' | 'operation' | 'reason'> | undefined {
  const absolute = isAbsolute(claim.path);
  const path = absolute ? normalize(claim.path) : claim.path;
  if (claim.errno === 'EROFS') {
    if (absolute && rules.writable.some((d) => under(path, d))) return undefined;
    return { path, operation: 'write', reason: 'read_only' };
  }
  if (claim.errno !== 'ENOENT') return undefined;
  // `../../root/.npmrc`: resolved from the workspace, where the command started (a command that
  // changed folder names a path that is then rarely a host path the sandbox hides).
  const resolved = absolute ? path : rules.own[0] !== undefined ? resolve(rules.own[0], path) : undefined;
  if (resolved === undefined || !hiddenFromSandbox(resolved, rules.visible, rules.own, rules.exists)) return undefined;
  return { path: resolved, operation: claim.write ? 'write' : 'read', reason: 'hidden' };
}

/** Reads stdout and stderr line by line as they arrive (before any truncation) and keeps the distinct denials. */
export class DenialScanner {
  readonly #found = new Map<string, Denial>();
  readonly #lines: OutputLines;

  constructor(rules: DenialRules) {
    this.#lines = new OutputLines((stream, line) => {
      if (this.#found.size >= MAX_DENIALS) return;
      const claim = parseDenialLine(line);
      if (!claim) return;
      const denial = classify(claim, rules);
      if (!denial) return;
      const key = `${denial.operation}\0${denial.path}`;
      if (this.#found.has(key)) return;
      this.#found.set(key, { ...denial, detected_from: stream, line: line.slice(0, 300) });
    });
  }

  push(stream: Stream, chunk: Buffer): void {
    this.#lines.push(stream, chunk);
  }

  /** The denials found, in the order first seen; flushes a last line without a newline. */
  end(): Denial[] {
    this.#lines.end();
    return [...this.#found.values()];
  }
}
