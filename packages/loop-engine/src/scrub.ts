// The content scrub (redaction layer 2): flagged files' content is replaced wherever it appears in outgoing text.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isRedacted } from './globs.js';

/** The normative defaults: always in force, whatever privacy.egress says. */
export const DEFAULT_GLOBS: readonly string[] = ['.env', '.env.*', 'secrets/**', '**/*.key'];

const SKIP_DIRS = new Set(['.git', '__pycache__', 'node_modules', '.venv']);
const MAX_BYTES = 1_000_000;
/** Shorter lines are left alone: they would mask common text (`}` or `fi`) everywhere. */
const MIN_LINE = 8;

export interface ScrubResult {
  text: string;
  /** Every flagged file whose content was found, sorted. */
  sources: string[];
}

interface FlaggedFile {
  rel: string;
  content: string;
  lines: string[];
}

/**
 * The text as it reads inside a JSON string: a programmatic result or a model's JSON quotes its
 * output, which turns `PASSWORD="x"` into `PASSWORD=\"x\"` and the whole file's newlines into `\n`.
 */
const jsonEscaped = (text: string): string => JSON.stringify(text).slice(1, -1);

/** Each text and, where it differs, its JSON-escaped form, longest first. */
function withEscaped(texts: string[]): string[] {
  return [...new Set(texts.flatMap((t) => [t, jsonEscaped(t)]))].sort((a, b) => b.length - a.length);
}

/** Environment variables whose values are credentials by their name. */
const SECRET_NAME = /(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|ACCESS_KEY)/i;

/** `[name, value]` of the secret-looking variables worth masking (short values would mask common text). */
export function envSecrets(env: Record<string, string | undefined>): [string, string][] {
  return Object.entries(env)
    .filter((e): e is [string, string] => typeof e[1] === 'string' && e[1].length >= MIN_LINE && SECRET_NAME.test(e[0]))
    .sort((a, b) => b[1].length - a[1].length);
}

interface CachedDir {
  mtimeNs: bigint;
  ino: bigint;
  dev: bigint;
  readAtNs: bigint;
  /** Names of files and of links to files. */
  files: string[];
  /** Names of directories and of links to directories. */
  dirs: string[];
  /** The flagged names among `files`, per glob set. */
  matched: Map<string, string[]>;
}

const isDirectory = (abs: string): boolean => {
  try {
    return statSync(abs).isDirectory();
  } catch {
    return false; // a dangling link
  }
};

const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;
/**
 * A change in the same clock tick as our read leaves the mtime as it was: an entry modified that
 * close to when we read it is read again next time (git's "racy" rule). Whole-second timestamps
 * (some filesystems) widen the window to two seconds.
 */
const racy = (mtimeNs: bigint, readAtNs: bigint): boolean => mtimeNs + (mtimeNs % 1_000_000_000n === 0n ? 2_000_000_000n : 50_000_000n) >= readAtNs;

export class Scrubber {
  readonly #dirs = new Map<string, CachedDir>();
  readonly #files = new Map<string, { stamp: string; readAtNs: bigint; file: FlaggedFile | undefined }>();
  readonly #loopDir: string;
  readonly #onBlindSpot: (rel: string, reason: string) => void;
  readonly #reported = new Set<string>();
  readonly #env: [string, string][];
  /** Whether a path is flagged, per glob set: a directory read again (its mtime moved) matches its names from here. */
  readonly #flaggedName = new Map<string, boolean>();

  /**
   * `env` holds secret-looking variables: the model CLIs need the operator's keys in their
   * environment, so a context command or an artifact that echoes one must not carry it on.
   */
  constructor(loopDir: string, onBlindSpot: (rel: string, reason: string) => void, env: [string, string][] = []) {
    this.#loopDir = loopDir;
    this.#onBlindSpot = onBlindSpot;
    this.#env = env;
  }

