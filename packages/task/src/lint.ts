// Lint: warnings where a valid task would yield a wrong or wasted number, and notes worth knowing. Never errors.
import { hostMatches, normalizeHost, parseEndpoint } from '@quickloop/sandbox/hosts';
import type { Code } from './codes.js';
import { fieldPath, finding, quote, type Finding, type Position } from './finding.js';
import type { TaskLoadedPayload } from './normalise.js';
import type { Segment } from './parse.js';
import { list, type RawTask } from './raw.js';

type Locate = (path: readonly Segment[], key?: boolean) => Position | undefined;


const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]', '0.0.0.0']);

/** Directories a check may name under `X/bin/` without anything creating them. */
const SYSTEM_DIRS = new Set(['.', '..', 'usr', 'local', 'opt', 'env', '.local', 'sbin', '']);

/** A check line that reports nothing when it fails. */
const BARE_ASSERTION = /^(test\s|\[\s|\[\[\s|diff\s|cmp\s|grep\s+(.*\s)?(-[A-Za-z]*q[A-Za-z]*|--quiet|--silent)(\s|$))/;
const SPEAKS = /qs_fail|qs_wait_http|qs_expect_output|\becho\b|\bprintf\b|\bfail\b|>&2/;

/** Commands that do not return: a replay of them waits until the budget runs out. */
const LONG_RUNNING = [
  /\b(npm|pnpm|yarn|bun)\s+(run\s+)?(dev|start|serve|watch|preview)\b/,
  /--watch\b|\s-w\s*$/,
  /\b(flask\s+run|uvicorn|streamlit\s+run|fastapi\s+(dev|run)|rails\s+(s|server)|runserver|http\.server|jupyter\s+(lab|notebook))\b/,
  /\btail\s+-f\b/,
];

/** A package manager adding packages: a server's name there is a package, not a server run. */
const INSTALL = /^(\S*\/)?(pip3?|python3?\s+-m\s+pip|uv(\s+pip)?|poetry|pipx|npm|pnpm|yarn|bun|cargo|go|gem|brew|apt(-get)?|composer)\s+(install|add|i)\b/;

/**
 * The simple commands a replay step runs in the foreground, as far as a lint can tell: heredoc
 * bodies and quoted text are what a step writes, not what it runs (`cat > main.py <<'PY'` holding
 * `uvicorn.run(app)`), a command ended by `&` or under `timeout N` returns, and an install names
 * packages.
 */
function ranCommands(cmd: string): string[] {
  const lines = cmd.split('\n');
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    kept.push(line);
    const here = /<<(-?)\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\2/.exec(line);
    if (!here) continue;
    while (i + 1 < lines.length && (here[1] ? lines[i + 1]!.replace(/^\t+/, '') : lines[i + 1]) !== here[3]) i += 1;
    i += 1;
  }
  const text = kept.join('\n').replace(/'[^']*'/g, "''").replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const parts = text.split(/(\|\||&&|;|\||\n|&)/);
  const out: string[] = [];
  for (let i = 0; i < parts.length; i += 2) {
    const run = parts[i]!.trim();
    if (run === '' || parts[i + 1] === '&' || /^(\S+=\S*\s+)*timeout\s+\d/.test(run) || INSTALL.test(run.replace(/^(\S+=\S*\s+)+/, ''))) continue;
    out.push(run);
  }
  return out;
}

/** Lines that cannot make a check fail. */
// An echo is harmless only alone on its line: `echo checking; exit 1` fails (no `;`, `&` or `|` after it).
const HARMLESS = /^(true|:|exit(\s+0)?|echo(\s[^;&|]*)?|printf(\s[^;&|]*)?|set\s+[-+][A-Za-z]+(\s[^;&|]*)?|#!.*)$/;
const NEUTRALISED = /\|\|\s*(true|:|exit(\s+0)?)\s*;?$/;

function meaningfulLines(script: string): string[] {
  return script
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !(l.startsWith('#') && !l.startsWith('#!')));
}

/** Quoted text blanked (its length kept), so a `>` or `;` inside a string is no redirect or separator. */
const unquoted = (text: string): string => text.replace(/'[^']*'|"(?:[^"\\]|\\.)*"/g, (q) => ' '.repeat(q.length));

/** A command line cut at its first separator (`;`, `&&`, `||`, `|`, `&`) outside quotes. */
function ownCommand(text: string): string {
  const at = /;|&&|\|\||\||&(?!>)/.exec(unquoted(text).replace(/[0-9]?>&[0-9]/g, (r) => ' '.repeat(r.length)));
  return at === null ? text : text.slice(0, at.index);
}

/** Does this one command send its standard output to a file (`> f`, `>> f`, `1> f`, `&> f`)? `>&2` keeps it printed. */
const toFile = (command: string): boolean => /(?:^|[^0-9&>])(?:1|&)?>>?(?!&)\s*[^\s&]/.test(unquoted(command));

/** A name that is a folder name as it stands: letters, digits, `.`, `_`, `-`; not hidden, not an option. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export function lintTask(raw: RawTask, payload: TaskLoadedPayload, fileText: string | undefined, locate: Locate, prefix: readonly Segment[] = []): Finding[] {
  const out: Finding[] = [];
  const t = payload.task;
  const add = (code: Code, message: string, path: readonly Segment[]): void => {
    const full = [...prefix, ...path];
    out.push(finding(code, message, { field: fieldPath(full), at: locate(full), task: t.name }));
  };
  const s = raw.success;
  const authored = s.script ?? fileText ?? '';
  const authoredField: Segment[] = s.script !== undefined ? ['success', 'script'] : ['success', 'file'];
  const prepared = [...t.setup, ...(t.replay ?? [])].join('\n');
  const replay = t.replay ?? [];

  // QS120: a name that is no folder name as it stands.
  if (!SAFE_NAME.test(t.name) || t.name.includes('..')) {
    add('QS120', `name ${quote(t.name)} is not safe as a directory name; a sweep saves its runs under a folder named by a safe form of it ([a-z0-9._-]), and results and reports keep the name as written`, ['name']);
  }

  // QS121: qs init's placeholders, not filled in: its check fails on every workspace.
  const todo = [...(/^\s*TODO\b/.test(t.goal) ? ['the goal'] : []), ...(/\bqs_fail\s+(['"]?)\s*TODO\b/.test(authored) ? ['the success check'] : [])];
  if (todo.length > 0) {
    add('QS121', `${todo.join(' and ')} ${todo.length === 1 ? 'is' : 'are'} still a TODO placeholder; until filled in, the check fails whatever the agent did and every run would count as a docs gap`, todo[0] === 'the goal' ? ['goal'] : authoredField);
  }

  // QS101: a path the check relies on that nothing creates.
  const envDirs = new Set<string>();
  for (const m of authored.matchAll(/([\w.-]+)\/bin\//g)) {
    const dir = m[1]!;
    if (!SYSTEM_DIRS.has(dir) && !prepared.includes(dir)) envDirs.add(dir);
  }
  for (const dir of envDirs) {
    add('QS101', `the success check requires ${dir}/bin/, which neither setup nor the replay commands create; a run that installs elsewhere fails for a reason the docs never gave`, authoredField);
  }

  // QS102: a failing check that prints nothing cannot be diagnosed.
  const lines = meaningfulLines(authored);
  if (!SPEAKS.test(authored) && lines.filter((l) => BARE_ASSERTION.test(l)).length >= 2) {
    add('QS102', 'the success check can exit non-zero without printing anything; add `|| qs_fail "what you saw"` to its assertions', authoredField);
  }

  // QS103 / QS109 / QS202: docs hosts against the shell's reach.
  t.docs.allow.forEach((host) => {
    const explicit = payload.policy.explicit.find((e) => hostMatches(host, e) || hostMatches(e, host));
    const registry = payload.policy.registries.find((r) => hostMatches(parseEndpoint(r)?.host ?? '', host));
    const onRoute = t.docs.path.some((p) => normalizeHost(new URL(p).hostname) === host);
    const field: Segment[] = onRoute ? ['docs', raw.docs.path ? 'path' : 'entrypoint'] : ['docs', 'allow'];
    if (explicit && onRoute) {
      add('QS109', `${host} serves docs.path pages and is network-allowed (${explicit}), so the shell can read the route without read_docs and those reads go unrecorded`, field);
    } else if (explicit) {
      add('QS202', `${host} is a docs host and also network-allowed (${explicit}): pages the shell fetches there are not recorded`, field);
    } else if (registry) {
      add('QS103', `${host} is declared a docs host, so the shell cannot reach the registry ${registry}; installs that need it will fail (add it to network.allow if that is intended)`, field);
    }
  });

  // QS104: the default image has no Node.
  const node = /\b(npm|npx|node|pnpm|yarn|bun)\b/.exec(payload.check.body);
  if (!t.image && node) {
    add('QS104', `the success check runs ${node[1]} but no image is set; the docker backend's default image has no Node, so set image (e.g. node:22-slim) if the task may run there`, ['success']);
  }

  // QS105: a goal that spells out the commands hands over the answer.
  const goal = t.goal.replace(/\s+/g, ' ');
  replay.forEach((cmd, i) => {
    const first = cmd.split('\n')[0]!.trim().replace(/\s+/g, ' ');
    if (first.length >= 8 && goal.includes(first)) add('QS105', `the goal quotes replay command ${quote(first)} verbatim, so the agent is told the answer instead of finding it in the docs`, ['replay', i]);
  });

  // QS106: budgets that end runs as budget_exhausted instead of evidence.
  const b = t.budgets;
  const bField = (k: string): Segment[] => (raw.budgets && k in raw.budgets ? ['budgets', k] : ['budgets']);
  const needed = t.docs.path.length + replay.length;
  if (b.max_turns < needed) add('QS106', `budgets.max_turns is ${b.max_turns}, fewer than the route's pages plus the replay commands (${needed}); a model agent that follows the docs, a page or a command a turn, ends as budget_exhausted (replay runs every command and counts no turns)`, bField('max_turns'));
  if (b.max_seconds < 60) add('QS106', `budgets.max_seconds is ${b.max_seconds}; installs alone rarely fit, so runs end as budget_exhausted`, bField('max_seconds'));
  if (b.max_command_seconds < 30) add('QS106', `budgets.max_command_seconds is ${b.max_command_seconds}; a package install is killed before it finishes`, bField('max_command_seconds'));
  if (b.max_output_chars < 1000) add('QS106', `budgets.max_output_chars is ${b.max_output_chars}; the agent cannot see enough output to follow the docs`, bField('max_output_chars'));
  const waitTimeout = s.wait_http?.timeout ?? (s.wait_http ? 40 : undefined);
  if (waitTimeout !== undefined && waitTimeout >= b.max_command_seconds) {
    add('QS106', `success.wait_http waits ${waitTimeout}s but a command may run ${b.max_command_seconds}s, so the check is killed before it can say why it failed`, ['success', 'wait_http']);
  }

  // QS107: output the agent can produce without doing the work.
  const matchesEmpty = (pattern: string): boolean => {
    try {
      return new RegExp(pattern).test('');
    } catch {
      return false;
    }
  };
  const e = s.expect_output;
  if (e) {
    const check = (pattern: string, kind: 'contains' | 'matches', path: Segment[]): void => {
      // One that matches any text at all says so itself (QS123): no goal or echo is to blame.
      if (kind === 'matches' && matchesEmpty(pattern)) return;
      const hit = (text: string): boolean => {
        if (kind === 'contains') return text.includes(pattern);
        try {
          return new RegExp(pattern).test(text);
        } catch {
          return false;
        }
      };
      if (hit(t.goal)) add('QS107', `expect_output ${kind} ${quote(pattern)} already appears in the goal, so an agent can pass by echoing it`, path);
      // Only a pattern written after echo/printf/print on the same line is printed literally, and only
      // when that command's output is not sent to a file (`echo 'Hello' > greeting.txt` prints nothing).
      const echoed = replay.findIndex((c) =>
        c.split('\n').some((line) => {
          const m = /\b(echo|printf|print)\b/.exec(line);
          if (m === null) return false;
          const command = ownCommand(line.slice(m.index));
          return hit(command) && !toFile(command);
        }),
      );
      if (echoed >= 0) add('QS107', `expect_output ${kind} ${quote(pattern)} is printed literally by replay command ${echoed + 1}, so the check cannot tell a working run from an echo`, path);
    };
    for (const kind of ['contains', 'matches'] as const) {
      const value = e[kind];
      list(value).forEach((p, i) => check(p, kind, typeof value === 'string' ? ['success', 'expect_output', kind] : ['success', 'expect_output', kind, i]));
    }
  }

  // QS115: grep -E is POSIX ERE; Perl syntax silently never matches, so every run fails.
  const perl = (pattern: string): string | undefined => /\\[dD]|\(\?/.exec(pattern)?.[0];
  for (const [base, block] of [[['success', 'expect_output'], s.expect_output], [['success', 'wait_http'], s.wait_http]] as const) {
    const value = block?.matches;
    list(value).forEach((p, i) => {
      const bad = perl(p);
      if (bad) add('QS115', `${fieldPath([...base, 'matches'])} ${quote(p)} uses ${quote(bad)}, which grep -E does not understand, so it never matches; use POSIX ERE such as [0-9] or a plain group`, typeof value === 'string' ? [...base, 'matches'] : [...base, 'matches', i]);
    });
  }

  // QS108: a check that passes on an empty workspace measures nothing.
  if (!s.wait_http && !s.expect_output && lines.every((l) => HARMLESS.test(l) || NEUTRALISED.test(l))) {
    add('QS108', 'the success check passes on an empty workspace (it only runs true/exit 0/echo, or ignores every failure), so every run would count as passed', authoredField);
  }

  // QS111 / QS112: HTTP checks that do not look at what the run served.
  const w = s.wait_http;
  if (w?.url !== undefined) {
    let host = '';
    try {
      host = new URL(w.url.trim()).hostname.toLowerCase();
    } catch {
      /* rules.ts already refused it */
    }
    if (host && !LOCAL_HOSTS.has(host) && !host.endsWith('.localhost')) {
      add('QS111', `success.wait_http.url points at ${host}, not at anything the run serves, so the check passes or fails whatever the agent did`, ['success', 'wait_http', 'url']);
    }
  }
  if (w?.path !== undefined && s.serve !== undefined && !/QS_PORT/.test(s.serve)) {
    add('QS112', 'success.serve never uses $QS_PORT while wait_http.path polls http://127.0.0.1:$QS_PORT, so the check waits on a port nothing listens on', ['success', 'serve']);
  }

  // QS124: a wait_http.json number the parser could not keep as written.
  for (const [k, v] of Object.entries(w?.json ?? {})) {
    if (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v)) {
      add('QS124', `success.wait_http.json.${k} is ${String(v)} as read, past what a number keeps exactly (2^53), so the check looks for digits the author never wrote; quote it to match its digits`, ['success', 'wait_http', 'json', k]);
    }
  }

  // QS113: replay that never returns.
  replay.forEach((cmd, i) => {
    if (ranCommands(cmd).some((run) => LONG_RUNNING.some((re) => re.test(run)))) {
      add('QS113', `replay command ${quote(cmd)} looks long-running (a server or watcher), so replay waits on it until the budget runs out; put the server in success.serve`, ['replay', i]);
    }
  });

  // The schema allows it, and so does the prior art: a quickstart meant to work offline says so this way.
  if (raw.network?.only !== undefined && raw.network.only.length === 0 && !(raw.network.allow?.length)) {
    add('QS122', 'network.only is empty: the shell reaches no registry and no other host (the docs are read through read_docs); installs fail unless the quickstart works offline — remove it to keep the default registries', ['network', 'only']);
  }
  if (raw.network?.allow && raw.network.only) {
    add('QS114', 'network has both allow and only; only replaces the registry list, so allow merely adds to it — list every host under only', ['network']);
  }
  if (t.replay === null) add('QS201', "the task has no 'replay' commands, so it is agent-only and `--agent replay` skips it", raw.replay ? ['replay'] : []);
  if (raw.docs.entrypoint !== undefined) add('QS203', "docs.entrypoint is the legacy one-page form; write 'path: [URL]' so the route can grow", ['docs', 'entrypoint']);
  // In file order, as people read them.
  return out.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
}

/** QS110: tasks that share a name, within one file or across the files of one validation. */
export function duplicateName(name: string, seen: Map<string, string>, display: string): string | undefined {
  const before = seen.get(name);
  if (before === undefined) {
    seen.set(name, display);
    return undefined;
  }
  return `task name '${name}' is also used by ${before}; results and output folders would collide`;
}
