// `qs doctor`: what this machine gives a run — backends and what each enforces here (found by opening a real
// sandbox), the model agents' keys (never their values), the registries the shell may install from, the tasks found.
import { spawn } from 'node:child_process';
import { homedir, userInfo } from 'node:os';
import { parseArgs, QsExit, terminalSafe, type Io } from '@quickloop/cli-kit';
import { discoverRegistriesSync, installSources } from '@quickloop/registries';
import { findProjectConfig, loadProjectConfig } from '@quickloop/task';
import { bwrapUnavailable, createLayout, onPath, openSandbox, removeLayout, type LimitInForce } from '@quickloop/sandbox';
import type { Command } from '../command.js';
import { stageCommand } from '../bins.js';
import { VERSION } from '../version.js';
import { KEY_VARS } from './doctor-keys.js';

const size = (n: number, unit: 'count' | 'bytes'): string => {
  if (unit === 'count') return String(n);
  const gib = n / 2 ** 30;
  if (gib >= 1 && Number.isInteger(gib)) return `${gib} GiB`;
  return `${Math.round(n / 2 ** 20)} MiB`;
};

const limitLine = (l: LimitInForce): string => `${l.name} ${size(l.value, l.unit)} (${l.enforced_by}${l.scope === 'sandbox' ? '' : `, per ${l.scope}`})`;

/** Opens and closes a real bwrap sandbox: what it says it enforces is what a run gets. */
async function probeBwrap(env: Record<string, string | undefined>): Promise<{ ok: true; limits: LimitInForce[]; reason: string } | { ok: false; why: string }> {
  const problem = bwrapUnavailable();
  if (problem) return { ok: false, why: problem };
  const layout = createLayout();
  try {
    const policy = { explicit: [], docs_hosts: [], registries: [], registries_source: 'only' as const };
    const sandbox = await openSandbox({ workspace: layout, policy, installHosts: false, backend: 'bwrap', allowUnenforced: false, env, onEgress: () => undefined });
    const d = sandbox.describe();
    const probe = await sandbox.exec('id -u; cat /etc/hostname', { timeoutMs: 10_000, maxOutputChars: 2000 });
    await sandbox.close();
    const uid = probe.output.split('\n')[0]?.trim() ?? '?';
    return { ok: true, limits: d.limits, reason: `${d.reason}; commands run as uid ${uid} inside` };
  } catch (error) {
    return { ok: false, why: (error as Error).message };
  } finally {
    removeLayout(layout);
  }
}

/** The stage's own report on the tasks it finds (`ok …` / `INVALID …` lines), exactly as qs-validate prints it. */
function validateTasks(io: Io, files: string[]): Promise<string> {
  return new Promise((resolve) => {
    const cmd = stageCommand('qs-validate');
    const child = spawn(cmd.file, [...cmd.args, ...files], { cwd: io.cwd, env: io.env as NodeJS.ProcessEnv, stdio: ['ignore', 'ignore', 'pipe'] });
    let text = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c: string) => {
      if (text.length < 64_000) text += c;
    });
    child.on('error', (e) => resolve(`could not start qs-validate: ${e.message}\n`));
    child.on('close', () => resolve(text));
  });
}

export const doctor: Command = {
  name: 'doctor',
  summary: 'What this machine gives a run: backends and their limits, model keys found, registries, tasks',
  async run(argv, io) {
    const args = parseArgs(argv, { name: 'qs doctor', version: VERSION, usage: '$0 [TASK|DIR...]', out: io.stdout, positionals: 1000 }, (y) => y);
    const out = (line = ''): void => {
      io.stdout.write(`${line}\n`);
    };
    out(`qs ${VERSION} · node ${process.version} · ${process.platform} ${process.arch} · user ${userInfo().username} (uid ${process.getuid?.() ?? '?'})`);
    out();
    out('backends');
    const bwrap = await probeBwrap(io.env);
    if (bwrap.ok) {
      out(`  bwrap   available, chosen by --backend auto: ${bwrap.reason}`);
      out('          enforces: the filesystem (an allow-listed root, the workspace writable), the network (the egress proxy only), no privilege');
      out(`          limits: ${bwrap.limits.length > 0 ? bwrap.limits.map(limitLine).join(' · ') : 'none'}`);
      const none = bwrap.limits.filter((l) => l.enforced_by === 'none');
      if (none.length > 0) out(`          WARNING: nothing here enforces ${none.map((l) => l.name).join(', ')}`);
    } else {
      out(`  bwrap   unavailable: ${terminalSafe(bwrap.why)}`);
      out('  WARNING: no enforced backend; runs need --allow-unenforced and every result will say enforced: false');
    }
    out('  local   always available with --allow-unenforced; enforces nothing');
    out();
    out('model agents (keys are never printed)');
    for (const [agent, vars] of Object.entries(KEY_VARS)) {
      const found = vars.keys.find((v) => (io.env[v] ?? '') !== '');
      const base = vars.baseUrl !== undefined && (io.env[vars.baseUrl] ?? '') !== '' ? ` · base URL from ${vars.baseUrl}` : '';
      out(`  ${agent.padEnd(11)} ${found ? `key from ${found}` : `no key (${vars.keys.join(', ')})`}${base}`);
    }
    for (const cli of ['claude', 'codex']) {
      const where = onPath(cli, io.env.PATH);
      out(`  ${cli.padEnd(11)} ${where ? `found: ${terminalSafe(where)}` : 'not on PATH'}`);
    }
    out();
    out('registries the shell may install from');
    const regs = discoverRegistriesSync({ env: io.env, home: io.env.HOME ?? homedir(), cwd: io.cwd });
    if (regs.sources.length === 0) out('  none found');
    for (const s of regs.sources.filter((x, i, all) => all.findIndex((y) => y.endpoint === x.endpoint && y.from === x.from) === i)) out(`  ${s.endpoint.padEnd(28)} ${terminalSafe(s.from)}`);
    // What a new sandbox home's npmrc and pip.conf are given (where a task's policy allows it).
    const told = installSources({ env: io.env, home: io.env.HOME ?? homedir(), cwd: io.cwd });
    const lines = [...told.npm.map(([key, url]) => `npm ${key}=${url}`), ...(told.pip.index ? [`pip index-url = ${told.pip.index}`] : []), ...told.pip.extra.map((u) => `pip extra-index-url = ${u}`)];
    out(`  a sandbox's own config: ${lines.length === 0 ? "nothing to add (npm's and pip's defaults, and the system's files, seen inside as they are)" : terminalSafe(lines.join(' · '))}`);
    out();
    out('project config');
    const configPath = findProjectConfig(io.cwd);
    if (configPath === undefined) out('  none (no quickloop.yaml from here up)');
    else {
      try {
        const c = loadProjectConfig(configPath, io.cwd);
        out(`  ${terminalSafe(c.display)}: run: ${Object.keys(c.run).join(', ') || 'nothing'} · tasks: ${Object.keys(c.tasks).join(', ') || 'nothing'}`);
      } catch (error) {
        out(`  INVALID  ${terminalSafe((error as Error).message)}`);
      }
    }
    out();
    out('tasks');
    const report = await validateTasks(io, args._.map(String));
    for (const line of report.split('\n')) if (line.trim() !== '') out(`  ${terminalSafe(line)}`);
    return QsExit.passed;
  },
};
