// The diagnostic codes: stable once published (QS0xx errors, QS1xx warnings, QS2xx notes); the README table mirrors this one.

export type Severity = 'error' | 'warning' | 'note';

export interface CodeInfo {
  severity: Severity;
  /** One line for the README table: when it fires. */
  summary: string;
}

export const CODES = {
  QS001: { severity: 'error', summary: 'The file cannot be read (missing, a directory, a device, permission denied, a broken link or a loop of links).' },
  QS002: { severity: 'error', summary: 'The file is empty (or only whitespace and comments).' },
  QS003: { severity: 'error', summary: 'The file is binary (NUL bytes or invalid UTF-8).' },
  QS004: { severity: 'error', summary: 'The file is larger than 10 MB.' },
  QS005: { severity: 'error', summary: 'Malformed YAML or JSON: `file:line:col` and the parser\'s message.' },
  QS006: { severity: 'error', summary: 'The top level is not a task mapping (a list, a scalar).' },
  QS007: { severity: 'error', summary: 'No task files were found in a directory, a glob, or the default places.' },
  QS010: { severity: 'error', summary: 'An unknown field (with the nearest known name when one is close).' },
  QS011: { severity: 'error', summary: 'A field has the wrong type: its path and the expected type.' },
  QS012: { severity: 'error', summary: 'A required field is missing or blank.' },
  QS013: { severity: 'error', summary: 'A value breaks a schema constraint (URL, host name pattern, empty list, range), or a docs URL carries a user name or password (the reader refuses it, and the stream would record it; the message shows the URL without them).' },
  QS020: { severity: 'error', summary: '`docs` has both `path` and `entrypoint`, or neither.' },
  QS021: { severity: 'error', summary: '`docs.path` lists the same page twice.' },
  QS022: { severity: 'error', summary: 'A `docs.allow` or `network` entry is not a bare host name.' },
  QS030: { severity: 'error', summary: '`success` has both `script` and `file`, or nothing that decides the verdict.' },
  QS031: { severity: 'error', summary: "`success.file` is absolute, missing, not a file, empty, binary, not UTF-8 or over 10 MB, or outside the task's project (the nearest folder up holding a `quickloop.yaml` or `.git`, else the task's own folder; a link is judged by where it leads): its text goes into every stream, so a task from someone else cannot name a host file." },
  QS032: { severity: 'error', summary: '`success.serve` starts a server but nothing checks it.' },
  QS033: { severity: 'error', summary: '`success.wait_http` has both `url` and `path`, or neither, or a bad url, status or timeout.' },
  QS034: { severity: 'error', summary: 'An `expect_output`/`wait_http` pattern is empty, spans lines, or is missing; or a `matches` pattern is one `grep -E` itself refuses (the POSIX ERE the check runs, asked of the machine\'s grep).' },
  QS035: { severity: 'error', summary: 'A `success.wait_http.json` value is not a string, number, boolean or null.' },
  QS036: { severity: 'error', summary: 'A budget is out of range (turns, seconds and chars at least 1; tokens at least 0; seconds at most 2147483, the longest a timer waits).' },
  QS037: { severity: 'error', summary: 'A `setup`/`replay` command or a string of `success` cannot be given to bash: a NUL byte, a lone UTF-16 surrogate, or over the 131071 bytes one command line holds (the whole compiled check included).' },
  QS038: { severity: 'error', summary: 'The success check is not valid bash (`bash -n` on the compiled check), reported at the line of `success.script` or `success.file`.' },
  QS039: { severity: 'error', summary: '`success.wait_http` polls a local server but there is no `success.serve`: servers from setup or replay end with their stage, so it could never pass.' },
  QS040: { severity: 'error', summary: '`name` holds a control character (a newline, a tab, an escape): a name is one line of text.' },
  QS101: { severity: 'warning', summary: 'The check uses `X/bin/`, which neither setup nor replay creates.' },
  QS102: { severity: 'warning', summary: 'The check can fail without printing why (bare `test`/`grep -q` lines, no `qs_fail`).' },
  QS103: { severity: 'warning', summary: 'A docs host is also a registry, so the shell cannot install from it.' },
  QS104: { severity: 'warning', summary: 'The check runs Node tooling but no `image` is set (the default image has no Node).' },
  QS105: { severity: 'warning', summary: 'The goal quotes a replay command verbatim, handing the agent the answer.' },
  QS106: { severity: 'warning', summary: 'A budget is so small that runs end as budget_exhausted instead of evidence.' },
  QS107: { severity: 'warning', summary: 'An `expect_output` pattern already appears in the goal or is echoed by a replay command.' },
  QS108: { severity: 'warning', summary: 'The check passes on an empty workspace (`true`, `exit 0`, `:` or nothing).' },
  QS109: { severity: 'warning', summary: 'A `docs.path` page is on a host the shell may reach, so its reads go unrecorded.' },
  QS110: { severity: 'warning', summary: 'Two tasks share a name (results and output folders would collide).' },
  QS111: { severity: 'warning', summary: '`wait_http.url` points at a remote host: the check does not test the workspace.' },
  QS112: { severity: 'warning', summary: '`serve` never uses `$QS_PORT` while `wait_http.path` polls it.' },
  QS113: { severity: 'warning', summary: 'A replay command looks long-running (dev server, `--watch`), so replay would hang.' },
  QS114: { severity: 'warning', summary: '`network` has both `allow` and `only`; both are allowed, but `only` already replaces the registry list.' },
  QS115: { severity: 'warning', summary: 'A `matches` pattern uses Perl syntax (`\\d`, `(?…)`) that `grep -E` does not understand, so it never matches.' },
  QS116: { severity: 'warning', summary: 'With `--check-urls`: a `docs.path` page cannot be read (network error, timeout, HTTP error status).' },
  QS117: { severity: 'warning', summary: 'With `--check-urls`: a `docs.path` page redirects to a host that is not a docs host of the task.' },
  QS118: { severity: 'warning', summary: 'With `--check-urls`: robots.txt disallows a `docs.path` page for automated readers.' },
  QS119: { severity: 'warning', summary: 'With `--check-urls`: a `docs.path` page has no readable text (empty, or filled in by scripts).' },
  QS120: { severity: 'warning', summary: "`name` is not safe as a directory name (spaces, a slash, `..`, letters beyond ASCII): a sweep's `--out` folders use a safe form of it (`[a-z0-9._-]`), while results, reports and `qs diff` keep the name as written." },
  QS121: { severity: 'warning', summary: 'The goal or the success check is still a `TODO` placeholder (as `qs init` writes them): the check fails whatever the agent did, so every run would count as a docs gap.' },
  QS122: { severity: 'warning', summary: '`network.only` is an empty list: the shell reaches no registry and no other host, so every install fails unless the quickstart works offline.' },
  QS123: { severity: 'warning', summary: 'An `expect_output` or `wait_http` `matches` pattern matches any line (`.*`, `.`, `^`, `x?`): whatever the run printed passes it, so it checks nothing about the docs.' },
  QS124: { severity: 'warning', summary: 'A `wait_http.json` number is past 2^53 (or has more digits than a number keeps): YAML and JSON readers keep only an approximation, so the check would look for digits the author never wrote. Quote it (`"12345678901234567890"`) to match it digit for digit.' },
  QS201: { severity: 'note', summary: 'No `replay` commands: the task is agent-only and `--agent replay` skips it.' },
  QS202: { severity: 'note', summary: 'A docs host is also network-allowed: pages the shell fetches there are not recorded.' },
  QS203: { severity: 'note', summary: '`docs.entrypoint` is the legacy one-page form of `docs.path`.' },
  QS204: { severity: 'note', summary: 'With `--check-urls`: a `docs.path` page redirects by meta refresh.' },
} as const satisfies Record<string, CodeInfo>;

export type Code = keyof typeof CODES;

export function severityOf(code: Code): Severity {
  return CODES[code].severity;
}
