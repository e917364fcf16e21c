// Reads a task file's bytes and refuses what cannot be a task before any parser sees it: too big, empty, binary.
import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readFileSync, readSync, readlinkSync, statSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { finding, quote, type Finding } from './finding.js';

/** Larger files are refused unread: no task needs 10 MB, and the event carrying it must stay one sane line. */
export const MAX_TASK_BYTES = 10 * 1024 * 1024;

export type Format = 'yaml' | 'json';

export interface Source {
  /** As given on the command line, or `-` for stdin. */
  path: string;
  /** What messages call it: the path, or `stdin`. */
  display: string;
  /** Directory that `success.file` is resolved against (absolute). */
  baseDir: string;
  /** The same directory as the user would write it, for paths carried in events. */
  relBaseDir: string;
  text: string;
  sha256: string;
  format: Format;
}

export type SourceResult = { ok: true; source: Source } | { ok: false; path: string; display: string; error: Finding };

const fail = (path: string, display: string, error: Finding): SourceResult => ({ ok: false, path, display, error });

const formatOf = (path: string): Format => (extname(path).toLowerCase() === '.json' ? 'json' : 'yaml');

/** Reads a task file from disk, relative to `cwd`: a regular file, or a pipe (`<(cmd)`, /dev/stdin, a FIFO). */
export function readSource(path: string, cwd: string): SourceResult {
  const abs = resolve(cwd, path);
  let size: number;
  try {
    const st = statSync(abs);
    if (st.isDirectory()) return fail(path, path, finding('QS001', 'is a directory, not a task file'));
    // A device has no size and may never end (/dev/zero), a socket cannot be read as a file.
    if (st.isCharacterDevice() || st.isBlockDevice()) return fail(path, path, finding('QS001', 'is a device, not a task file'));
    if (st.isFIFO()) return readPipe(path, abs);
    if (!st.isFile()) return fail(path, path, finding('QS001', 'is not a regular file'));
    size = st.size;
  } catch (error) {
    return fail(path, path, finding('QS001', brokenLink(abs, error) ?? describeFsError(error)));
  }
  if (size > MAX_TASK_BYTES) return fail(path, path, finding('QS004', `is ${formatBytes(size)}, over the 10 MB limit for a task file`));
  let bytes: Buffer;
  try {
    bytes = readFileSync(abs);
  } catch (error) {
    return fail(path, path, finding('QS001', describeFsError(error)));
  }
  return fromBytes(bytes, { path, display: path, baseDir: dirname(abs), relBaseDir: dirname(path), format: formatOf(path) });
}

/** A pipe has no size to look at first: it is read up to the limit, so a writer that never stops is cut off. */
function readPipe(path: string, abs: string): SourceResult {
  const chunks: Buffer[] = [];
  let total = 0;
  let fd: number | undefined;
  try {
    fd = openSync(abs, 'r');
    for (;;) {
      const chunk = Buffer.alloc(65536);
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      if (total > MAX_TASK_BYTES) return fail(path, path, finding('QS004', 'is over the 10 MB limit for a task file'));
      chunks.push(chunk.subarray(0, n));
    }
  } catch (error) {
    return fail(path, path, finding('QS001', describeFsError(error)));
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return fromBytes(Buffer.concat(chunks), { path, display: path, baseDir: dirname(abs), relBaseDir: dirname(path), format: formatOf(path) });
}

/** A task read from stdin (`-`): its format is sniffed, and `success.file` resolves against cwd. */
export function stdinSource(bytes: Buffer, cwd: string): SourceResult {
  if (bytes.length > MAX_TASK_BYTES) return fail('-', 'stdin', finding('QS004', `is ${formatBytes(bytes.length)}, over the 10 MB limit for a task file`));
  const first = bytes.toString('utf8', 0, Math.min(bytes.length, 1024)).replace(/^\uFEFF/, '').trimStart()[0];
  const format: Format = first === '{' || first === '[' ? 'json' : 'yaml';
  return fromBytes(bytes, { path: '-', display: 'stdin', baseDir: cwd, relBaseDir: '.', format });
}

function fromBytes(bytes: Buffer, meta: Omit<Source, 'text' | 'sha256'>): SourceResult {
  if (bytes.length === 0) return fail(meta.path, meta.display, finding('QS002', 'is empty; a task needs at least name, goal, docs and success'));
  if (bytes.includes(0)) return fail(meta.path, meta.display, finding('QS003', 'is a binary file (it contains NUL bytes), not YAML or JSON'));
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return fail(meta.path, meta.display, finding('QS003', 'is not valid UTF-8 text, so it cannot be YAML or JSON'));
  }
  if (text.trim() === '') return fail(meta.path, meta.display, finding('QS002', 'holds only whitespace; a task needs at least name, goal, docs and success'));
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return { ok: true, source: { ...meta, text: text.replace(/^\uFEFF/, ''), sha256 } };
}

/** What a link that cannot be followed is (`ls` shows the file, so "no such file" alone misleads). */
function brokenLink(abs: string, error: unknown): string | undefined {
  const code = (error as { code?: string }).code;
  if (code === 'ELOOP') return 'is a link that leads back to itself (a loop of symbolic links)';
  if (code !== 'ENOENT') return undefined;
  try {
    if (!lstatSync(abs).isSymbolicLink()) return undefined;
    return `is a broken link (to ${quote(readlinkSync(abs))}, which does not exist)`;
  } catch {
    return undefined;
  }
}

export function describeFsError(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory, not a task file';
  return `cannot be read (${code ?? (error as Error).message})`;
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MB` : `${n} bytes`;
}
