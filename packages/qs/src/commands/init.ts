// `qs init URL`: a task skeleton from a docs page, read the way an agent reads it: the route starts at
// the page (the pages it links to are listed for the author to order), the replay block is its shell
// code blocks, and the check is left for the author, because only they know what the quickstart promises.
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { InputError, makeDirs, parseArgs, QsExit, terminalSafe, UsageError } from '@quickloop/cli-kit';
import { createDocsReader, parseDocsMap } from '@quickloop/docs';
import { stringify } from 'yaml';
import type { Command } from '../command.js';
import { stageCommand } from '../bins.js';
import { VERSION } from '../version.js';

/** First host labels that name the docs site rather than the project (docs.example.com is "example"). */
const GENERIC_LABELS = new Set(['docs', 'www', 'api', 'developer', 'developers', 'dev', 'learn', 'guide', 'help']);

/** `greeter-quickstart` for docs.greeter.test/quickstart.html: the project from the host, then the page. */
export function taskName(url: URL): string {
  const labels = url.hostname.split('.').filter(Boolean);
  // An address names no project: a site on loopback or a LAN is "local".
  const project = /^[\d.]+$|^\[/.test(url.hostname) ? 'local' : labels.length > 1 && GENERIC_LABELS.has(labels[0] ?? '') ? labels[1] : labels.length > 2 ? labels[labels.length - 2] : labels[0];
  const page = url.pathname.split('/').filter(Boolean).at(-1)?.replace(/\.(html?|md)$/i, '') ?? '';
  const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  const parts = [slug(project ?? 'docs'), slug(page) || 'quickstart'].filter(Boolean);
  return [...new Set(parts)].join('-') || 'quickstart';
}

/** Fenced code a reader would type: shell blocks (and unlabelled ones), prompts removed; never a file's contents. */
const SHELL = new Set(['', 'sh', 'bash', 'shell', 'zsh', 'console', 'shell-session', 'terminal', 'sh-session', 'shellsession']);

export function commandBlocks(markdown: string): string[] {
  const out: string[] = [];
  const fence = /^(```+|~~~+)[ \t]*([^\s`]*)[^\n]*\n([\s\S]*?)\n\1[ \t]*$/gm;
  for (const m of markdown.matchAll(fence)) {
    const lang = (m[2] ?? '').toLowerCase();
    if (!SHELL.has(lang)) continue;
    const lines = (m[3] ?? '').split('\n');
    const prompted = lines.filter((l) => /^\s*\$ /.test(l));
    // A console session: only what follows a prompt was typed; the rest is what the terminal printed.
    const typed = lang === 'console' || lang === 'shell-session' || lang === 'sh-session' || lang === 'shellsession' || (prompted.length > 0 && prompted.length < lines.filter((l) => l.trim() !== '').length && lines[0]?.trimStart().startsWith('$ '));
    const body = typed ? prompted.map((l) => l.replace(/^\s*\$ /, '')) : lines.map((l) => (prompted.length === lines.filter((x) => x.trim() !== '').length ? l.replace(/^\s*\$ /, '') : l));
    const text = body.join('\n').trim();
    if (text !== '') out.push(text);
  }
  return out;
}

