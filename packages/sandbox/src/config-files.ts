// The host's package-manager, git, wget and shell start-up config files as the enforced sandbox shows them: every line that holds a credential taken out.
import { accessSync, constants, mkdirSync, readdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { tokenLikeSegment } from './hosts.js';
import { readRegular } from './install-cache.js';
import { outerIds, within, type RootPlan } from './rootfs.js';

/**
 * The dialects, named by the tool that reads them: npm's ini, pip's (Python's configparser, with
 * indented continuation lines), wgetrc, git's config, uv's TOML, gem's YAML, a POSIX shell's
 * start-up files (/etc/profile, /etc/profile.d/*, /etc/bash.bashrc) and pam_env's /etc/environment
 * (`NAME=value` lines, which shells also source).
 */
export type ConfigFormat = 'npmrc' | 'pip' | 'wgetrc' | 'gitconfig' | 'toml' | 'gemrc' | 'shell' | 'environment' | 'csh';

/** What a removed line becomes: a comment (every one of these dialects takes `#`), so a reader inside knows why. */
export const REMOVED_NOTE = '# quickloop removed a credential from this line (secrets never enter the sandbox)';

/** Key names that hold a secret in any of these tools, whatever the tool calls the rest of the key. */
const SECRET_WORDS = /password|passwd|token|secret|api[-_]?key/;

/** npm's credential keys, alone or after a scope or a nerf dart (`//host/:_authToken`); npm's own spelling, lower-cased. */
const NPM_KEYS = new Set(['_auth', '_authtoken', '_password', 'username', 'password', 'email', 'cert', 'key', 'certfile', 'keyfile', 'otp']);

/** wget's credential commands: wget ignores case, `_` and `-` in a command's name, and so does this list. */
const WGET_KEYS = new Set(['user', 'password', 'httpuser', 'httppassword', 'ftpuser', 'ftppassword', 'proxyuser', 'proxypassword', 'header']);

/** git's credential keys (names are case-insensitive in git), besides SECRET_WORDS. */
const GIT_KEYS = new Set(['extraheader', 'smtppass']);

/** Schemes whose URLs need no `//` and take `\` for `/` (WHATWG's special schemes, as npm's and uv's parsers read them). */
const SPECIAL_SCHEMES = new Set(['http', 'https', 'ws', 'wss', 'ftp']);

const isSchemeChar = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
const isLetter = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
/** Where a URL written in a config line ends: whitespace, a quote, or an angle bracket. */
const ENDS_URL = /[\s"'<>`]/;
/** Where a URL's authority ends. */
const ENDS_AUTHORITY = /[\s"'<>`/\\?#]/;

/** For each position of `line`, the first position at or after it whose character matches `re` (line.length when none). */
function nextMatching(line: string, re: RegExp): Int32Array {
  const next = new Int32Array(line.length + 1);
  next[line.length] = line.length;
  for (let i = line.length - 1; i >= 0; i--) next[i] = re.test(line[i] as string) ? i : (next[i + 1] as number);
  return next;
}

/**
 * Whether the line holds a URL that carries a credential: a user (and password) before the host, a
 * query, or a path segment that looks like a key (the rule registries' plainUrl applies). Linear in
 * the line's length, however long and however many `:` it has.
 */
export function hasCredentialUrl(line: string): boolean {
  if (!line.includes(':')) return false;
  let urlEnd: Int32Array | undefined;
  let authorityEnd: Int32Array | undefined;
  let at: Int32Array | undefined;
  let query: Int32Array | undefined;
  let token: Int32Array | undefined;
  for (let colon = line.indexOf(':'); colon >= 0; colon = line.indexOf(':', colon + 1)) {
    let start = colon;
    while (start > 0 && isSchemeChar(line.charCodeAt(start - 1))) start--;
    while (start < colon && !isLetter(line.charCodeAt(start))) start++;
    if (start === colon) continue;
    const special = SPECIAL_SCHEMES.has(line.slice(start, colon).toLowerCase());
    let a = colon + 1;
    if (special) while (line[a] === '/' || line[a] === '\\') a++;
    else if (line.startsWith('//', a)) a += 2;
    else continue;
    urlEnd ??= nextMatching(line, ENDS_URL);
    authorityEnd ??= nextMatching(line, ENDS_AUTHORITY);
    at ??= nextMatching(line, /@/);
    query ??= nextMatching(line, /\?/);
    const auth = authorityEnd[a] as number;
    const end = urlEnd[a] as number;
    if ((at[a] as number) < auth || (query[auth] as number) < end) return true;
    token ??= tokenSegments(line);
    if ((token[auth] as number) < end) return true;
  }
  return false;
}

/** For each position, where the next path segment that looks like a key starts (line.length when none). */
function tokenSegments(line: string): Int32Array {
  const starts: number[] = [];
  const re = /[/\\]([A-Za-z0-9_]{20,})(?=$|[/\\?#\s"'<>`])/g;
  for (let m = re.exec(line); m; m = re.exec(line)) if (tokenLikeSegment(m[1] as string)) starts.push(m.index + 1);
  const next = new Int32Array(line.length + 1);
  next[line.length] = line.length;
  let j = starts.length - 1;
  for (let i = line.length - 1; i >= 0; i--) {
    if (j >= 0 && starts[j] === i) {
      next[i] = i;
      j--;
    } else next[i] = next[i + 1] as number;
  }
  return next;
}

interface Line {
  /** The line without its terminator (`\r\n` or `\n`). */
  text: string;
  /** Its terminator, kept as it was: '' on a last line without one. */
  end: string;
}

function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  let from = 0;
  while (from < text.length) {
    const nl = text.indexOf('\n', from);
    const stop = nl < 0 ? text.length : nl;
    const cr = stop > from && text[stop - 1] === '\r' && nl >= 0;
    lines.push({ text: text.slice(from, cr ? stop - 1 : stop), end: nl < 0 ? '' : cr ? '\r\n' : '\n' });
    from = nl < 0 ? text.length : nl + 1;
  }
  return lines;
}

const indentOf = (text: string): string => /^[ \t]*/.exec(text)?.[0] ?? '';
/** A line's text for judging: without a byte-order mark, trimmed. */
const bare = (text: string): string => text.replace(/^\uFEFF/, '').trim();
/** What a comment line would say uncommented (`# password = x` → `password = x`), for a credential commented out. */
const uncommented = (trimmed: string): string => trimmed.replace(/^[#;]+\s*/, '');

/** An HTTP authorization written out (`Authorization: Bearer …`, `bearer <token>`), as a commented-out header holds it. */
const AUTHORIZATION = /\bauthorization\s*:|\bbearer\s+\S{8,}/i;

const unquote = (key: string): string => (/^(["']).*\1$/.test(key) && key.length >= 2 ? key.slice(1, -1) : key);

/** npm: `key = value` (ini), the key before the first `=`, quotes and a `[]` suffix off. */
function npmCredential(trimmed: string): boolean {
  const eq = trimmed.indexOf('=');
  const key = unquote((eq < 0 ? trimmed : trimmed.slice(0, eq)).trim()).replace(/\[\]$/, '').toLowerCase();
  if (key === '') return false;
  // npm expands ${VAR} in keys too: such a key may be a credential's under another spelling.
  if (key.startsWith('//') || key.includes('${')) return true;
  const name = key.slice(key.lastIndexOf(':') + 1);
  return NPM_KEYS.has(name) || SECRET_WORDS.test(name);
}

/** pip (configparser), uv and gem keys: only what names a secret outright; their credentials are otherwise in URLs. */
function namedSecret(key: string): boolean {
  return SECRET_WORDS.test(unquote(key.trim()).toLowerCase());
}

/**
 * A commented-out npm setting that held a secret: a nerf-darted line or a key naming a password,
 * token or auth. Who one is (`username`, `email`) and where a file is (`certfile`) are left in a
 * comment, as is prose.
 */
function npmCommentedSecret(u: string): boolean {
  if (u.startsWith('//') || AUTHORIZATION.test(u)) return true;
  const eq = u.indexOf('=');
  if (eq <= 0) return false;
  const name = unquote(u.slice(0, eq).trim()).toLowerCase();
  const last = name.slice(name.lastIndexOf(':') + 1);
  return name.startsWith('//') || last === '_auth' || SECRET_WORDS.test(last);
}

/** A commented-out wget setting that held a secret: a password, or a header with an authorization (a stock wgetrc comments out harmless ones). */
function wgetCommentedSecret(u: string): boolean {
  const eq = u.indexOf('=');
  if (eq <= 0) return false;
  const name = u.slice(0, eq).trim().toLowerCase().replace(/[_-]/g, '');
  return (WGET_KEYS.has(name) && SECRET_WORDS.test(name)) || (name === 'header' && AUTHORIZATION.test(u.slice(eq + 1)));
}

/** wget: `command = value`, the command's case, `_` and `-` ignored. */
function wgetCredential(trimmed: string): boolean {
  const eq = trimmed.indexOf('=');
  if (eq <= 0) return false;
  const name = trimmed.slice(0, eq).trim().toLowerCase().replace(/[_-]/g, '');
  return WGET_KEYS.has(name);
}

/** A git key name (the part of a key line before `=`), if the text starts with one. */
function gitKeyName(text: string): string | undefined {
  return /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=|$|[#;])/.exec(text)?.[1];
}

const gitCredentialKey = (name: string): boolean => {
  const n = name.toLowerCase();
  return GIT_KEYS.has(n) || SECRET_WORDS.test(n);
};

/**
 * Whether a git value that starts at `from` runs on to the next line (a `\` last, outside a comment),
 * and whether it ends inside quotes: git's own reading of a value.
 */
function gitValueRuns(text: string, from: number, quoted: boolean): { continues: boolean; quoted: boolean } {
  let quote = quoted;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') {
      if (i === text.length - 1) return { continues: true, quoted: quote };
      i++;
    } else if (c === '"') quote = !quote;
    else if ((c === '#' || c === ';') && !quote) break;
  }
  return { continues: false, quoted: quote };
}

/** A git section header at the start of `text`: where it ends (after `]`), or undefined when the line is not one. */
function gitHeaderEnd(text: string): number | undefined {
  const open = text.indexOf('[');
  if (open < 0 || text.slice(0, open).trim() !== '') return undefined;
  let quote = false;
  for (let i = open + 1; i < text.length; i++) {
    const c = text[i];
    if (quote && c === '\\') i++;
    else if (c === '"') quote = !quote;
    else if (c === ']' && !quote) return i + 1;
  }
  return undefined;
}

type Verdict = 'keep' | 'remove';

const BOM = '\uFEFF';

/** What a removed line becomes (`note`), at the line's own indentation (and byte-order mark) and with its own terminator. */
const replaced = (line: Line, note: string): string => {
  const bom = line.text.startsWith(BOM) ? BOM : '';
  return `${bom}${indentOf(line.text.slice(bom.length))}${note}${line.end}`;
};

/** The comment a removed line becomes. */
const removed = (line: Line): string => replaced(line, REMOVED_NOTE);

function sanitizeNpmrc(lines: Line[]): string[] {
  return lines.map((line) => {
    const t = bare(line.text);
    if (t.startsWith('#') || t.startsWith(';')) return hasCredentialUrl(line.text) || npmCommentedSecret(uncommented(t)) ? removed(line) : line.text + line.end;
    return hasCredentialUrl(line.text) || (!t.startsWith('[') && t !== '' && npmCredential(t)) ? removed(line) : line.text + line.end;
  });
}

function sanitizeWgetrc(lines: Line[]): string[] {
  return lines.map((line) => {
    const t = bare(line.text);
    const credential = t.startsWith('#') ? wgetCommentedSecret(uncommented(t)) : wgetCredential(t);
    return hasCredentialUrl(line.text) || credential ? removed(line) : line.text + line.end;
  });
}

/**
 * pip's configparser: an option's value runs on over the lines indented deeper than the option's own
 * (blank lines and comments between them included). Each such line is judged alone, and a removed
 * option takes them all with it: left behind, they would continue the option before it.
 */
function sanitizePip(lines: Line[]): string[] {
  let option: { indent: number; verdict: Verdict } | undefined;
  return lines.map((line) => {
    const t = bare(line.text);
    const keep = line.text + line.end;
    if (t === '') return keep;
    if (t.startsWith('#') || t.startsWith(';')) {
      const u = uncommented(t);
      const sep = u.search(/[=:]/);
      return hasCredentialUrl(line.text) || (sep > 0 && namedSecret(u.slice(0, sep))) ? removed(line) : keep;
    }
    const indent = indentOf(line.text.replace(/^\uFEFF/, '')).length;
    if (option && indent > option.indent) return option.verdict === 'remove' || hasCredentialUrl(line.text) ? removed(line) : keep;
    if (/^\[.*\]/.test(t)) {
      option = undefined;
      return hasCredentialUrl(line.text) ? removed(line) : keep;
    }
    const sep = t.search(/[=:]/);
    const verdict: Verdict = hasCredentialUrl(line.text) || (sep > 0 && namedSecret(t.slice(0, sep))) ? 'remove' : 'keep';
    option = { indent, verdict };
    return verdict === 'remove' ? removed(line) : keep;
  });
}

/**
 * git's config: a `[credential …]` section, or one whose header names a URL with a credential, goes
 * whole (its keys would otherwise fall into the section before it); a credential key goes with the
 * lines its value runs on over (`\` last).
 */
function sanitizeGitconfig(lines: Line[]): string[] {
  const out: string[] = [];
  let dropSection = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as Line;
    const keep = line.text + line.end;
    const t = bare(line.text);
    if (t === '') {
      out.push(keep);
      continue;
    }
    if (t.startsWith('#') || t.startsWith(';')) {
      const name = gitKeyName(uncommented(t));
      out.push(dropSection || hasCredentialUrl(line.text) || (name !== undefined && gitCredentialKey(name)) ? removed(line) : keep);
      continue;
    }
    const text = line.text.replace(/^\uFEFF/, '');
    const headerEnd = gitHeaderEnd(text);
    let keyFrom = 0;
    if (headerEnd !== undefined) {
      const header = text.slice(0, headerEnd);
      const section = /^\s*\[\s*([^\s".\]]*)/.exec(header)?.[1]?.toLowerCase() ?? '';
      dropSection = section === 'credential' || hasCredentialUrl(header);
      keyFrom = headerEnd;
    }
    // The key defined on this line (a header may have one after it) and the lines its value runs on over.
    const rest = text.slice(keyFrom);
    const name = rest.trim() === '' || /^\s*[#;]/.test(rest) ? undefined : gitKeyName(rest);
    let last = i;
    if (name !== undefined) {
      const eq = rest.indexOf('=');
      let run = eq < 0 ? { continues: false, quoted: false } : gitValueRuns(rest, eq + 1, false);
      while (run.continues && last + 1 < lines.length) {
        last++;
        run = gitValueRuns((lines[last] as Line).text, 0, run.quoted);
      }
    }
    const group = lines.slice(i, last + 1);
    // The value as git reads it: each `\` that ends a line joins it to the next.
    const parts = [rest, ...group.slice(1).map((l) => l.text)];
    const joined = parts.map((p, k) => (k < parts.length - 1 ? p.slice(0, -1) : p)).join('');
    const credential = dropSection || (name !== undefined && gitCredentialKey(name)) || group.some((l) => hasCredentialUrl(l.text)) || hasCredentialUrl(joined);
    if (!credential) out.push(...group.map((l) => l.text + l.end));
    else if (headerEnd !== undefined && !dropSection) {
      // The section stays: only the key after its header goes.
      out.push(`${line.text.slice(0, line.text.length - text.length + headerEnd)} ${REMOVED_NOTE}${line.end}`, ...group.slice(1).map(removed));
    } else out.push(...group.map(removed));
    i = last;
  }
  return out;
}

interface TomlState {
  /** Brackets and braces open in the value being read. */
  depth: number;
  /** The delimiter of a multi-line string the value is inside of. */
  multi?: '"""' | "'''";
}

/** Reads TOML from `from` to the end of the line, as far as where a value's strings and brackets stand. */
function tomlScan(text: string, from: number, state: TomlState): TomlState {
  let { depth, multi } = state;
  let i = from;
  while (i < text.length) {
    if (multi) {
      let close = -1;
      for (let j = i; j < text.length; j++) {
        if (multi === '"""' && text[j] === '\\') j++;
        else if (text.startsWith(multi, j)) {
          close = j;
          break;
        }
      }
      if (close < 0) return { depth, multi };
      i = close + 3;
      multi = undefined;
      continue;
    }
    const c = text[i];
    if (c === '#') break;
    if (c === '"' || c === "'") {
      if (text.startsWith(c.repeat(3), i)) {
        multi = c === '"' ? '"""' : "'''";
        i += 3;
        continue;
      }
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += c === '"' && text[j] === '\\' ? 2 : 1;
      i = j + 1;
      continue;
    }
    if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') depth = Math.max(0, depth - 1);
    i++;
  }
  return { depth, multi };
}

/** uv's TOML: a removed key takes the lines its value (an array, a multi-line string) runs on over. */
function sanitizeToml(lines: Line[]): string[] {
  let value: (TomlState & { verdict: Verdict }) | undefined;
  return lines.map((line) => {
    const keep = line.text + line.end;
    if (value && (value.depth > 0 || value.multi)) {
      const next = tomlScan(line.text, 0, value);
      const verdict = value.verdict;
      value = { ...next, verdict };
      return verdict === 'remove' || hasCredentialUrl(line.text) ? removed(line) : keep;
    }
    value = undefined;
    const t = bare(line.text);
    if (t === '') return keep;
    if (t.startsWith('#')) {
      const u = uncommented(t);
      const eq = u.indexOf('=');
      return hasCredentialUrl(line.text) || (eq > 0 && namedSecret(u.slice(0, eq))) ? removed(line) : keep;
    }
    if (t.startsWith('[')) return hasCredentialUrl(line.text) ? removed(line) : keep;
    const eq = keyEnd(t);
    const verdict: Verdict = hasCredentialUrl(line.text) || (eq > 0 && namedSecret(t.slice(0, eq).replace(/["']/g, ''))) ? 'remove' : 'keep';
    if (eq > 0) {
      const text = line.text.replace(/^\uFEFF/, '');
      value = { ...tomlScan(text, text.indexOf(t) + eq + 1, { depth: 0 }), verdict };
    }
    return verdict === 'remove' ? removed(line) : keep;
  });
}

/** Where a TOML key (bare, quoted or dotted) ends at its `=`, or -1. */
function keyEnd(t: string): number {
  let quote: string | undefined;
  for (let i = 0; i < t.length; i++) {
    const c = t[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '=') return i;
  }
  return -1;
}

/**
 * gem's YAML: `key: value`, with Ruby symbols (`:sources:`). A removed key takes what is nested
 * under it: the lines indented deeper, and a list at its own indentation.
 */
function sanitizeGemrc(lines: Line[]): string[] {
  let dropping: number | undefined;
  return lines.map((line) => {
    const keep = line.text + line.end;
    const t = bare(line.text);
    if (t === '') return keep;
    const indent = indentOf(line.text.replace(/^\uFEFF/, '')).length;
    if (dropping !== undefined) {
      if (indent > dropping || (indent === dropping && t.startsWith('-'))) return removed(line);
      dropping = undefined;
    }
    const judged = t.startsWith('#') ? uncommented(t) : t;
    const key = /^(?:-\s+)?:?(["']?)([^:"']+)\1:(?:\s|$)/.exec(judged)?.[2];
    if (key !== undefined && namedSecret(key)) {
      if (!t.startsWith('#')) dropping = indent;
      return removed(line);
    }
    return hasCredentialUrl(line.text) ? removed(line) : keep;
  });
}

/**
 * Words that make a variable's name a secret's, looked for in the name upper-cased with its
 * underscores taken out (`GITHUB_TOKEN`, `npm_token`, `PGPASSWORD`, `OPENAI_API_KEY`, `APIKEY`,
 * `SLACK_WEBHOOK_URL`: whoever has a webhook's URL may post to it).
 */
const SECRET_NAME_WORDS = /TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|APIKEY|CREDENTIAL|PRIVATEKEY|ACCESSKEY|WEBHOOK/;

/** `AUTH` as a part of a name, or ending one (`NPM_CONFIG__AUTH`, `OAUTH`, `BASICAUTH`), and `AUTHN`, `AUTHZ`, `AUTHKEY`, `AUTHORIZATION`, `AUTHENTICATION`. */
const AUTH_PART = /^[A-Z0-9]*AUTH(?:N|Z|KEY|ORIZATION|ENTICATION)?$/;

/** Parts after an AUTH part that make the name say where or how one authenticates, not with what: `SSH_AUTH_SOCK`, `OS_AUTH_URL`, `OS_AUTH_TYPE`. */
const AUTH_ABOUT = new Set(['SOCK', 'SOCKET', 'URL', 'URI', 'HOST', 'PORT', 'TYPE', 'METHOD', 'MODE', 'FILE', 'PATH', 'DIR', 'PROVIDER', 'PLUGIN', 'DOMAIN', 'REALM', 'SERVER', 'ENDPOINT', 'SCHEME', 'VERSION']);

/** Parts that end in PASS and name no password: `BYPASS`, `COMPASS_HOME`, a filter's `LOWPASS`. */
const NOT_PASS = new Set(['BYPASS', 'COMPASS', 'ENCOMPASS', 'SURPASS', 'TRESPASS', 'OVERPASS', 'UNDERPASS', 'MULTIPASS', 'LOWPASS', 'HIGHPASS', 'BANDPASS', 'ALLPASS']);

/** What every name secretVariable takes contains, in some case. */
const SECRET_HINT = /TOKEN|SECRET|PASS|PWD|KEY|AUTH|CRED|PAT|WEBHOOK/i;

/**
 * Whether a shell variable's name looks like a secret's (case, and underscores for SECRET_NAME_WORDS,
 * ignored). Besides SECRET_NAME_WORDS, by its `_`-separated parts: an AUTH part (AUTH_PART) unless
 * the next part says where (AUTH_ABOUT); a part ending in PASS (`DB_PASS`, `PGPASS`, `SMTPPASS`) but
 * NOT_PASS; `PWD`, or a part ending in it, in a longer name (`MYSQL_PWD`, `DBPWD`: `PWD` and `OLDPWD`
 * are working folders); `KEY` as the last part of a longer name (`STRIPE_KEY`; not `SSH_PUBLIC_KEY`,
 * `KEY_ID`, `SSH_KEY_PATH`, `KEYBOARD`); `CREDS` or `CRED`; and `PAT`, a personal access token, in a
 * longer name (`GITHUB_PAT`). The rules err towards a secret: one that errs only empties the value
 * of a variable that was none (`GPG_KEY`, a key's fingerprint), as the structure is kept.
 */
export function secretVariable(name: string): boolean {
  // Most names hold none of the words below: they are let go at once (a file may have 250,000).
  if (!SECRET_HINT.test(name)) return false;
  const upper = name.toUpperCase();
  if (SECRET_NAME_WORDS.test(upper.replace(/_/g, ''))) return true;
  const parts = upper.split('_').filter((p) => p !== '');
  const longer = parts.length > 1;
  return parts.some((part, k) => {
    if (AUTH_PART.test(part)) return !AUTH_ABOUT.has(parts[k + 1] ?? '');
    if (part.endsWith('PASS')) return !NOT_PASS.has(part);
    if (part.endsWith('PWD')) return part === 'PWD' ? longer : part !== 'OLDPWD';
    if (part === 'KEY') return longer && k === parts.length - 1 && parts[k - 1] !== 'PUBLIC' && parts[k - 1] !== 'PUB';
    return part === 'CREDS' || part === 'CRED' || (part === 'PAT' && longer);
  });
}

/**
 * A variable assigned anywhere in a line: `NAME=`, `NAME+=`, `NAME[i]=`, and `NAME = x` (which no
 * shell reads as one, but a line meant as one), after `export`, `declare -x`, `readonly`, `env`, in
 * a quoted alias or a comment. Not a reference: a name right after `$` or `${` (`[ $NPM_TOKEN = x ]`).
 * Linear: a name starts only where no name character is before it.
 */
const ASSIGNMENT = /(?<![\w$])(?<!\$\{)([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]\n]{0,100}\])?\s*\+?=/g;
/** An expansion that assigns a value when the variable has none: `${NAME:=value}`, `${NAME=value}`. */
const EXPANSION_ASSIGNMENT = /\$\{([A-Za-z_][A-Za-z0-9_]*):?=(?!\})/g;
/** A PEM private key written out, whatever variable holds it. */
const PRIVATE_KEY_BLOCK = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;

/**
 * A command that assigns the variables it names without `=`: `read -r NAME` (from a here-document,
 * a here-string, a pipe), `printf -v NAME`, `mapfile NAME`, `readarray NAME`.
 */
const READS = /(?<![\w$./-])(?:read|mapfile|readarray|printf\s+-v)\s/g;
/** Where such a command's words end. */
const ENDS_COMMAND = /[;&|<>()\n]/g;

/** Whether shell text assigns a variable whose name looks like a secret's. */
function assignsSecret(text: string): boolean {
  if (text.includes('=')) {
    for (const m of text.matchAll(ASSIGNMENT)) if (secretVariable(m[1] as string)) return true;
    for (const m of text.matchAll(EXPANSION_ASSIGNMENT)) if (secretVariable(m[1] as string)) return true;
  }
  if (/read|printf/.test(text)) {
    // Every word up to the command's end is judged, and the search goes on after it: linear in the line.
    READS.lastIndex = 0;
    for (let m = READS.exec(text); m; m = READS.exec(text)) {
      ENDS_COMMAND.lastIndex = READS.lastIndex;
      const end = ENDS_COMMAND.exec(text)?.index ?? text.length;
      if (text.slice(READS.lastIndex, end).split(/\s+/).some((w) => /^[A-Za-z_]\w*$/.test(w) && secretVariable(w))) return true;
      READS.lastIndex = end;
    }
  }
  return false;
}

const shellCredential = (text: string): boolean => assignsSecret(text) || hasCredentialUrl(text) || PRIVATE_KEY_BLOCK.test(text);

/** How far a shell's reading has come at a line's end: what keeps the next line part of the same command. */
interface ShellState {
  /** The quote open at the line's end: `'`, `"`, a backquote, or `$'` (ANSI-C, with `\` escapes). */
  quote?: "'" | '"' | '`' | "$'";
  /** The line ended in a `\` outside single quotes: the next line continues it. */
  continued: boolean;
  /** Parentheses open (`$(`, a subshell, an array): the command runs on until they close. */
  depth: number;
  /** Depths at which an arithmetic `((` opened: a `<<` inside one is a shift, not a here-document. */
  arithmetic: number[];
  /** Here-documents whose bodies start after the line where the command ends, in order. */
  pending: Array<{ delimiter: string; tabs: boolean }>;
  /** The here-document whose body is being read. */
  body?: { delimiter: string; tabs: boolean };
}

/** Ends a word in the shell's grammar (outside quotes). */
const METACHAR = /[\s;&|()<>]/;

/** A here-document's delimiter word from `from` (after `<<` or `<<-` and blanks): its text unquoted, and where it ends. */
function heredocWord(text: string, from: number): { delimiter: string; end: number } {
  let delimiter = '';
  let i = from;
  while (i < text.length && !METACHAR.test(text[i] as string)) {
    const c = text[i] as string;
    if (c === "'" || c === '"') {
      const close = text.indexOf(c, i + 1);
      const stop = close < 0 ? text.length : close;
      delimiter += text.slice(i + 1, stop);
      i = stop + 1;
    } else if (c === '\\') {
      delimiter += text[i + 1] ?? '';
      i += 2;
    } else {
      delimiter += c;
      i++;
    }
  }
  return { delimiter, end: i };
}

/**
 * Reads one line the way a shell does as far as where its command ends: quotes, `\` escapes and a
 * `\` last, comments, parentheses and here-documents (their delimiters, then their bodies). Not a
 * parser: it only has to say which lines belong together, and it errs towards taking more.
 */
function shellScan(text: string, state: ShellState, heredocs: boolean): void {
  if (state.body) {
    const { delimiter, tabs } = state.body;
    if ((tabs ? text.replace(/^\t+/, '') : text) === delimiter) state.body = state.pending.shift();
    return;
  }
  state.continued = false;
  let dollar = false;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i] as string;
    const afterDollar = dollar;
    dollar = false;
    const quote = state.quote;
    if (quote === "'") {
      if (c === "'") state.quote = undefined;
      i++;
      continue;
    }
    if (quote !== undefined) {
      if (c === '\\') {
        if (i === n - 1) state.continued = true;
        i += 2;
        continue;
      }
      if ((quote === "$'" && c === "'") || c === quote) state.quote = undefined;
      i++;
      continue;
    }
    if (c === '\\') {
      if (i === n - 1) state.continued = true;
      i += 2;
      continue;
    }
    if (c === "'") state.quote = afterDollar ? "$'" : "'";
    else if (c === '"' || c === '`') state.quote = c;
    else if (c === '$') dollar = true;
    else if (c === '#' && (i === 0 || METACHAR.test(text[i - 1] as string))) break;
    else if (c === '(') {
      if (text[i + 1] === '(') {
        state.arithmetic.push(state.depth);
        state.depth += 2;
        i += 2;
        continue;
      }
      state.depth++;
    } else if (c === ')') {
      state.depth = Math.max(0, state.depth - 1);
      const open = state.arithmetic[state.arithmetic.length - 1];
      if (open !== undefined && state.depth <= open) state.arithmetic.pop();
    } else if (heredocs && c === '<' && text[i + 1] === '<' && text[i + 2] !== '<' && state.arithmetic.length === 0) {
      const tabs = text[i + 2] === '-';
      let j = i + (tabs ? 3 : 2);
      while (text[j] === ' ' || text[j] === '\t') j++;
      const word = heredocWord(text, j);
      if (word.end > j) state.pending.push({ delimiter: word.delimiter, tabs });
      i = Math.max(word.end, i + 2);
      continue;
    }
    i++;
  }
  if (state.quote === undefined && !state.continued && state.body === undefined) state.body = state.pending.shift();
}

const shellOpen = (s: ShellState): boolean => s.quote !== undefined || s.continued || s.depth > 0 || s.body !== undefined || s.pending.length > 0;

/** A line that starts as a `case` pattern does (`ci)`, `*)`, `(a|b)`): no command may stand in for it. */
const CASE_PATTERN = /^\s*\(?[^\s()]+\)/;

/**
 * Shell start-up files, and /etc/environment (`heredocs` false: pam_env knows none). The lines one
 * command spans (an open quote, a `\` last, open parentheses, a here-document's body) are judged
 * together: each line and their joined text. A command in which a line assigns a variable whose
 * name looks like a secret (secretVariable: `NAME=`, `export`/`declare -x`/`readonly NAME=`,
 * several on a line, `${NAME:=…}`, `read NAME`, `printf -v NAME`), holds a URL with a credential,
 * or writes out a private key goes whole: a multi-line value or a here-document goes with the line that opened it, and a
 * line that is part of one takes the rest of it along. Lines that only read a variable stay. A
 * removed line becomes `: # quickloop removed …` in a shell file (a command that does nothing, so
 * an `if … then … fi` left without its only command still parses; the plain comment when the
 * command began as a `case` pattern), the plain comment in /etc/environment.
 */
function sanitizeShell(lines: Line[], heredocs: boolean): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
    const first = i;
    const state: ShellState = { continued: false, depth: 0, arithmetic: [], pending: [] };
    do {
      const line = lines[i] as Line;
      shellScan(i === first ? line.text.replace(/^\uFEFF/, '') : line.text, state, heredocs);
      i++;
    } while (i < lines.length && shellOpen(state));
    const group = lines.slice(first, i);
    let credential = group.some((l) => shellCredential(l.text));
    if (!credential && group.length > 1) {
      // The command as the shell reads it: each `\` last joins its line to the next.
      const joined = group.map((l, k) => (k < group.length - 1 && /(?<!\\)(?:\\\\)*\\$/.test(l.text) ? l.text.slice(0, -1) : `${l.text}\n`)).join('');
      credential = shellCredential(joined);
    }
    if (!credential) out.push(...group.map((l) => l.text + l.end));
    else {
      const note = heredocs && !CASE_PATTERN.test(bare((group[0] as Line).text)) ? `: ${REMOVED_NOTE}` : REMOVED_NOTE;
      out.push(...group.map((l) => replaced(l, note)));
    }
  }
  return out;
}

/** What a file the sanitizer cannot edit safely is shown as: one comment, which every shell (csh too) reads. */
export const WITHHELD_NOTE = '# quickloop does not show this file inside the sandbox: it holds a credential that quickloop cannot take out and leave the rest as a shell reads it (secrets never enter the sandbox)';

/** csh's `setenv NAME value` (`set NAME = value` is an ASSIGNMENT). */
const SETENV = /(?<![\w$])setenv[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]+(?=[^\s#])/g;

/**
 * A csh snippet (`/etc/profile.d/*.csh`) that holds a credential is withheld whole: csh's grammar is
 * not sh's, and neither csh nor tcsh is on every machine this is built on to check an edited copy
 * against, while one comment is sure to parse.
 */
function sanitizeCsh(text: string): string {
  for (const m of text.matchAll(SETENV)) if (secretVariable(m[1] as string)) return `${WITHHELD_NOTE}\n`;
  return shellCredential(text) || shellCredential(text.replace(/\\\r?\n/g, '')) ? `${WITHHELD_NOTE}\n` : text;
}

/**
 * The file's text with every line that holds a credential replaced by REMOVED_NOTE, everything else
 * byte for byte (line endings, a missing last newline, comments, blank lines). Removed in every
 * format: a line with a URL that carries a user, a password, a query or a key-like path segment, and a
 * line that would be a credential if it were not commented out. Then per format:
 * - npmrc: every nerf-darted `//host/…` key, `_auth`, `_authToken`, `_password`, `username`,
 *   `password`, `email`, `cert`, `key`, `certfile`, `keyfile`, `otp` (after a scope too), a key
 *   npm would expand (`${…}`);
 * - gitconfig: `extraHeader`, `password`, `token` (any key naming one), `[credential …]` sections and
 *   sections whose header names a URL with a credential, whole;
 * - wgetrc: `user`, `password`, `http_user`, `http_password`, `ftp_user`, `ftp_password`,
 *   `proxy_user`, `proxy_password`, `header`;
 * - pip, toml, gemrc: a key naming a password, token, secret or API key;
 * - shell, environment: a command that assigns a variable named like a secret or writes out a
 *   private key, with all the lines it spans (sanitizeShell).
 * Keys are matched without regard to case. Returns `text` itself when nothing was removed.
 */
export function sanitizeConfig(text: string, format: ConfigFormat): string {
  if (format === 'csh') return sanitizeCsh(text);
  const lines = splitLines(text);
  const out =
    format === 'npmrc' ? sanitizeNpmrc(lines)
    : format === 'pip' ? sanitizePip(lines)
    : format === 'wgetrc' ? sanitizeWgetrc(lines)
    : format === 'gitconfig' ? sanitizeGitconfig(lines)
    : format === 'toml' ? sanitizeToml(lines)
    : format === 'gemrc' ? sanitizeGemrc(lines)
    : sanitizeShell(lines, format === 'shell');
  const joined = out.join('');
  return joined === text ? text : joined;
}

/** The system-wide config files of the tools a sandbox runs, where /etc holds them. */
const ETC_CONFIGS: ReadonlyArray<readonly [string, ConfigFormat]> = [
  ['/etc/npmrc', 'npmrc'],
  ['/etc/pip.conf', 'pip'],
  ['/etc/xdg/pip/pip.conf', 'pip'],
  ['/etc/xdg/uv/uv.toml', 'toml'],
  ['/etc/gitconfig', 'gitconfig'],
  ['/etc/wgetrc', 'wgetrc'],
  ['/etc/gemrc', 'gemrc'],
];

/**
 * The same under an install prefix (/usr, /usr/local, a toolchain's): npm's global config
 * (`<prefix>/etc/npmrc`) and its builtin one (`<npm>/npmrc`), git's, wget's and gem's system config
 * when built with that prefix, and pip's site config (`sys.prefix/pip.conf`).
 */
const PREFIX_CONFIGS: ReadonlyArray<readonly [string, ConfigFormat]> = [
  ['etc/npmrc', 'npmrc'],
  ['lib/node_modules/npm/npmrc', 'npmrc'],
  ['node_modules/npm/npmrc', 'npmrc'],
  ['etc/gitconfig', 'gitconfig'],
  ['etc/wgetrc', 'wgetrc'],
  ['etc/gemrc', 'gemrc'],
  ['pip.conf', 'pip'],
];

/** A config file larger than this is not read: inside, it is a comment saying so. */
export const MAX_CONFIG_BYTES = 1024 * 1024;
const TOO_LARGE = `# quickloop does not show this file inside the sandbox: it is larger than ${MAX_CONFIG_BYTES} bytes, too large to check for credentials\n`;

/** The shell's system-wide start-up files and pam_env's environment, which a login shell inside reads. */
const SHELL_CONFIGS: ReadonlyArray<readonly [string, ConfigFormat]> = [
  ['/etc/environment', 'environment'],
  ['/etc/profile', 'shell'],
  ['/etc/bash.bashrc', 'shell'],
];

/** The folder /etc/profile sources its snippets from. */
export const PROFILE_D = '/etc/profile.d';
/** At most this many files of PROFILE_D are read; a folder with more is shown as a note instead (coverConfigs). */
export const MAX_PROFILE_FILES = 200;

/** A file to judge in `format`, or a folder (`tooMany` files in it) shown as a note, none of its files read. */
export type ConfigCandidate = { path: string; format: ConfigFormat } | { path: string; tooMany: number };

/**
 * The files directly in a folder of shell snippets (regular files and links, by name), or the
 * folder itself when it holds more than MAX_PROFILE_FILES: reading each would make every sandbox
 * open as slow as the host's folder is large, and leaving some unread would show them as they are.
 */
export function profileCandidates(folder: string): ConfigCandidate[] {
  let names: string[];
  try {
    names = readdirSync(folder, { withFileTypes: true })
      .filter((d) => d.isFile() || d.isSymbolicLink())
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
  if (names.length > MAX_PROFILE_FILES) return [{ path: folder, tooMany: names.length }];
  return names.map((name) => ({ path: join(folder, name), format: /\.t?csh$/.test(name) ? 'csh' : 'shell' }));
}

/** The config files a tool inside may read from what the root shows (before each is resolved and judged). */
export function configCandidates(plan: RootPlan): ConfigCandidate[] {
  const prefixes = [...new Set(['/usr', '/usr/local', ...plan.toolchains.map((t) => t.prefix)])];
  return [
    ...ETC_CONFIGS.map(([path, format]) => ({ path, format })),
    ...prefixes.flatMap((p) => PREFIX_CONFIGS.map(([rel, format]) => ({ path: join(p, rel), format }))),
    ...SHELL_CONFIGS.map(([path, format]) => ({ path, format })),
    ...profileCandidates(PROFILE_D),
  ];
}

/** One config file (or folder) shown inside as the harness wrote it: `copy` (in the support folder) is bound read-only over `path`. */
export interface CoveredConfig {
  copy: string;
  path: string;
}

/** Whether `uid`/`gid` (no other group) may reach and read `file`: every folder above it searchable, the file readable. */
function readableAs(file: string, uid: number, gid: number): boolean {
  const may = (path: string, bits: number): boolean => {
    try {
      const st = statSync(path);
      const mode = st.mode;
      if (st.uid === uid) return ((mode >> 6) & bits) === bits;
      if (st.gid === gid) return ((mode >> 3) & bits) === bits;
      return (mode & bits) === bits;
    } catch {
      return false;
    }
  };
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (!may(dir, 1)) return false;
    if (dir === '/') break;
  }
  return may(file, 4);
}

/**
 * Whether the sandbox's user can read `file` as it stands: its host uid is the harness's own, or a
 * root harness's outerIds. A file it cannot read shows nothing inside, and covering it would make
 * bwrap mount over a path its user cannot reach.
 */
function sandboxCanRead(file: string): boolean {
  if (process.getuid?.() === 0) {
    const { uid, gid } = outerIds();
    return readableAs(file, uid, gid);
  }
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** A regular file's text (UTF-8, or byte for byte as Latin-1 when it is not UTF-8), 'large' past the bound, undefined for anything else. */
function readConfig(file: string): { text: string; encoding: 'utf8' | 'latin1' } | 'large' | undefined {
  // O_NONBLOCK there: a FIFO put where a config file was expected must not hold the harness.
  const bytes = readRegular(file, MAX_CONFIG_BYTES);
  if (bytes === undefined || bytes === 'large') return bytes;
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? { text, encoding: 'utf8' } : { text: bytes.toString('latin1'), encoding: 'latin1' };
}

/** What a folder of too many shell snippets is shown as: a folder holding only this note, as `README` (no `*.sh` for a profile to source). */
const tooManyNote = (count: number): string =>
  `# quickloop does not show this folder's files inside the sandbox: it holds ${count}, more than the ${MAX_PROFILE_FILES} it checks for credentials\n`;

/**
 * The host config files the root shows (`candidates`, configCandidates unless a test gives its own;
 * each judged at its real path, once) whose text holds a credential: each one's sanitized copy is
 * written into `dir` (the support folder) for bwrap to bind over it after the root's own binds.
 * Files with nothing to remove, missing, not regular, or unreadable by the sandbox's user are left
 * as they are. A few stats and reads of small files, every session: the host may change them
 * between sessions.
 */
export function coverConfigs(dir: string, plan: RootPlan, candidates: readonly ConfigCandidate[] = configCandidates(plan)): CoveredConfig[] {
  const covered: CoveredConfig[] = [];
  const seen = new Set<string>();
  const next = (name: string): string => {
    if (covered.length === 0) mkdirSync(join(dir, 'config'), { mode: 0o755 });
    return join(dir, 'config', `${covered.length}-${name}`);
  };
  for (const candidate of candidates) {
    let real: string;
    try {
      real = realpathSync(candidate.path);
    } catch {
      continue;
    }
    if (seen.has(real)) continue;
    seen.add(real);
    if (!plan.visible.some((v) => within(real, v)) || !sandboxCanRead(real)) continue;
    if ('tooMany' in candidate) {
      const copy = next(basename(real));
      mkdirSync(copy, { mode: 0o755 });
      writeFileSync(join(copy, 'README'), tooManyNote(candidate.tooMany), { mode: 0o644 });
      covered.push({ copy, path: real });
      continue;
    }
    const read = readConfig(real);
    if (read === undefined) continue;
    const shown = read === 'large' ? TOO_LARGE : sanitizeConfig(read.text, candidate.format);
    if (read !== 'large' && shown === read.text) continue;
    const copy = next(basename(real));
    writeFileSync(copy, shown, { mode: 0o644, encoding: read === 'large' ? 'utf8' : read.encoding });
    covered.push({ copy, path: real });
  }
  return covered;
}
