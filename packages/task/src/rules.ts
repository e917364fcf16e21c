// The semantic rules the schema cannot say: safe names, hosts, duplicate pages, success.file, pattern sanity, ranges.
import { normalizeHost } from '@quickloop/sandbox/hosts';
import { createHash } from 'node:crypto';
import { unrunnable } from '@quickloop/events';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import type { Code } from './codes.js';
import { fieldPath, finding, quote, type Finding, type Position } from './finding.js';
import type { Segment } from './parse.js';
import { checkScript, compileSuccess } from './check.js';
import { list, type RawTask } from './raw.js';
import { probeShell } from './shell-probe.js';
import { MAX_TASK_BYTES, describeFsError, type Source } from './source.js';

export interface SuccessFile {
  /** success.file joined to the task file's directory as the user gave it (stable across machines). */
  path: string;
  text: string;
  sha256: string;
}

export interface RuleResult {
  errors: Finding[];
  /** What the shell tools' answers warn of (a pattern that matches any line): reported with the lint's findings. */
  warnings: Finding[];
  successFile?: SuccessFile;
}

type Locate = (path: readonly Segment[], key?: boolean) => Position | undefined;

/** A control character (C0, DEL, C1): a name is one line of text, shown in every report and terminal. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;

/** A DNS name: dot-separated labels of letters, digits and inner hyphens. */
export const HOST = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** The one normalisation every package uses (@quickloop/sandbox/hosts); '' when it is no host at all. */
export const normaliseHost: (value: string) => string = normalizeHost;

const BUDGET_MIN: Record<string, number> = { max_turns: 1, max_seconds: 1, max_command_seconds: 1, max_output_chars: 1, max_tokens: 0 };

/** Seconds become a Node timer in milliseconds; past 2^31-1 ms the timer fires at once, so every command would "time out". */
const MAX_TIMER_SECONDS = Math.floor(0x7fffffff / 1000);
const BUDGET_MAX: Record<string, [number, string]> = {
  max_seconds: [MAX_TIMER_SECONDS, ' (about 24 days; a longer wait does not fit a timer and would end the agent at once)'],
  max_command_seconds: [MAX_TIMER_SECONDS, ' (about 24 days; a longer wait does not fit a timer and would end every command at once)'],
};