/** Pages on an allowed host that the page links to, in order, without fragments, the page itself left out. */
export function linkedPages(markdown: string, self: URL, hosts: readonly string[]): string[] {
  const seen = new Set<string>([self.href.replace(/#.*$/, '')]);
  const out: string[] = [];
  for (const m of markdown.matchAll(/\]\((https?:\/\/[^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    let u: URL;
    try {
      u = new URL(m[1] as string);
    } catch {
      continue;
    }
    u.hash = '';
    if (!hosts.includes(u.hostname) || seen.has(u.href)) continue;
    if (/\.(png|jpe?g|gif|svg|webp|ico|css|js|zip|tar|gz)$/i.test(u.pathname)) continue;
    seen.add(u.href);
    out.push(u.href);
  }
  return out;
}

export const init: Command = {
  name: 'init',
  summary: 'Write a task skeleton from a docs page: its route, its shell code blocks as the replay, a check to fill in',
  async run(argv, io) {
    const args = parseArgs(argv, { name: 'qs init', version: VERSION, usage: '$0 URL [--name NAME] [--out FILE] [--force] [--docs-map URL_PREFIX=DIR]...', out: io.stdout, positionals: 1 }, (y) =>
      y
        .option('name', { type: 'string', describe: 'The task name (default: the project from the host, then the page)' })
        .option('out', { type: 'string', describe: 'Where to write it (default: tasks/NAME.yaml)' })
        .option('force', { type: 'boolean', default: false, describe: 'Overwrite an existing file' })
        .option('docs-map', { type: 'string', array: true, default: [] as string[], describe: 'Read docs under URL_PREFIX from the folder DIR (repeatable)' }),
    );
    const raw = String(args._[0] ?? '');
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new UsageError(`qs init: ${raw === '' ? 'name the docs page to start from' : `'${raw}' is not a URL`} (an http(s) URL)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`qs init: ${raw}: only http(s) docs pages can be read`);
    const name = args.name !== undefined ? String(args.name) : taskName(url);
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new UsageError(`qs init: --name '${name}': use letters, digits, '.', '_' and '-'`);
    const file = resolve(io.cwd, args.out !== undefined ? String(args.out) : `tasks/${name}.yaml`);
    const shown = relative(io.cwd, file) || file;
    if (existsSync(file) && !args.force) throw new UsageError(`qs init: ${shown} exists (--force to overwrite it)`);

    const reader = createDocsReader({ allow: [url.hostname], route: [url.href], maps: args['docs-map'].map((m) => parseDocsMap(String(m), io.cwd)), signal: io.signal });
    const page = await reader.read(url.href);
    if (!page.ok) throw new InputError(`qs init: could not read ${terminalSafe(page.url)}: ${terminalSafe(page.error)}`);
    // The whole page, not its first part: commands and links past the first part count too.
    const markdown = page.markdown;
    const commands = commandBlocks(markdown);
    const final = new URL(page.finalUrl);
    const hosts = [...new Set([url.hostname, final.hostname])];
    const links = linkedPages(markdown, final, hosts);

    const task: Record<string, unknown> = {
      name,
      goal: 'TODO: what a reader of this quickstart wants to have at the end, in their words (not the commands).',
      docs: { path: [page.finalUrl], ...(hosts.length > 1 ? { allow: hosts.filter((h) => h !== final.hostname) } : {}) },
      ...(commands.length > 0 ? { replay: commands } : {}),
      success: { script: "qs_fail 'TODO: check what the quickstart promises (a file, a server answering, a printed value)'" },
    };
    const header = [
      `# A task skeleton qs init wrote from ${page.finalUrl}.`,
      '# Fill in the goal and the success check; order docs.path the way the quickstart sends readers.',
      commands.length > 0 ? `# replay: the page's ${commands.length} shell code block${commands.length === 1 ? '' : 's'}, in order; check each is what a reader types.` : '# No shell code blocks were found on the page: add replay commands, or leave the task agent-only.',
    ];
    const linked = links.slice(0, 25).map((l) => `#   - ${l}`);
    const body = stringify(task, { lineWidth: 0 });
    const text = [...header, body.trimEnd(), ...(linked.length > 0 ? ['', '# Pages it links to, for docs.path if the quickstart continues there:', ...linked] : []), ''].join('\n');
    makeDirs(dirname(file));
    writeFileSync(file, text);
    io.stderr.write(`wrote ${shown}: ${commands.length} replay command${commands.length === 1 ? '' : 's'}, ${links.length} linked page${links.length === 1 ? '' : 's'}\n`);
    // What qs-validate says of it now, so the author starts from its words.
    const cmd = stageCommand('qs-validate');
    const check = spawnSync(cmd.file, [...cmd.args, file], { cwd: io.cwd, env: io.env as NodeJS.ProcessEnv, encoding: 'utf8' });
    if (check.stderr) io.stderr.write(check.stderr);
    return QsExit.passed;
  },
};
