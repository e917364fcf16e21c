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

/** Environment variables whose values are credentials by their name. */
const SECRET_NAME = /(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|ACCESS_KEY)/i;

/** `[name, value]` of the secret-looking variables worth masking (short values would mask common text). */
export function envSecrets(env: Record<string, string | undefined>): [string, string][] {
  return Object.entries(env)
    .filter((e): e is [string, string] => typeof e[1] === 'string' && e[1].length >= MIN_LINE && SECRET_NAME.test(e[0]))
    .sort((a, b) => b[1].length - a[1].length);
}

function isFileTarget(abs: string): boolean {
  try {
    return statSync(abs).isFile();
  } catch {
    return false; // a dangling link holds nothing to leak
  }
}

export class Scrubber {
  readonly #loopDir: string;
  readonly #onBlindSpot: (rel: string, reason: string) => void;
  readonly #reported = new Set<string>();
  readonly #env: [string, string][];

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
   * Walks the loop directory on every call (workspace included): Looper cached the walk and so
   * missed flagged files created after the first send.
   */
  flagged(globs: readonly string[]): FlaggedFile[] {
    const found: FlaggedFile[] = [];
    const walk = (dir: string, rel: string): void => {
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const childRel = rel ? `${rel}/${e.name}` : e.name;
        const abs = join(dir, e.name);
        if (e.isDirectory()) {
          if (!SKIP_DIRS.has(e.name)) walk(abs, childRel);
          continue;
        }
        // A flagged name linked to a file (a shared .env) is as secret as the file; links to directories are not followed (no cycles).
        if (!isRedacted(childRel, globs) || !(e.isFile() || (e.isSymbolicLink() && isFileTarget(abs)))) continue;
        const file = this.#read(abs, childRel);
        if (file) found.push(file);
      }
    };
    walk(this.#loopDir, '');
    return found.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
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
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l.length >= MIN_LINE)
      // Longest first, so a line that contains another is replaced whole.
      .sort((a, b) => b.length - a.length);
    return { rel, content, lines };
  }

  /** Replaces flagged content in `text`; hits are found on the original text so every source is named. */
  scrub(text: string, globs: readonly string[]): ScrubResult {
    const hits = this.flagged(globs).filter((f) => text.includes(f.content) || f.lines.some((l) => text.includes(l)));
    let out = text;
    for (const f of hits) {
      const marker = `[redacted:${f.rel}]`;
      out = out.split(f.content).join(marker);
      for (const l of f.lines) out = out.split(l).join(marker);
    }
    const sources = hits.map((f) => f.rel);
    for (const [name, value] of this.#env) {
      if (!out.includes(value)) continue;
      out = out.split(value).join(`[redacted:env:${name}]`);
      sources.push(`env:${name}`);
    }
    return { text: out, sources };
  }
}