export function semanticFindings(task: RawTask, source: Source, locate: Locate, prefix: readonly Segment[] = []): RuleResult {
  const errors: Finding[] = [];
  const warnings: Finding[] = [];
  const name = task.name.trim();
  const err = (code: Code, message: string, path: readonly Segment[]): void => {
    const full = [...prefix, ...path];
    errors.push(finding(code, message, { field: fieldPath(full), at: locate(full), ...(name ? { task: name } : {}) }));
  };

  if (name === '') err('QS012', "missing required field 'name' (it is blank)", ['name']);
  else if (CONTROL.test(task.name)) {
    const c = CONTROL.exec(task.name)?.[0] ?? '';
    err('QS040', `name ${quote(name)} holds a control character (U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}); a name is one line of text`, ['name']);
  }
  if (task.goal.trim() === '') err('QS012', "missing required field 'goal' (it is blank)", ['goal']);

  const pages = task.docs.path ?? [];
  const seen = new Map<string, number>();
  pages.forEach((page, i) => {
    let href: string;
    try {
      const url = new URL(page.trim());
      if (url.hostname === '') throw new Error('no host');
      href = url.href;
    } catch {
      err('QS013', `docs.path[${i}] must be an http(s) URL with a host, got ${quote(page)}`, ['docs', 'path', i]);
      return;
    }
    const secret = withCredentials(page);
    if (secret !== undefined) {
      err('QS013', `docs.path[${i}] ${secret}`, ['docs', 'path', i]);
      return;
    }
    const first = seen.get(href);
    if (first !== undefined) err('QS021', `docs.path lists ${quote(page)} twice (entries ${first} and ${i}); the route is an ordered list of distinct pages`, ['docs', 'path', i]);
    else seen.set(href, i);
  });
  if (task.docs.entrypoint !== undefined) {
    try {
      if (new URL(task.docs.entrypoint.trim()).hostname === '') throw new Error('no host');
    } catch {
      err('QS013', `docs.entrypoint must be an http(s) URL with a host, got ${quote(task.docs.entrypoint)}`, ['docs', 'entrypoint']);
    }
    const secret = withCredentials(task.docs.entrypoint);
    if (secret !== undefined) err('QS013', `docs.entrypoint ${secret}`, ['docs', 'entrypoint']);
  }
  const hostLists: [string, string[] | undefined][] = [
    ['docs.allow', task.docs.allow],
    ['network.allow', task.network?.allow],
    ['network.only', task.network?.only],
  ];
  for (const [key, hosts] of hostLists) {
    (hosts ?? []).forEach((h, i) => {
      if (!HOST.test(normaliseHost(h))) err('QS022', `${key}[${i}] must be a bare host name like docs.example.com, got ${quote(h)}`, [...key.split('.'), i]);
    });
  }

  for (const [key, min] of Object.entries(BUDGET_MIN)) {
    const v = task.budgets?.[key as keyof NonNullable<RawTask['budgets']>];
    const [max, why] = BUDGET_MAX[key] ?? [Number.MAX_SAFE_INTEGER, ''];
    if (v !== undefined && v < min) err('QS036', `budgets.${key} must be at least ${min}, got ${v}`, ['budgets', key]);
    else if (v !== undefined && v > max) err('QS036', `budgets.${key} must be at most ${max}${why}, got ${v}`, ['budgets', key]);
  }

  const s = task.success;
  if (s.script !== undefined && s.script.trim() === '') err('QS030', 'success.script is empty, so the check would pass on anything', ['success', 'script']);
  if (s.serve !== undefined && s.serve.trim() === '') err('QS032', 'success.serve is empty; give it the command that starts the server', ['success', 'serve']);

  // Every string bash will be handed: a setup or replay command, or any part of the check.
  const commandLists: [string, string[] | undefined][] = [
    ['setup', task.setup],
    ['replay', task.replay],
  ];
  for (const [key, items] of commandLists) {
    (items ?? []).forEach((c, i) => {
      const why = unrunnable(c);
      if (why !== undefined) err('QS037', `${key}[${i}] cannot be run by bash: ${why}`, [key, i]);
    });
  }
  const walk = (value: unknown, path: Segment[]): void => {
    if (typeof value === 'string') {
      // A path is read here, not given to bash; the file's own text is checked once it is read.
      if (path.length === 2 && path[1] === 'file') return;
      const why = unrunnable(value, Number.MAX_SAFE_INTEGER);
      if (why !== undefined) err('QS037', `${fieldPath(path)} cannot be part of the bash check: ${why}`, path);
    } else if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...path, i]));
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        const why = unrunnable(k, Number.MAX_SAFE_INTEGER);
        if (why !== undefined) err('QS037', `a key of ${fieldPath(path)} cannot be part of the bash check: ${why}`, path);
        else walk(v, [...path, k]);
      }
    }
  };
  walk(task.success, ['success']);
  const unrunnableFound = errors.some((e) => e.code === 'QS037');

  /** `matches` patterns, asked of grep -E itself once every other rule has run. */
  const greps: { label: string; where: Segment[]; pattern: string }[] = [];
  const patterns = (base: Segment[], block: { contains?: string | string[]; matches?: string | string[] }): void => {
    for (const kind of ['contains', 'matches'] as const) {
      const value = block[kind];
      const items = list(value);
      items.forEach((p, i) => {
        const where = typeof value === 'string' ? [...base, kind] : [...base, kind, i];
        const label = fieldPath(where);
        if (p === '') err('QS034', `${label} has an empty string, which matches anything`, where);
        else if (/[\r\n]/.test(p)) err('QS034', `${label} spans multiple lines, which grep would treat as alternatives; list the lines separately`, where);
        else if (kind === 'matches') greps.push({ label, where, pattern: p });
      });
    }
  };

  if (s.expect_output) {
    if (list(s.expect_output.contains).length + list(s.expect_output.matches).length === 0) {
      err('QS034', "success.expect_output needs 'contains' or 'matches' with at least one pattern", ['success', 'expect_output']);
    }
    patterns(['success', 'expect_output'], s.expect_output);
  }
  const w = s.wait_http;
  if (w) {
    const base: Segment[] = ['success', 'wait_http'];
    if (w.url !== undefined && w.path !== undefined) err('QS033', "success.wait_http has both 'url' and 'path'; give one (path polls the served port, url a full address)", [...base, 'url']);
    else if (w.url === undefined && w.path === undefined) err('QS033', "success.wait_http needs 'path' (on the served $QS_PORT) or 'url'", base);
    if (w.url !== undefined && !isHttpUrl(w.url.trim())) {
      // The url reaches qs_wait_http single-quoted, as written: `$QS_PORT` in it is never the served port.
      const hint = w.url.includes('$') ? `; the url is used as written (no ${w.url.includes('$QS_PORT') ? '$QS_PORT' : 'variables'}), so use 'path: ${pathOf(w.url)}' to poll the served port` : '';
      err('QS033', `success.wait_http.url must be an http(s) URL, got ${quote(w.url)}${hint}`, [...base, 'url']);
    }
    if (w.path !== undefined && /^[a-z]+:\/\//i.test(w.path.trim())) err('QS033', `success.wait_http.path must be a path like /health, got ${quote(w.path)}; use 'url' for a full address`, [...base, 'path']);
    if (w.path !== undefined && /\s/.test(w.path.trim())) err('QS033', `success.wait_http.path must not contain spaces, got ${quote(w.path)}`, [...base, 'path']);
    if (w.status !== undefined && (w.status < 100 || w.status > 599)) err('QS033', `success.wait_http.status must be an HTTP status (100–599), got ${w.status}`, [...base, 'status']);
    if (w.timeout !== undefined && w.timeout < 1) err('QS033', `success.wait_http.timeout must be at least 1 second, got ${w.timeout}`, [...base, 'timeout']);
    patterns(base, w);
    if (s.serve === undefined && pollsHere(w)) {
      err('QS039', `success.wait_http polls ${w.path !== undefined ? 'the served $QS_PORT' : quote(w.url)} but success.serve starts nothing: a server from setup or replay ends with its stage, so this check can never pass; add success.serve with the command that starts the server`, base);
    }
    for (const [k, v] of Object.entries(w.json ?? {})) {
      if (k === '') err('QS035', 'success.wait_http.json has an empty key', [...base, 'json']);
      else if (v !== null && typeof v === 'object') err('QS035', `success.wait_http.json.${k} must be a string, number, true/false or null (it is matched as text, not parsed), got a ${Array.isArray(v) ? 'list' : 'mapping'}`, [...base, 'json', k]);
      else if (typeof v === 'string' && /[\r\n]/.test(v)) err('QS035', `success.wait_http.json.${k} spans multiple lines`, [...base, 'json', k]);
    }
  }

  let successFile: SuccessFile | undefined;
  if (s.file !== undefined) {
    const result = readSuccessFile(s.file, source);
    if (typeof result === 'string') err('QS031', result, ['success', 'file']);
    else successFile = result;
  }
  if (!unrunnableFound && !errors.some((e) => e.code === 'QS031')) {
    const script = s.script ?? successFile?.text;
    const body = compileSuccess(s, successFile?.text);
    const check = checkScript(name || 'task', body);
    const scriptField: Segment[] = s.script !== undefined ? ['success', 'script'] : s.file !== undefined ? ['success', 'file'] : ['success'];
    const why = unrunnable(check);
    if (why !== undefined) err('QS037', `the compiled check (the helpers and ${fieldPath(scriptField)}) cannot be run by bash: ${why}`, scriptField);
    const probe = probeShell(check, greps.map((g) => g.pattern));
    greps.forEach((g, i) => {
      const complaint = probe?.patterns[i];
      if (complaint !== undefined) err('QS034', `${g.label} is not a pattern grep -E accepts: /${g.pattern}/: ${complaint}`, g.where);
      else if (probe?.anyLine[i] === true) {
        const full = [...prefix, ...g.where];
        const what = g.where[1] === 'wait_http' ? 'any answer with a body' : 'any run that printed something';
        warnings.push(finding('QS123', `${g.label} /${g.pattern}/ matches any line, so ${what} passes it: it checks nothing about the docs; match what a working quickstart prints`, { field: fieldPath(full), at: locate(full), ...(name ? { task: name } : {}) }));
      }
    });
    if (probe?.syntax && why === undefined) {
      const { line, message } = probe.syntax;
      // bash counts lines of the whole check; the author wrote only the block after the helpers.
      const preludeLines = lineCount(check.slice(0, check.length - body.length));
      const bodyLine = line === undefined ? undefined : line - preludeLines;
      const before = script === undefined ? lineCount(body) : lineCount(body.slice(0, body.length - `${script.replace(/\n+$/, '')}\n`.length));
      const scriptLine = bodyLine === undefined || script === undefined ? undefined : Math.min(Math.max(1, bodyLine - before), lineCount(`${script.replace(/\n+$/, '')}\n`));
      const what = s.script !== undefined ? 'success.script' : `success.file ${quote(successFile?.path ?? s.file)}`;
      const full = [...prefix, ...scriptField];
      const at = scriptLine === undefined ? locate(full) : scriptPosition(source, locate(full), s.script !== undefined, scriptLine);
      errors.push(
        finding('QS038', `${what}${scriptLine !== undefined ? ` line ${scriptLine}` : ''} is not valid bash: ${message}`, {
          field: fieldPath(full),
          at,
          ...(name ? { task: name } : {}),
        }),
      );
    }
  }
  return successFile ? { errors, warnings, successFile } : { errors, warnings };
}