  /**
   * The flagged files of the loop directory (workspace included), sorted. The tree is walked once;
   * later calls stat each known directory and re-read only those whose entries changed (a new or
   * renamed file changes its directory's mtime), and re-read a flagged file only when it changed.
   * So a flagged file created after the first send is still caught (Looper's cached walk missed it)
   * without a full walk per prompt.
   */
  flagged(globs: readonly string[]): FlaggedFile[] {
    const key = globs.join('\0');
    const found: FlaggedFile[] = [];
    const seen = new Set<string>();
    // A link back up the tree is not walked (no cycles); two links to one folder are both walked,
    // since the path decides what the globs flag.
    const visit = (abs: string, rel: string, above: ReadonlySet<string> = new Set()): void => {
      const dir = this.#dir(abs, rel);
      if (!dir) return;
      seen.add(rel);
      const id = `${dir.dev}:${dir.ino}`;
      if (above.has(id)) return;
      const path = new Set(above).add(id);
      let names = dir.matched.get(key);
      if (!names) {
        names = dir.files.filter((name) => this.#isFlagged(rel ? `${rel}/${name}` : name, key, globs));
        dir.matched.set(key, names);
      }
      for (const name of names) {
        const childRel = rel ? `${rel}/${name}` : name;
        const file = this.#flaggedFile(join(abs, name), childRel);
        if (file) found.push(file);
      }
      for (const sub of dir.dirs) visit(join(abs, sub), rel ? `${rel}/${sub}` : sub, path);
    };
    visit(this.#loopDir, '');
    // Directories that went away take their entries with them.
    for (const rel of this.#dirs.keys()) if (!seen.has(rel)) this.#dirs.delete(rel);
    return found.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  }

  #isFlagged(path: string, key: string, globs: readonly string[]): boolean {
    const memo = `${key}\0\0${path}`;
    let flagged = this.#flaggedName.get(memo);
    if (flagged === undefined) {
      flagged = isRedacted(path, globs);
      this.#flaggedName.set(memo, flagged);
    }
    return flagged;
  }

  /** A directory's entries, from the cache while its mtime says nothing was added, removed or renamed. */
  #dir(abs: string, rel: string): CachedDir | undefined {
    let st;
    try {
      st = statSync(abs, { bigint: true });
    } catch {
      this.#dirs.delete(rel);
      return undefined;
    }
    const cached = this.#dirs.get(rel);
    if (cached && cached.mtimeNs === st.mtimeNs && cached.ino === st.ino && !racy(st.mtimeNs, cached.readAtNs)) return cached;
    const readAtNs = nowNs();
    let entries;
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      this.#dirs.delete(rel);
      return undefined;
    }
    const dir: CachedDir = { mtimeNs: st.mtimeNs, ino: st.ino, dev: st.dev, readAtNs, files: [], dirs: [], matched: new Map() };
    for (const e of entries) {
      // A linked directory is walked too: `secrets -> /shared/secrets` holds files as flagged as a real
      // `secrets/` does, and a context command can cat them through the link.
      const isDir = e.isDirectory() || (e.isSymbolicLink() && isDirectory(join(abs, e.name)));
      if (isDir) {
        if (!SKIP_DIRS.has(e.name)) dir.dirs.push(e.name);
      } else if (e.isFile() || e.isSymbolicLink()) dir.files.push(e.name);
    }
    this.#dirs.set(rel, dir);
    return dir;
  }

  /** A flagged file's content, re-read only when its size, times or inode changed. */
  #flaggedFile(abs: string, rel: string): FlaggedFile | undefined {
    let st;
    try {
      // stat follows links: a flagged name linked to a file (a shared .env) is as secret as the file.
      st = statSync(abs, { bigint: true });
    } catch {
      this.#files.delete(rel);
      return undefined; // a dangling link holds nothing to leak
    }
    if (!st.isFile()) return undefined;
    const stamp = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    const cached = this.#files.get(rel);
    if (cached && cached.stamp === stamp && !racy(st.mtimeNs, cached.readAtNs)) return cached.file;
    const readAtNs = nowNs();
    const file = this.#read(abs, rel);
    this.#files.set(rel, { stamp, readAtNs, file });
    return file;
  }

  #read(abs: string, rel: string): FlaggedFile | undefined {
    let reason: string | undefined;
    let content = '';
    try {
      if (statSync(abs).size > MAX_BYTES) reason = 'larger than 1MB';
      else content = new TextDecoder('utf-8', { fatal: true }).decode(readFileSync(abs));
    } catch (error) {
      reason = error instanceof TypeError ? 'not valid UTF-8' : 'unreadable';
    }
    if (reason) {
      if (!this.#reported.has(rel)) {
        this.#reported.add(rel);
        this.#onBlindSpot(rel, reason);
      }
      return undefined;
    }
    if (content.trim() === '') return undefined;
    const lines = content
      // Every line break Python's splitlines() knows: a file saved with bare CRs is still many lines.
      .split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/)
      .map((l) => l.trim())
      .filter((l) => l.length >= MIN_LINE)
      // Longest first, so a line that contains another is replaced whole.
      .sort((a, b) => b.length - a.length);
    return { rel, content, lines };
  }

  /** Replaces flagged content in `text`; hits are found on the original text so every source is named. */
  scrub(text: string, globs: readonly string[]): ScrubResult {
    // Nothing to mask (a call's empty stderr, say): no walk of the loop folder for it.
    if (text === '') return { text, sources: [] };
    const needles = this.flagged(globs).map((f) => ({ rel: f.rel, whole: withEscaped([f.content]), lines: withEscaped(f.lines) }));
    const hits = needles.filter((f) => [...f.whole, ...f.lines].some((n) => text.includes(n)));
    let out = text;
    for (const f of hits) {
      const marker = `[redacted:${f.rel}]`;
      for (const n of f.whole) out = out.split(n).join(marker);
      for (const l of f.lines) out = out.split(l).join(marker);
    }
    const sources = hits.map((f) => f.rel);
    for (const [name, value] of this.#env) {
      const forms = withEscaped([value]).filter((v) => out.includes(v));
      if (forms.length === 0) continue;
      for (const v of forms) out = out.split(v).join(`[redacted:env:${name}]`);
      sources.push(`env:${name}`);
    }
    return { text: out, sources };
  }
}
