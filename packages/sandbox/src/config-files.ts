// The host's package-manager, git, wget and shell start-up config files as the enforced sandbox shows them: every credential taken out.
import { accessSync, constants, mkdirSync, readdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { tokenLikeSegment } from './hosts.js';
import { readRegular } from './install-cache.js';
import { outerIds, within, type RootPlan } from './rootfs.js';

/**
 * The dialects, named by the tool that reads them: npm's ini, pip's (Python's configparser, with
 * indented continuation lines), wgetrc, git's config, uv's TOML, gem's YAML, a POSIX shell's
 * start-up files (/etc/profile, /etc/profile.d/*, /etc/bash.bashrc), pam_env's /etc/environment
 * (`NAME=value` lines, which shells also source), and csh's snippets (/etc/profile.d/*.csh).
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
const SECRET_NAME_WORDS = /TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|APIKEY|CREDENTIAL|PRIVATEKEY|ACCESSKEY|WEBHOOK|JWT/;

/** `AUTH` as a part of a name, or ending one (`NPM_CONFIG__AUTH`, `OAUTH`, `BASICAUTH`), and `AUTHN`, `AUTHZ`, `AUTHKEY`, `AUTHORIZATION`, `AUTHENTICATION`. */
const AUTH_PART = /^[A-Z0-9]*AUTH(?:N|Z|KEY|ORIZATION|ENTICATION)?$/;

/** Parts after an AUTH part that make the name say where or how one authenticates, not with what: `SSH_AUTH_SOCK`, `OS_AUTH_URL`, `OS_AUTH_TYPE`. */
const AUTH_ABOUT = new Set(['SOCK', 'SOCKET', 'URL', 'URI', 'HOST', 'PORT', 'TYPE', 'METHOD', 'MODE', 'FILE', 'PATH', 'DIR', 'PROVIDER', 'PLUGIN', 'DOMAIN', 'REALM', 'SERVER', 'ENDPOINT', 'SCHEME', 'VERSION']);

/** Parts that end in PASS and name no password: `BYPASS`, `COMPASS_HOME`, a filter's `LOWPASS`. */
const NOT_PASS = new Set(['BYPASS', 'COMPASS', 'ENCOMPASS', 'SURPASS', 'TRESPASS', 'OVERPASS', 'UNDERPASS', 'MULTIPASS', 'LOWPASS', 'HIGHPASS', 'BANDPASS', 'ALLPASS']);

/** What every name secretVariable takes contains, in some case. */
const SECRET_HINT = /TOKEN|SECRET|PASS|PWD|KEY|AUTH|CRED|PAT|WEBHOOK|JWT/i;
/** Bundler's credential for a gem host: `BUNDLE_` and the host with each `.` as `__` (`BUNDLE_GEMS__EXAMPLE__COM=user:pass`); its settings have no `__`. */
const BUNDLER_HOST = /^BUNDLE_[A-Z0-9_]*[A-Z0-9]__[A-Z0-9]/i;

/**
 * Whether a shell variable's name looks like a secret's (case, and underscores for SECRET_NAME_WORDS,
 * ignored). Besides SECRET_NAME_WORDS, by its `_`-separated parts: an AUTH part (AUTH_PART) unless
 * the next part says where (AUTH_ABOUT); a part ending in PASS (`DB_PASS`, `PGPASS`, `SMTPPASS`) but
 * NOT_PASS; `PWD`, or a part ending in it, in a longer name (`MYSQL_PWD`, `DBPWD`: `PWD` and `OLDPWD`
 * are working folders); `KEY` as the last part of a longer name (`STRIPE_KEY`; not `SSH_PUBLIC_KEY`,
 * `KEY_ID`, `SSH_KEY_PATH`, `KEYBOARD`); `CREDS` or `CRED`; and `PAT`, a personal access token, in a
 * longer name (`GITHUB_PAT`); and Bundler's per-host variables (BUNDLER_HOST). The rules err towards a secret: one that errs only empties the value
 * of a variable that was none (`GPG_KEY`, a key's fingerprint), as the structure is kept.
 */
export function secretVariable(name: string): boolean {
  if (BUNDLER_HOST.test(name)) return true;
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
 * A variable assigned anywhere in a text: `NAME=`, `NAME+=`, `NAME[i]=`, and `NAME = x` (which no
 * shell reads as one, but a line meant as one), after `export`, `declare -x`, `readonly`, `env`, in
 * a quoted alias or a comment. Not a reference: a name right after `$` or `${` (`[ $NPM_TOKEN = x ]`).
 * Linear: a name starts only where no name character is before it.
 */
const ASSIGNMENT = /(?<![\w$])(?<!\$\{)([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]\n]{0,100}\])?\s*\+?=/g;
/** An expansion that assigns or supplies a value when the variable has none: `${NAME:=value}`, `${NAME=value}`, `${NAME:-value}`. */
const EXPANSION_ASSIGNMENT = /\$\{([A-Za-z_][A-Za-z0-9_]*):?[-=](?!\})/g;
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
  if (text.includes('=') || text.includes('${')) {
    for (const m of text.matchAll(ASSIGNMENT)) if (secretVariable(m[1] as string)) return true;
    for (const m of text.matchAll(EXPANSION_ASSIGNMENT)) if (secretVariable(m[1] as string)) return true;
  }
  if (/read|printf/.test(text)) {
    // Every word up to the command's end is judged, and the search goes on after it: linear in the text.
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

/** The start of a value written out (after a quote, maybe): not a `$reference`, not the next `-option`. */
const LITERAL_START = `['"]?(?![$-])`;
/** The characters of such a value, up to its word's end. */
const LITERAL_CHAR = `[^\\s'"$\\\\]`;
/**
 * A header that carries a credential, written out: `Authorization: Bearer …` (any scheme, or none),
 * `Proxy-Authorization:`, `Private-Token:` (GitLab), an `X-…-Key:` or `X-…-Token:` header, a bare
 * `Bearer …`; eight characters or more, so a comment that only names the header stays.
 */
const HEADER_CREDENTIAL = /\b(?:(?:proxy-)?authorization\s*:\s*(?:(?:bearer|basic|token|bot|digest)\s+)?|(?:private|job|deploy)-token\s*:\s*|x-[\w-]*(?:api-?key|token|secret)\s*:\s*|bearer\s+)[^\s$'"\\]{8,}/i;
/** `user:password` written out; a uid:gid (`1000:1000`) is none. */
const USER_PASSWORD = `(?!['"]?\\d+:\\d+(?![^\\s'"]))${LITERAL_START}[^\\s'"$\\\\:]*:${LITERAL_START}${LITERAL_CHAR}`;
/** An option that is given a user and password (`curl -u bob:pw`, `--user`, `--proxy-user`). */
const USER_OPTION = '(?:-u|--user|--proxy-user)';
/** An option whose value is a password or token (`--password`, `--http-password`, `--token`, `--api-key`). */
const SECRET_OPTION = '--(?:[\\w-]*-)?(?:password|passwd|token|api-?key|secret)';
/** Either option as a word of its own, and the word after it that holds the credential. */
const USER_OPTION_WORD = new RegExp(`^${USER_OPTION}$`);
const USER_PASSWORD_WORD = new RegExp(`^${USER_PASSWORD}`);
const SECRET_OPTION_WORD = new RegExp(`^${SECRET_OPTION}$`, 'i');
const SECRET_VALUE_WORD = new RegExp(`^${LITERAL_START}${LITERAL_CHAR}`);
/** Either option with its value, in one word (`--user=bob:pw`, `-ubob:pw`) or in text (a quoted alias, a function body). */
const OPTION_CREDENTIAL = new RegExp(`(?:^|[\\s'"])(?:${USER_OPTION}(?:=|\\s+|(?=[^\\s=-]))${USER_PASSWORD}|${SECRET_OPTION}(?:=|\\s+)${LITERAL_START}${LITERAL_CHAR})`, 'i');

const shellCredential = (text: string): boolean =>
  assignsSecret(text) || hasCredentialUrl(text) || PRIVATE_KEY_BLOCK.test(text) || HEADER_CREDENTIAL.test(text) || OPTION_CREDENTIAL.test(text);

/** Shell text that holds a credential, read also without its quotes (`"https://bob:pw"@host`). */
const credentialIn = (text: string): boolean => shellCredential(text) || (/["']/.test(text) && hasCredentialUrl(text.replace(/["']/g, '')));

/** What a file the sanitizer cannot edit safely is shown as: one comment, which every shell (csh too) reads. */
export const WITHHELD_NOTE = '# quickloop does not show this file inside the sandbox: it holds a credential that quickloop cannot take out and leave the rest as a shell reads it (secrets never enter the sandbox)';

/** Thrown where ShellLexer cannot be sure how both dash and bash read the text. */
class Unsure extends Error {}

/** Characters that end a word outside quotes. */
const METACHARS = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>']);
/** The operators of sh and bash that start with each metacharacter, longest first. */
const OPERATORS: Record<string, string[]> = {
  ';': [';;&', ';;', ';&', ';'],
  '&': ['&&', '&>>', '&>', '&'],
  '|': ['||', '|&', '|'],
  '<': ['<<<', '<<-', '<<', '<>', '<&', '<'],
  '>': ['>>', '>&', '>|', '>'],
  '(': ['('],
  ')': [')'],
};

/** The operator at t[i], a metacharacter other than a blank or a newline. */
function operatorAt(t: string, i: number): string {
  for (const op of OPERATORS[t[i] as string] as string[]) if (t.startsWith(op, i)) return op;
  return t[i] as string;
}
/** The operators whose next word is a file (or a here-string), not an argument. */
const REDIRECTS = new Set(['<', '>', '>>', '<>', '>|', '<&', '>&', '&>', '&>>', '<<<', '<<', '<<-']);
/** How deep quotes and substitutions may nest before the lexer gives up (and keeps the stack small). */
const MAX_NESTING = 100;
/** An assignment word's name and `=` (`NAME=`, `NAME+=`, `NAME[i]=`), as the shell takes one. */
const ASSIGNMENT_WORD = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]\n]{0,100}\])?\+?=/;

interface ShellWord {
  kind: 'word';
  start: number;
  end: number;
  /** The word after `<<`: its text ends the here-document and must stay. */
  delimiter?: boolean;
}
interface ShellOp {
  kind: 'op';
  start: number;
  end: number;
  op: string;
}
/** A newline that ends a command, or a comment (up to, not including, its newline). */
interface ShellBreak {
  kind: 'newline' | 'comment';
  start: number;
  end: number;
}
type ShellToken = ShellWord | ShellOp | ShellBreak;

interface HereDoc {
  delimiter: string;
  /** `<<-`: leading tabs are taken off each line before it is compared. */
  tabs: boolean;
  /** Its delimiter was quoted: no `\` joins the body's lines. */
  quoted: boolean;
  /** How deep in `$(` its `<<` stood. */
  level: number;
}

/** A top-level here-document's body: its lines from `start` up to `end`, where its delimiter line starts (or the text ends). */
interface Body {
  start: number;
  end: number;
  delimiter: string;
}

/**
 * Reads shell text into the tokens a shell makes of it at the top level: words (a word's quotes,
 * `$(…)`, `${…}`, `$((…))`, backquotes and `\`-joined lines inside it), operators, newlines that end
 * commands, comments, and the bodies of here-documents. A command substitution is read as commands
 * down to the `)` that closes it, so a `)` or `#` inside it is placed as the shell places it. Where
 * dash and bash read a text differently, or the text has a shape this reader does not follow (a
 * `case` inside `$(`, where a pattern's `)` closes nothing; `'` inside `"${…}"`; `\'` inside `$'…'`,
 * which dash does not take; an unclosed quote), it throws Unsure rather than guess. Linear: each
 * character is read once.
 */
class ShellLexer {
  readonly tokens: ShellToken[] = [];
  readonly bodies: Body[] = [];
  private readonly pending: HereDoc[] = [];
  private nesting = 0;

  constructor(private readonly t: string) {}

  lex(from: number): this {
    this.commands(from, 0);
    // A here-document opened on a last line without a newline has no body.
    for (const doc of this.pending.splice(0)) this.bodies.push({ start: this.t.length, end: this.t.length, delimiter: doc.delimiter });
    return this;
  }

  private enter(): void {
    if (++this.nesting > MAX_NESTING) throw new Unsure();
  }

  /** Commands from `from` to the end (level 0), or to the `)` that closes a `$(` at `level`: the index after it. */
  private commands(from: number, level: number): number {
    const t = this.t;
    const top = level === 0;
    let parens = 0;
    let i = from;
    while (i < t.length) {
      const c = t[i] as string;
      if (c === ' ' || c === '\t') i++;
      else if (c === '\\' && t[i + 1] === '\n') i += 2;
      else if (c === '\n') {
        if (top) this.tokens.push({ kind: 'newline', start: i, end: i + 1 });
        i = this.bodiesAfter(i + 1, level);
      } else if (c === '#') {
        const nl = t.indexOf('\n', i);
        const end = nl < 0 ? t.length : nl;
        if (top) this.tokens.push({ kind: 'comment', start: i, end });
        i = end;
      } else if (METACHARS.has(c)) {
        const op = operatorAt(t, i);
        if (op === '(' && t[i + 1] === '(') {
          // bash's arithmetic command (dash reads two subshells that end where it ends): one word here.
          const end = this.arithmetic(i + 2, level);
          if (top) this.tokens.push({ kind: 'word', start: i, end });
          i = end;
          continue;
        }
        if (!top && op === '(') parens++;
        if (!top && op === ')') {
          if (parens === 0) {
            // A here-document whose body would start after the `$(` closed: not followed.
            if (this.pending.at(-1)?.level === level) throw new Unsure();
            return i + 1;
          }
          parens--;
        }
        if (top) this.tokens.push({ kind: 'op', start: i, end: i + op.length, op });
        i += op.length;
        if (op === '<<' || op === '<<-') i = this.hereDoc(i, op === '<<-', level);
      } else {
        const start = i;
        i = this.word(i, level);
        // A `case` inside `$(`: its patterns' `)` close nothing, which this reader does not follow.
        if (!top && i - start === 4 && (t.startsWith('case', start) || t.startsWith('esac', start))) throw new Unsure();
        if (top) this.tokens.push({ kind: 'word', start, end: i });
      }
    }
    if (!top) throw new Unsure();
    return i;
  }

  /** A word from `from`: where it ends. A `NAME=(` takes bash's array up to its `)` into the word. */
  private word(from: number, level: number): number {
    const t = this.t;
    let i = from;
    while (i < t.length) {
      const c = t[i] as string;
      if (c === '\\') i += 2;
      else if (c === "'") i = this.single(i + 1);
      else if (c === '"') i = this.double(i + 1, level);
      else if (c === '`') i = this.backquote(i + 1);
      else if (c === '$') i = this.dollar(i, false, level);
      else if (METACHARS.has(c)) break;
      else i++;
    }
    i = Math.min(i, t.length);
    if (t[i] === '(' && i > from && t[i - 1] === '=' && ASSIGNMENT_WORD.test(t.slice(from, i))) return this.array(i + 1, level);
    return i;
  }

  private single(from: number): number {
    const close = this.t.indexOf("'", from);
    if (close < 0) throw new Unsure();
    return close + 1;
  }

  private double(from: number, level: number): number {
    const t = this.t;
    this.enter();
    for (let i = from; i < t.length; ) {
      const c = t[i];
      if (c === '"') {
        this.nesting--;
        return i + 1;
      }
      if (c === '\\') i += 2;
      else if (c === '`') i = this.backquote(i + 1);
      else if (c === '$') i = this.dollar(i, true, level);
      else i++;
    }
    throw new Unsure();
  }

  /** A backquoted command ends at the first backquote no `\` escapes, quotes or not: sh's and bash's rule. */
  private backquote(from: number): number {
    const t = this.t;
    for (let i = from; i < t.length; i++) {
      if (t[i] === '\\') i++;
      else if (t[i] === '`') return i + 1;
    }
    throw new Unsure();
  }

  /** What starts with the `$` at `i`: where it ends. */
  private dollar(i: number, inDouble: boolean, level: number): number {
    const t = this.t;
    const next = t[i + 1];
    if (next === '(') {
      if (t[i + 2] === '(') return this.arithmetic(i + 3, level);
      this.enter();
      const end = this.commands(i + 2, level + 1);
      this.nesting--;
      return end;
    }
    if (next === '{') return this.braces(i + 2, inDouble, level);
    if (next === '[') return this.brackets(i + 2, level);
    if (!inDouble && next === "'") return this.ansi(i + 2);
    if (!inDouble && next === '"') return this.double(i + 2, level);
    return i + 1;
  }

  /** After `((` or `$((`: up to the `))` that closes it. A lone `)` first means bash reads a command after all: not followed. */
  private arithmetic(from: number, level: number): number {
    const t = this.t;
    this.enter();
    let depth = 0;
    for (let i = from; i < t.length; ) {
      const c = t[i];
      if (c === '(') {
        depth++;
        i++;
      } else if (c === ')') {
        if (depth > 0) {
          depth--;
          i++;
        } else if (t[i + 1] === ')') {
          this.nesting--;
          return i + 2;
        } else throw new Unsure();
      } else i = this.inner(i, false, level);
    }
    throw new Unsure();
  }

  /** After `${`: up to its `}`. A `'` inside one inside `"…"` is a quote to bash and a character to dash: not followed. */
  private braces(from: number, inDouble: boolean, level: number): number {
    const t = this.t;
    this.enter();
    for (let i = from; i < t.length; ) {
      const c = t[i];
      if (c === '}') {
        this.nesting--;
        return i + 1;
      }
      if (c === "'" && inDouble) throw new Unsure();
      i = this.inner(i, inDouble, level);
    }
    throw new Unsure();
  }

  /** After `$[` (bash's old arithmetic): up to its `]`. */
  private brackets(from: number, level: number): number {
    const t = this.t;
    this.enter();
    let depth = 0;
    for (let i = from; i < t.length; ) {
      const c = t[i];
      if (c === '[') depth++;
      else if (c === ']' && depth-- === 0) {
        this.nesting--;
        return i + 1;
      }
      i = c === '[' || c === ']' ? i + 1 : this.inner(i, false, level);
    }
    throw new Unsure();
  }

  /** One step inside an expansion: an escape, a quote, a backquote or a `$…` read whole, else one character. */
  private inner(i: number, inDouble: boolean, level: number): number {
    const c = this.t[i];
    if (c === '\\') return i + 2;
    if (c === "'") return this.single(i + 1);
    if (c === '"') return this.double(i + 1, level);
    if (c === '`') return this.backquote(i + 1);
    if (c === '$') return this.dollar(i, inDouble, level);
    return i + 1;
  }

  /** After `$'`: up to its `'`. dash (0.5.12) has no `$'…'`, so a `\'` inside one would end its quote there: not followed. */
  private ansi(from: number): number {
    const t = this.t;
    for (let i = from; i < t.length; i++) {
      if (t[i] === '\\') {
        if (t[i + 1] === "'") throw new Unsure();
        i++;
      } else if (t[i] === "'") return i + 1;
    }
    throw new Unsure();
  }

  /** After `NAME=(`: bash's array, its words (and comments and newlines) up to its `)`. */
  private array(from: number, level: number): number {
    const t = this.t;
    let i = from;
    while (i < t.length) {
      const c = t[i] as string;
      if (c === ')') return i + 1;
      if (c === ' ' || c === '\t') i++;
      else if (c === '\n') {
        if (this.pending.length > 0) throw new Unsure();
        i++;
      } else if (c === '\\' && t[i + 1] === '\n') i += 2;
      else if (c === '#') {
        const nl = t.indexOf('\n', i);
        i = nl < 0 ? t.length : nl;
      } else if (METACHARS.has(c)) throw new Unsure();
      else i = this.word(i, level);
    }
    throw new Unsure();
  }

  /** After `<<` or `<<-`: the delimiter word, whose body is read after the line's newline (bodiesAfter). */
  private hereDoc(from: number, tabs: boolean, level: number): number {
    const t = this.t;
    let i = from;
    while (t[i] === ' ' || t[i] === '\t') i++;
    const end = this.word(i, level);
    if (end === i) throw new Unsure();
    const { text, quoted } = unquoteDelimiter(t.slice(i, end));
    if (level === 0) this.tokens.push({ kind: 'word', start: i, end, delimiter: true });
    this.pending.push({ delimiter: text, tabs, quoted, level });
    return end;
  }

  /**
   * The bodies of the here-documents opened on the line that ends at `from`, in order: each up to a
   * line that is its delimiter (a line a `\` joined to the one before, in a body that takes `\`, is
   * none: both shells join them first). Where the last one ends.
   */
  private bodiesAfter(from: number, level: number): number {
    const t = this.t;
    let i = from;
    for (const doc of this.pending.splice(0)) {
      if (doc.level !== level) throw new Unsure();
      const start = i;
      let end = t.length;
      let joined = false;
      while (i < t.length) {
        const nl = t.indexOf('\n', i);
        const lineEnd = nl < 0 ? t.length : nl;
        const next = nl < 0 ? t.length : nl + 1;
        let s = i;
        if (doc.tabs) while (t[s] === '\t') s++;
        if (!joined && lineEnd - s === doc.delimiter.length && t.startsWith(doc.delimiter, s)) {
          end = i;
          i = next;
          break;
        }
        joined = !doc.quoted && endsInEscape(t, i, lineEnd);
        i = next;
      }
      if (level === 0) this.bodies.push({ start, end: Math.min(end, i), delimiter: doc.delimiter });
    }
    return i;
  }
}

/** Whether t[from, to) ends in an odd number of backslashes: a `\` that escapes the newline after it. */
function endsInEscape(t: string, from: number, to: number): boolean {
  let n = 0;
  for (let j = to - 1; j >= from && t[j] === '\\'; j--) n++;
  return n % 2 === 1;
}

/** A here-document's delimiter word as the shell compares it: its quotes and `\` taken off (and whether it had any). */
function unquoteDelimiter(raw: string): { text: string; quoted: boolean } {
  if (/[$`\n]/.test(raw)) throw new Unsure();
  let text = '';
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string;
    if (c === "'" || c === '"') {
      const close = raw.indexOf(c, i + 1);
      const inner = raw.slice(i + 1, close);
      if (c === '"' && inner.includes('\\')) throw new Unsure();
      text += inner;
      quoted = true;
      i = close;
    } else if (c === '\\') {
      text += raw[i + 1] ?? '';
      quoted = true;
      i++;
    } else text += c;
  }
  return { text, quoted };
}

/** Words that begin or shape a compound command where a command could start: never blanked. */
const RESERVED = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'case', 'esac', 'while', 'until', 'for', 'select', 'in', 'function', 'time', 'coproc', '!', '{', '}', '[[', ']]']);

/** Builtins after which a word that is no name (`export ''`) ends a non-interactive dash: no word of theirs is blanked to `''`. */
const FATAL_BUILTINS = new Set(['export', 'readonly', 'local', 'declare', 'typeset', 'unset', '.', 'source', 'shift', 'exit', 'return', 'break', 'continue', 'exec']);

/** The commands that assign the variables they name without `=` (READS). */
const READ_COMMANDS = new Set(['read', 'mapfile', 'readarray']);

/** A value that holds no secret of its own: nothing, empty quotes, or another variable (`$GH_TOKEN`, `"${GH_TOKEN}"`). */
const NO_VALUE = /^(?:|''|""|(["']?)\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})\1)$/;

/** What one word becomes: its first `keep` characters kept and the rest taken out, or all of it replaced by `text`. */
type WordChange = { keep: number } | { text: string };

/**
 * How a word that holds a credential changes: an assignment (`NAME=…`, `NAME+=…`, `NAME[i]=…`, a
 * bash array) keeps its `NAME=` and loses its value, when the name is a secret's and the value more
 * than nothing or a reference to another variable, or when the value holds a credential; a word that
 * quotes an assignment (`"NPM_TOKEN=…"`) becomes the bare `NAME=`; any other word with a credential
 * in it becomes `''`. Judged as the shell joins it (each `\` and newline taken out).
 */
function wordChange(raw: string): WordChange | undefined {
  const joined = raw.includes('\\\n') ? raw.replace(/\\\n/g, '') : raw;
  const assignment = ASSIGNMENT_WORD.exec(raw)?.[0];
  if (assignment !== undefined) {
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(assignment)?.[0] as string;
    const value = joined.slice(assignment.length);
    return (secretVariable(name) && !NO_VALUE.test(value)) || credentialIn(value) ? { keep: assignment.length } : undefined;
  }
  if (!credentialIn(joined)) return undefined;
  const quoted = /^(["']?)([A-Za-z_][A-Za-z0-9_]*)\1?(\+?=)/.exec(joined);
  return { text: quoted ? `${quoted[2]}${quoted[3]}` : "''" };
}

/** A word's place in its simple command. */
type Role = 'reserved' | 'assignment' | 'name' | 'argument' | 'target' | 'fd';

interface SimpleCommand {
  /** Token indices of its words. */
  words: number[];
  /** The token index of its command's name. */
  name?: number;
}

/** A change to the text: [start, end) becomes `text`; `note`: the line it ends on gets the note. */
interface Edit {
  start: number;
  end: number;
  text: string;
  note: boolean;
}

/**
 * The edits that take the credentials out of shell text: for each word that holds one, wordChange;
 * for `NAME = value` (a line meant as an assignment), the value; for `for NAME in …` with a secret's
 * name, the words it loops over; for a pipeline that reads a secret's variable (`read -r NAME`, `echo
 * … | read NAME`, `printf -v NAME …`), every word but the commands' names, options and variable names
 * (and then, the file having shown it reads secrets, every top-level here-document's body and
 * here-string too); a comment or a here-document body with a credential, whole. In a shell file
 * (`keepLines`) a word replaced or emptied keeps the newlines it spanned as `\`-newlines, so every
 * other line stays where it was; not in /etc/environment, where pam_env would join a `\` left last
 * on a line to the next line with text, blank lines between skipped.
 */
function shellEdits(t: string, lexer: ShellLexer, keepLines: boolean): Edit[] {
  const { tokens } = lexer;
  // Each word's text, once: the rules below look at a word and its neighbours several times.
  const texts = tokens.map((tok) => (tok.kind === 'word' ? t.slice(tok.start, tok.end) : ''));
  const raw = (k: number): string => texts[k] ?? '';
  const roles: Role[] = [];
  const commandOf: SimpleCommand[] = [];
  const pipelines: SimpleCommand[][] = [];
  let pipeline: SimpleCommand[] = [];
  let simple: SimpleCommand = { words: [] };
  let target = false;
  const endSimple = (): void => {
    if (simple.words.length > 0) pipeline.push(simple);
    simple = { words: [] };
  };
  for (let k = 0; k < tokens.length; k++) {
    const tok = tokens[k] as ShellToken;
    if (tok.kind === 'comment') continue;
    if (tok.kind === 'op' && REDIRECTS.has(tok.op)) {
      target = true;
      continue;
    }
    if (tok.kind !== 'word') {
      endSimple();
      if (!(tok.kind === 'op' && (tok.op === '|' || tok.op === '|&'))) {
        if (pipeline.length > 0) pipelines.push(pipeline);
        pipeline = [];
      }
      target = false;
      continue;
    }
    const w = raw(k);
    const fd = /^\d+$/.test(w) && (t[tok.end] === '<' || t[tok.end] === '>');
    const role: Role = target ? 'target' : fd ? 'fd' : simple.name !== undefined ? 'argument' : RESERVED.has(w) ? 'reserved' : ASSIGNMENT_WORD.test(w) ? 'assignment' : 'name';
    target = false;
    if (role === 'name') simple.name = k;
    roles[k] = role;
    commandOf[k] = simple;
    simple.words.push(k);
  }
  endSimple();
  if (pipeline.length > 0) pipelines.push(pipeline);

  const changes = new Map<number, WordChange>();
  const change = (k: number, c: WordChange): void => {
    if (!changes.has(k)) changes.set(k, c);
  };
  /** A word blanked for what the command around it does, not for what it holds: an assignment keeps its `NAME=`. */
  const blank = (k: number): void => {
    const w = raw(k);
    change(k, ASSIGNMENT_WORD.test(w) ? { keep: (ASSIGNMENT_WORD.exec(w) as RegExpExecArray)[0].length } : { text: "''" });
  };
  const isWord = (k: number): boolean => tokens[k]?.kind === 'word';
  const secretName = (w: string): boolean => /^[A-Za-z_][A-Za-z0-9_]*$/.test(w) && secretVariable(w);

  for (let k = 0; k < tokens.length; k++) {
    if (!isWord(k)) continue;
    const w = raw(k);
    const c = wordChange(w);
    if (c !== undefined) {
      if ((tokens[k] as ShellWord).delimiter) throw new Unsure();
      change(k, c);
    }
    // `NAME = value` and `NAME =value`: no shell assigns there, but the value is the secret.
    if (secretName(w) && isWord(k + 1)) {
      const next = raw(k + 1);
      if ((next === '=' || next === '+=') && isWord(k + 2) && !(tokens[k + 2] as ShellWord).delimiter) change(k + 2, { text: "''" });
      else if (/^\+?=./s.test(next)) change(k + 1, { keep: next.startsWith('+') ? 2 : 1 });
    }
    // `curl -u bob:pw`, `wget --password pw`: the option's own word says what the next one is.
    if (isWord(k + 1) && !(tokens[k + 1] as ShellWord).delimiter) {
      const next = raw(k + 1);
      if ((USER_OPTION_WORD.test(w) && USER_PASSWORD_WORD.test(next)) || (SECRET_OPTION_WORD.test(w) && SECRET_VALUE_WORD.test(next))) change(k + 1, { text: "''" });
    }
    // `for NAME in …`: the words it loops over are the values NAME takes.
    if ((w === 'for' || w === 'select') && roles[k] === 'reserved' && isWord(k + 1) && secretName(raw(k + 1)) && isWord(k + 2) && raw(k + 2) === 'in') {
      for (let m = k + 3; isWord(m) && raw(m) !== 'do'; m++) change(m, { text: "''" });
    }
  }

  let reads = false;
  for (const p of pipelines) {
    const reader = p.find((s) => readsSecret(s, raw));
    if (reader === undefined) continue;
    reads = true;
    for (const s of p) {
      for (let j = 0; j < s.words.length; j++) {
        const k = s.words[j] as number;
        const w = raw(k);
        const role = roles[k];
        if (role === 'reserved' || role === 'fd' || (tokens[k] as ShellWord).delimiter) continue;
        if (role === 'name' && (s === reader || /^[A-Za-z0-9_./+-]+$/.test(w))) continue;
        if (s === reader && role === 'argument' && keptByReader(raw(s.name as number), w, j > 0 ? raw(s.words[j - 1] as number) : '')) continue;
        blank(k);
      }
    }
  }
  if (reads) for (let k = 0; k < tokens.length; k++) if (isWord(k) && (tokens[k - 1] as ShellOp | undefined)?.op === '<<<') blank(k);

  const edits: Edit[] = [];
  for (const [k, c] of changes) {
    const tok = tokens[k] as ShellWord;
    if ('text' in c && c.text === "''" && roles[k] === 'argument' && FATAL_BUILTINS.has(raw(commandOf[k]?.name ?? -1))) throw new Unsure();
    // A function's name: `''()` is no definition.
    if ('text' in c && t[tok.end] === '(') throw new Unsure();
    const start = 'keep' in c ? tok.start + c.keep : tok.start;
    const end = t[tok.end - 1] === '\r' && t[tok.end] === '\n' ? tok.end - 1 : tok.end;
    // A command's own word blanked (`(( NPM_TOKEN=1 ))`, a URL with a password run as a command): `''` would be
    // "command not found" at every login, `:` runs as nothing.
    const text = 'text' in c ? (c.text === "''" && roles[k] === 'name' ? ':' : c.text) : '';
    edits.push({ start, end, text: `${text}${keepLines ? '\\\n'.repeat(newlines(t, start, end)) : ''}`, note: true });
  }
  for (const tok of tokens) {
    if (tok.kind !== 'comment' || !credentialIn(t.slice(tok.start, tok.end))) continue;
    edits.push({ start: tok.start, end: t[tok.end - 1] === '\r' ? tok.end - 1 : tok.end, text: REMOVED_NOTE, note: false });
  }
  for (const body of lexer.bodies) {
    const text = t.slice(body.start, body.end);
    if (!reads && !credentialIn(text) && !credentialIn(text.replace(/\\\n/g, ''))) continue;
    if (body.delimiter === REMOVED_NOTE) throw new Unsure();
    // Every line of it, so no `$(` in the body is left open by another line going.
    for (let s = body.start; s < body.end; ) {
      const nl = t.indexOf('\n', s);
      const lineEnd = nl < 0 || nl > body.end ? body.end : nl;
      const contentEnd = t[lineEnd - 1] === '\r' ? lineEnd - 1 : lineEnd;
      if (contentEnd > s) edits.push({ start: s, end: contentEnd, text: REMOVED_NOTE, note: false });
      s = lineEnd + 1;
    }
  }
  return edits;
}

/** How many newlines t[from, to) holds. */
function newlines(t: string, from: number, to: number): number {
  let n = 0;
  for (let i = t.indexOf('\n', from); i >= 0 && i < to; i = t.indexOf('\n', i + 1)) n++;
  return n;
}

/** Whether a simple command assigns a secret's variable without `=`: `read … NAME`, `mapfile NAME`, `printf -v NAME`. */
function readsSecret(s: SimpleCommand, raw: (k: number) => string): boolean {
  if (s.name === undefined) return false;
  const name = raw(s.name);
  if (!READ_COMMANDS.has(name) && name !== 'printf') return false;
  const args = s.words.slice(s.words.indexOf(s.name) + 1).map(raw);
  const secret = (w: string | undefined): boolean => w !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(w) && secretVariable(w);
  if (READ_COMMANDS.has(name)) return args.some(secret);
  return name === 'printf' && args.some((w, j) => w === '-v' && secret(args[j + 1]));
}

/** The words of a reading command that hold no value: its options, numbers, and the names it assigns (`printf`: only `-v NAME`). */
function keptByReader(name: string, word: string, before: string): boolean {
  if (name === 'printf') return word === '-v' || before === '-v';
  return /^-[A-Za-z]+$/.test(word) || /^\d+$/.test(word) || /^[A-Za-z_][A-Za-z0-9_]*$/.test(word);
}

/**
 * Shell text with the edits made; in a shell file (`notes`), each line an edited word ends on gets
 * REMOVED_NOTE as a comment at its end, where it ends a command at the top level and holds no
 * comment already. undefined when the lexer is unsure; the text itself when nothing changes.
 */
function shellPass(text: string, notes: boolean): string | undefined {
  const from = text.startsWith(BOM) ? 1 : 0;
  let lexer: ShellLexer;
  let edits: Edit[];
  try {
    lexer = new ShellLexer(text).lex(from);
    edits = shellEdits(text, lexer, notes).filter((e) => text.slice(e.start, e.end) !== e.text);
  } catch (e) {
    if (e instanceof Unsure) return undefined;
    throw e;
  }
  if (edits.length === 0) return text;
  if (notes) edits.push(...noteEdits(text, lexer.tokens, edits));
  edits.sort((a, b) => a.start - b.start || a.end - b.end);
  let out = '';
  let at = 0;
  for (const e of edits) {
    out += text.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + text.slice(at);
}

/**
 * The notes for the lines `edits` change words on: each inserted before the newline that ends the
 * command's line (or at the text's end), unless a comment comes first (it ends the line already).
 */
function noteEdits(text: string, tokens: ShellToken[], edits: Edit[]): Edit[] {
  const breaks = tokens.filter((tok): tok is ShellBreak => tok.kind === 'newline' || tok.kind === 'comment');
  const at = new Set<number>();
  let b = 0;
  for (const e of edits.filter((x) => x.note).sort((x, y) => x.start - y.start)) {
    while (b < breaks.length && (breaks[b] as ShellBreak).start < e.end) b++;
    const next = breaks[b];
    if (next?.kind === 'comment') continue;
    const pos = next === undefined ? text.length : next.start;
    at.add(text[pos - 1] === '\r' ? pos - 1 : pos);
  }
  return [...at].map((pos) => ({ start: pos, end: pos, text: ` ${REMOVED_NOTE}`, note: false }));
}

/**
 * Whether pam_env, reading the text as /etc/environment, would still meet a secret: it reads a line
 * at a time (a `\` last, after blanks, joins the next; everything from the first `#` on is dropped),
 * skips `export `, takes `NAME` up to the `=` and every quote out of the value. A secret's name with
 * a value left, an assignment of one inside a value, a URL with a credential or a private key is one.
 */
function pamEnvLeaks(text: string): boolean {
  let logical = '';
  for (const physical of text.split('\n')) {
    const s = physical.replace(/^[ \t]+/, '');
    if (s === '' || s.startsWith('#')) continue;
    const hash = physical.indexOf('#');
    if (hash >= 0) {
      if (pamEnvLineLeaks(logical + physical.slice(0, hash))) return true;
      logical = '';
      continue;
    }
    const trimmed = physical.replace(/[ \t]+$/, '');
    if (trimmed.endsWith('\\')) logical += trimmed.slice(0, -1);
    else {
      if (pamEnvLineLeaks(logical + physical)) return true;
      logical = '';
    }
  }
  return logical !== '' && pamEnvLineLeaks(logical);
}

function pamEnvLineLeaks(line: string): boolean {
  if (hasCredentialUrl(line) || PRIVATE_KEY_BLOCK.test(line)) return true;
  let key = line.replace(/^[ \t]+/, '');
  if (key.startsWith('export ')) key = key.slice(7);
  const eq = key.indexOf('=');
  if (eq <= 0 || !/^[A-Za-z0-9_]+$/.test(key.slice(0, eq))) return false;
  const value = key.slice(eq + 1).replace(/["']/g, '');
  if (secretVariable(key.slice(0, eq)) && value.trim() !== '') return true;
  for (const m of value.matchAll(ASSIGNMENT)) if (secretVariable(m[1] as string) && /[^\s;&|)]/.test(value[(m.index as number) + m[0].length] ?? ' ')) return true;
  for (const m of value.matchAll(EXPANSION_ASSIGNMENT)) if (secretVariable(m[1] as string)) return true;
  return false;
}

/** Whether shell text may hold a credential anywhere, read loosely: as it is, `\`-joined, without quotes; a `for NAME in` loop. */
function mayHoldCredential(text: string): boolean {
  const joined = text.replace(/\\\r?\n/g, '');
  if ([text, joined, joined.replace(/["']/g, '')].some(shellCredential)) return true;
  for (const m of joined.matchAll(/(?<![\w$])(?:for|select)\s+([A-Za-z_][A-Za-z0-9_]*)\s/g)) if (secretVariable(m[1] as string)) return true;
  return false;
}

/**
 * Shell start-up files and /etc/environment: the credentials taken out and the structure kept, so
 * the copy still parses wherever the original did: a file that no longer parses stops bash reading
 * it there, and a dash login shell altogether. Replacing a line with a comment breaks a file whose
 * line also held `fi`, `;;`, `}`, or was the only command of a `then`; replacing a command with `:`
 * would need the grammar, to know where each command starts and ends. Changing words inside their
 * own extent needs only where words start and end, which ShellLexer knows (or throws Unsure): a
 * word's value emptied (`export NPM_TOKEN=`) or the word replaced by `''` (with the newlines it
 * spanned kept as `\`-newlines in a shell file) leaves every token around it as it was
 * (shellEdits). The copy is then read again: were it still to change, or
 * (for /etc/environment) were pam_env still to read a secret in it, or was the lexer unsure, the file
 * is withheld whole as WITHHELD_NOTE, which parses anywhere, when it may hold a credential at all.
 */
function sanitizeShell(text: string, format: 'shell' | 'environment'): string {
  const notes = format === 'shell';
  const once = shellPass(text, notes);
  if (once !== undefined && (once === text || shellPass(once, notes) === once) && (format === 'shell' || !pamEnvLeaks(once))) return once;
  return once === undefined && !mayHoldCredential(text) ? text : `${WITHHELD_NOTE}\n`;
}

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
 * - pip, toml, gemrc: a key naming a password, token, secret or API key.
 * Keys are matched without regard to case. Shell start-up files and /etc/environment are not edited
 * by the line: their secrets' values go and their structure stays (sanitizeShell); a csh snippet
 * with a secret is withheld whole (sanitizeCsh). Returns `text` itself when nothing was removed.
 */
export function sanitizeConfig(text: string, format: ConfigFormat): string {
  if (format === 'shell' || format === 'environment') return sanitizeShell(text, format);
  if (format === 'csh') return sanitizeCsh(text);
  const lines = splitLines(text);
  const out =
    format === 'npmrc' ? sanitizeNpmrc(lines)
    : format === 'pip' ? sanitizePip(lines)
    : format === 'wgetrc' ? sanitizeWgetrc(lines)
    : format === 'gitconfig' ? sanitizeGitconfig(lines)
    : format === 'toml' ? sanitizeToml(lines)
    : sanitizeGemrc(lines);
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