const lineCount = (text: string): number => (text.match(/\n/g) ?? []).length;

/** What curl (and the other pollers) can ask: http(s), a host, and a port that is a number. */
function isHttpUrl(text: string): boolean {
  if (!/^https?:\/\/[^/\s]+/i.test(text)) return false;
  try {
    return new URL(text).hostname !== '';
  } catch {
    return false;
  }
}

/** The path part of a url that does not parse, for the hint: what follows its authority. */
const pathOf = (url: string): string => /^[a-z]+:\/\/[^/]*(\/[^\s]*)?/i.exec(url.trim())?.[1] ?? '/';

/** A local address: only a server the check itself starts could answer there. */
function pollsHere(w: { path?: string; url?: string }): boolean {
  if (w.path !== undefined) return true;
  try {
    const host = new URL((w.url ?? '').trim()).hostname.replace(/^\[|\]$/g, '').toLowerCase();
    return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || host === '0.0.0.0' || /^127\./.test(host);
  } catch {
    return false;
  }
}

/**
 * Where line `n` of the check's script is in the task file: a YAML block scalar (`script: |`) starts
 * on the line after its indicator; anything else (a JSON string, a one-line value) is pointed at as a
 * whole. success.file lines are the file's own, already in the message.
 */
function scriptPosition(source: Source, at: Position | undefined, inline: boolean, n: number): Position | undefined {
  if (!inline || at === undefined || source.format !== 'yaml') return at;
  const header = source.text.split('\n')[at.line - 1]?.slice(at.column - 1) ?? '';
  if (!/^[|>][-+0-9]*\s*(#.*)?$/.test(header.trimEnd())) return at;
  const text = source.text.split('\n')[at.line - 1 + n] ?? '';
  return { line: at.line + n, column: Math.max(0, text.search(/\S/)) + 1 };
}

/** The nearest folder from `dir` up that holds a quickloop.yaml or a .git; `dir` itself when none does. */
function projectRoot(dir: string): string {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(join(d, 'quickloop.yaml')) || existsSync(join(d, '.git'))) return d;
    if (dirname(d) === d) return resolve(dir);
  }
}

const inside = (path: string, root: string): boolean => {
  const r = relative(root, path);
  return r !== '..' && !r.startsWith(`..${sep}`) && !isAbsolute(r);
};

/** success.file is read now and carried in the event, so it is never written where the agent could read it. */
function readSuccessFile(file: string, source: Source): SuccessFile | string {
  const rel = file.trim();
  if (rel === '') return 'success.file is empty; give a path relative to the task file';
  if (isAbsolute(rel) || rel.startsWith('~')) return `success.file must be relative to the task file, got ${quote(file)}`;
  const abs = resolve(source.baseDir, rel);
  const shown = normalize(join(source.relBaseDir, rel));
  let size: number;
  try {
    const st = statSync(abs);
    if (!st.isFile()) return `success.file ${quote(shown)} is not a file`;
    size = st.size;
  } catch (error) {
    return `success.file ${quote(shown)}: ${describeFsError(error)}`;
  }
  // What the check file holds goes into every stream, results.json and report: a task from someone else
  // (a pull request) must not be able to name a host file (`../../.ssh/id_rsa`, or a link to one) as its check.
  if (!inside(realpathSync(abs), realpathSync(projectRoot(source.baseDir)))) return `success.file ${quote(shown)} is outside the task's project (the folder holding its quickloop.yaml or .git, else the task's own): a check can only be read from there`;
  if (size > MAX_TASK_BYTES) return `success.file ${quote(shown)} is over the 10 MB limit`;
  const bytes = readFileSync(abs);
  if (bytes.includes(0)) return `success.file ${quote(shown)} is a binary file, not a shell script`;
  let decoded: string;
  try {
    decoded = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // Decoding it anyway would put U+FFFD where the author's letters were, so the check would run other text.
    return `success.file ${quote(shown)} is not UTF-8 text (saved as Latin-1 or another code page?); save it as UTF-8`;
  }
  // A file saved by a Windows editor: bash would keep each line's CR (`test -d out\r` asks for another
  // folder) and read the byte-order mark as part of the first command, so a working run would fail its
  // check. The lines are read as the author wrote them, as the task file's own are.
  const text = decoded.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
  if (text.trim() === '') return `success.file ${quote(shown)} is empty, so the check would pass on anything`;
  return { path: shown, text, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/**
 * A route URL with `user:password@`: the docs reader refuses it at every read (so the run could never
 * have its quickstart), and task.loaded would carry the password into every stream, results.json and
 * report. The complaint shows the URL without them.
 */
function withCredentials(page: string): string | undefined {
  let url: URL;
  try {
    url = new URL(page.trim());
  } catch {
    return undefined;
  }
  if (url.username === '' && url.password === '') return undefined;
  const shown = `${url.protocol}//***@${url.host}${url.pathname}${url.search}${url.hash}`;
  return `must not carry a user name or password (${quote(shown)}): the docs reader refuses such a URL, and the task is recorded in every run's stream`;
}
