// `qs run [TASK|DIR|GLOB...]`: a sweep of the tasks qs-validate finds, each attempt the real
// `qs-sandbox | qs-agent | qs-check` pipeline in a child process, then results.json, JUnit and the summary.
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { signalName } from '@quickloop/events';
import { logLevel, makeDirs, parseArgs, QsExit, terminalSafe, UsageError, wantsColour } from '@quickloop/cli-kit';
import { checkAgentFlags, checkModelConfig, docsSettings, isModelAgent } from '@quickloop/qs-agent/config';
import { checkSpendable, parseMaxSpend, startSpendLedger, type SpendLedger } from '@quickloop/qs-agent/spend';
import { askNpmConfig, DEFAULT_INSTALL_CACHE_MAX_BYTES, DEFAULT_LIMITS, installCacheDir, limitFlagsOf, limitsFromFlags, parseCacheSize, registryOf, trimInstallStore } from '@quickloop/sandbox';
import type { Command } from '../command.js';
import { findExample, materialise, type Materialised } from '../examples/examples.js';
import { findProjectConfig, loadProjectConfig, type ProjectConfig } from '@quickloop/task';
import { foldResults, serialiseResults, type Results } from '../results/fold.js';
import { loadResults, resultsFromDir } from '../results/load.js';
import { checkReportPaths, exitCode, publishResults } from '../results/publish.js';
import { rateText } from '../results/reports.js';
import { durationsFromResults, parseShard, PLAN_FILE, planDurations, planEvent, planTasksOf, spendShare, STOP_FILE, stopEvent, sweepPlan, type Share } from '../sweep/plan.js';
import { createProgress } from '../sweep/progress.js';
import { loadTasks, sweep, type SweepOutcome } from '../sweep/sweep.js';
import { parseQueueUrl, produce } from '../fleet/queue.js';
import { VERSION } from '../version.js';

const USAGE =
  '$0 [TASK|DIR|GLOB...] [--agent replay|recorded|anthropic|openai|openai-chat|gemini|claude-code|codex] [--model M] [--base-url URL] [--prices FILE] [--from FILE] [--max-spend USD] [--repeat N] [--workers N] [--out DIR] [--install-cache DIR [--install-cache-max SIZE]] [--max-processes N] [--max-memory SIZE] [--max-tmp SIZE] [--max-shm SIZE] [--junit FILE] [--summary FILE] [--strict-inconclusive] [--keep-sandbox] [--docs-map URL_PREFIX=DIR]... [--shard INDEX/TOTAL|auto[/TOTAL] [--durations RESULTS]]';

export { exitCode };

/** The first name two loaded tasks share, with the files they came from. */
function sharedName(tasks: readonly { name: string; lines: readonly unknown[] }[]): { name: string; paths: string[] } | undefined {
  const seen = new Map<string, string[]>();
  for (const t of tasks) {
    const path = String(((t.lines[0] as { source?: { path?: unknown } } | undefined)?.source?.path ?? '-'));
    const paths = seen.get(t.name) ?? [];
    paths.push(path);
    seen.set(t.name, paths);
  }
  for (const [name, paths] of seen) if (paths.length > 1) return { name, paths };
  return undefined;
}

/** A store's size as the trim line says it. */
const gib = (bytes: number): string => (bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(1)} GiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`);

function count(name: string, value: unknown, max: number): number {
  const n = Number(value);
  // Digits only: Number() also reads 1e1 as 10 and 0x10 as 16.
  if (!/^\d+$/.test(String(value).trim()) || !Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`qs run: --${name} must be a whole number from 1 to ${max} (got ${String(value)})`);
  return n;
}

/**
 * Each attempt is a process of its own (a crash or a stuck stage costs that attempt only), running
 * the stages' own cli() functions: what a stage does cannot drift from the pipe a person types.
 */
export const run: Command = {
  name: 'run',
  summary: 'Run tasks through validate | sandbox | agent | check, repeated and in parallel; results.json, JUnit, summary',
  async run(typedArgv, io) {
    const config = projectConfig(typedArgv, io.cwd);
    // After what was typed (list flags would swallow the task files that follow them), before any `--`.
    const end = typedArgv.indexOf('--');
    const argv = end < 0 ? [...typedArgv, ...configFlags(config, typedArgv)] : [...typedArgv.slice(0, end), ...configFlags(config, typedArgv), ...typedArgv.slice(end)];
    const args = parseArgs(argv, { name: 'qs run', version: VERSION, usage: USAGE, out: io.stdout, positionals: 1000 }, (y) =>
      y
        .option('agent', { type: 'string', default: 'replay', describe: 'Who works on the task (passed to qs-agent)' })
        .option('model', { type: 'string', describe: 'The model a model agent asks for (passed to qs-agent)' })
        .option('base-url', { type: 'string', describe: 'Model agents: the API endpoint (a gateway, a local OpenAI-compatible server)' })
        .option('prices', { type: 'string', describe: 'Model agents: a price book JSON file instead of the built-in one' })
        .option('stream', { type: 'boolean', default: true, describe: 'Model agents: stream responses (--no-stream asks for whole ones)' })
        .option('from', { type: 'string', describe: '--agent recorded: the saved stream whose model turns are re-driven' })
        .option('from-run', { type: 'string', describe: '--agent recorded: the run_id to re-drive' })
        .option('max-spend', { type: 'string', describe: 'Model agents: stop the sweep before any model call that could take its spending past USD (all workers together, a --queue fleet\'s included; a shard gets its share)' })
        .option('repeat', { type: 'string', default: '1', describe: 'Attempts per task' })
        .option('workers', { type: 'string', default: '1', describe: 'Attempts run at once, each in its own sandbox' })
        .option('queue', { type: 'string', describe: 'Run on a worker fleet: enqueue the attempts on redis://HOST:PORT/DB for qs worker, collect their streams' })
        .option('out', { type: 'string', describe: 'Write DIR/<task>/<attempt>/events.ndjson as it happens, then DIR/results.json' })
        .option('junit', { type: 'string', describe: 'Write JUnit XML here' })
        .option('summary', { type: 'string', describe: 'Write a Markdown summary here' })
        .option('shard', {
          type: 'string',
          describe:
            'Run one share of the attempts: INDEX/TOTAL (1-based), or auto[/TOTAL] from JOB_COMPLETION_INDEX, CI_NODE_INDEX/CI_NODE_TOTAL or AWS_BATCH_JOB_ARRAY_INDEX (a total from QS_SHARD_TOTAL); merge the folders with qs merge. A --max-spend cap is the whole sweep\'s: each shard gets cap/TOTAL',
        })
        .option('durations', { type: 'string', describe: 'With --shard: balance shards by each task\'s mean duration in this results.json (or --out folder); every shard must be given the same file' })
        .option('strict-inconclusive', { type: 'boolean', default: false, describe: 'An inconclusive run makes the exit code 2 even when others passed' })
        .option('config', { type: 'string', describe: 'The project config (default: the nearest quickloop.yaml from here up); --no-config for none' })
        .option('example', { type: 'string', array: true, default: [] as string[], describe: 'Run this bundled example offline instead of task files (repeatable; see qs examples)' })
        .option('docs-map', { type: 'string', array: true, default: [] as string[], describe: 'Serve docs under URL_PREFIX from the folder DIR (repeatable)' })
        .option('install-cache', { type: 'string', describe: 'Share npm and pip downloads across attempts: a store only qs writes, each file verified by its hash' })
        .option('install-cache-max', { type: 'string', describe: 'Trim the --install-cache store to 80% of this size, oldest first, before the first attempt when it holds more (default 5G)' })
        .option('cache-dir', { type: 'string', describe: 'Keep docs pages in this folder, keyed by URL, with their content hashes' })
        .option('refresh', { type: 'boolean', default: false, describe: 'Re-fetch cached docs pages (docs.changed when one changed)' })
        .option('offline', { type: 'boolean', default: false, describe: 'Read docs from --cache-dir (and --docs-map) only' })
        .option('ignore-robots', { type: 'boolean', default: false, describe: 'Do not consult robots.txt (recorded)' })
        .option('rate-limit', { type: 'string', describe: 'Minimum SECONDS between requests to one docs host (default 1)' })
        .option('affordances', { type: 'string', default: 'all', choices: ['all', 'none'], describe: 'none: withhold llms.txt, llms-full.txt and .md variants' })
        .option('probe-affordances', { type: 'boolean', default: false, describe: 'Record what machine-readable docs the site offers' })
        .option('backend', { type: 'string', default: 'auto', choices: ['auto', 'bwrap', 'local'], describe: 'Sandbox backend' })
        .option('max-processes', { type: 'string', describe: `Processes alive at once in each attempt's sandbox (default ${DEFAULT_LIMITS.processes})` })
        .option('max-memory', { type: 'string', describe: "Memory of each attempt's sandbox, its tmpfs included (default 4G)" })
        .option('max-tmp', { type: 'string', describe: "Size of each sandbox's /tmp and /var/tmp, each (default 1G)" })
        .option('max-shm', { type: 'string', describe: "Size of each sandbox's /dev/shm (default 256M)" })
        .option('allow-unenforced', { type: 'boolean', default: false, describe: 'Allow the local backend, which enforces nothing' })
        .option('allow-registry', { type: 'string', array: true, default: [] as string[], describe: 'Also allow this registry host (repeatable)' })
        .option('keep-sandbox', { type: 'boolean', default: false, alias: 'keep', describe: 'Keep each workspace (for qs-check < saved.ndjson); its path is in run.completed' }),
    );
    // Checked here as qs-agent would, before any stage starts: a missing key must not leave sandboxes behind.
    let needsLedger = false;
    const maxSpend = args['max-spend'] === undefined ? undefined : parseMaxSpend(args['max-spend']);
    if (isModelAgent(args.agent)) {
      const checked = checkModelConfig(
        args.agent,
        { ...(args.model !== undefined ? { model: String(args.model) } : {}), ...(args['base-url'] !== undefined ? { baseUrl: String(args['base-url']) } : {}), ...(args.prices !== undefined ? { prices: String(args.prices) } : {}) },
        io.env,
        io.cwd,
      );
      if (maxSpend !== undefined) needsLedger = checkSpendable(args.agent, checked.resolved.model, checked.prices);
    } else if (maxSpend !== undefined) needsLedger = checkSpendable(args.agent, args.model === undefined ? undefined : String(args.model));
    const checkRecorded = checkAgentFlags(
      String(args.agent),
      { ...(args.from !== undefined ? { from: String(args.from) } : {}), ...(args['from-run'] !== undefined ? { fromRun: String(args['from-run']) } : {}), ...(args.prices !== undefined ? { prices: String(args.prices) } : {}) },
      io.cwd,
    );
    const repeat = count('repeat', args.repeat, 1000);
    const workers = count('workers', args.workers, 64);
    const queue = args.queue === undefined ? null : parseQueueUrl(String(args.queue));
    const level = logLevel(args);
    const quiet = level === 'quiet' ? ['--quiet'] : level === 'verbose' ? ['--verbose'] : [];
    const out = args.out === undefined ? null : resolve(io.cwd, String(args.out));
    if (args.out !== undefined && String(args.out) === '') throw new UsageError('qs run: --out needs a folder');
    if (out !== null && existsSync(out)) {
      if (!statSync(out).isDirectory()) throw new UsageError(`qs run: --out ${String(args.out)}: is a file, not a folder`);
      // A second sweep into the same folder would mix its attempts into the first's results.
      if (readdirSync(out).length > 0) throw new UsageError(`qs run: --out ${String(args.out)}: the folder is not empty (name a new one)`);
    }
    const reportPaths = { junit: args.junit === undefined ? undefined : String(args.junit), summary: args.summary === undefined ? undefined : String(args.summary) };
    checkReportPaths(reportPaths, io.cwd, 'qs run');
    const shard = args.shard === undefined ? null : parseShard(String(args.shard), io.env);
    // The fleet hands out every attempt itself: a static share of them on top would leave some to nobody.
    if (shard !== null && queue !== null) throw new UsageError('qs run: --shard and --queue are two ways to split a sweep; give one');
    if (args.durations !== undefined && shard === null) throw new UsageError('qs run: --durations balances shards; give --shard with it');
    const durations = args.durations === undefined ? undefined : durationsFromResults(await loadResults(resolve(io.cwd, String(args.durations)), String(args.durations), VERSION));
    const examples: Materialised[] = [];
    if (args.example.length > 0 && args._.length > 0) throw new UsageError('qs run: --example runs the bundled tasks; name no task files with it');
    // Looked up first: an unknown name leaves nothing written.
    for (const e of [...new Set(args.example.map(String))].map(findExample)) examples.push(materialise(e));
    let ledger: SpendLedger | undefined;
    let ledgerDir: string | undefined;
    try {
      // A fleet's cap is held in Redis for every machine (the producer sets it, each worker serves its agents from it).
      if (needsLedger && maxSpend !== undefined && queue === null) {
        // A private folder: only this user's agents can reach the socket, and nothing inside a sandbox can see it.
        ledgerDir = mkdtempSync(join(io.env.TMPDIR || tmpdir(), 'qs-spend-'));
        // A shard holds its share of the cap, so the shards together hold the whole with no shared state.
        ledger = await startSpendLedger(join(ledgerDir, 'ledger.sock'), shard === null ? maxSpend : spendShare(maxSpend, shard.total));
      }
      const keep = args['keep-sandbox'] ? ['--keep'] : [];
      const limits = limitFlagsOf(limitsFromFlags(args, 'qs run: '));
      if (limits.length > 0 && queue !== null) throw new UsageError("qs run: --max-processes, --max-memory, --max-tmp and --max-shm are a machine's own: a fleet's workers keep their sandbox limits, so give none with --queue");
      if (args['install-cache-max'] !== undefined && args['install-cache'] === undefined) throw new UsageError('qs run: --install-cache-max bounds the --install-cache store; give --install-cache with it');
      const storeMax = args['install-cache-max'] === undefined ? DEFAULT_INSTALL_CACHE_MAX_BYTES : parseCacheSize(String(args['install-cache-max']), 'qs run: --install-cache-max');
      const store = args['install-cache'] === undefined ? undefined : installCacheDir(String(args['install-cache']), io.cwd);
      const installCache = store === undefined ? [] : ['--install-cache', store];
      // npm is asked for its registry once here, not by every attempt's qs-check (each `npm config get` is a
      // Node start), while the tasks are validated. A fleet's workers each ask their own npm.
      const askedNpm = installCache.length > 0 && queue === null ? askNpmConfig(io.cwd, io.env as NodeJS.ProcessEnv) : Promise.resolve(undefined);
      const docsMaps = [...args['docs-map'].map(String), ...examples.map((e) => e.docsMap)];
      // The docs reader's flags go to qs-agent as given, checked here first as qs-agent checks them: a bad
      // one is one usage error before anything runs, not a failed stage in every attempt.
      // Passed on resolved (each folder an absolute path), so a stage or a fleet's worker in another folder reads the same one.
      const mapped = docsSettings({ ...args, 'docs-map': docsMaps }, io.cwd).maps.map((m) => `${m.prefix}=${m.dir}`);
      const docs = [
        ...(args['cache-dir'] !== undefined ? ['--cache-dir', resolve(io.cwd, String(args['cache-dir']))] : []),
        ...(args.refresh ? ['--refresh'] : []),
        ...(args.offline ? ['--offline'] : []),
        ...(args['ignore-robots'] ? ['--ignore-robots'] : []),
        ...(args['rate-limit'] !== undefined ? ['--rate-limit', String(args['rate-limit'])] : []),
        ...(args.affordances !== 'all' ? ['--affordances', String(args.affordances)] : []),
        ...(args['probe-affordances'] ? ['--probe-affordances'] : []),
      ];
      const taskArgs = examples.length > 0 ? examples.map((e) => e.taskPath) : args._.map(String);
      const registries = args['allow-registry'].flatMap((h) => ['--allow-registry', String(h)]);
      const colour = wantsColour(io.stderr, io.env);
      const configArg = config === undefined ? ['--no-config'] : ['--config', config.path];
      const loaded = await loadTasks([...taskArgs, ...registries, ...configArg, ...quiet], io, (t) => io.stderr.write(t));
      for (const e of loaded.other) io.stdout.write(`${JSON.stringify(e)}\n`);
      if (loaded.tasks.length === 0) {
        io.stderr.write('qs run: no valid task to run\n');
        return QsExit.usage;
      }
      // results.json, qs diff, qs merge and JUnit know a task by its name: two of one name would be one task there.
      const shared = sharedName(loaded.tasks);
      if (shared !== undefined) throw new UsageError(`qs run: two tasks are named ${JSON.stringify(shared.name)} (${shared.paths.map((p) => terminalSafe(p)).join(', ')}); results.json and qs diff know a task by its name, so rename one`);
      checkRecorded(loaded.tasks.map((t) => t.name));
      // Trimmed before any attempt seeds a home from it. A fleet's workers each have their own store, on their own machines.
      if (store !== undefined && queue === null) {
        const trim = trimInstallStore(store, storeMax);
        if (trim.removed > 0 && level !== 'quiet') io.stderr.write(`qs run: --install-cache ${terminalSafe(store)}: held ${gib(trim.before)}, over its ${gib(storeMax)} limit; removed ${trim.removed} file${trim.removed === 1 ? '' : 's'}, oldest first (${gib(trim.after)} now)\n`);
      }
      // The URL goes on without credentials.
      const npm = await askedNpm;
      const registryUrl = npm?.registry === undefined ? undefined : registryOf(npm.registry)?.url;
      const npmArgs = registryUrl === undefined ? [] : ['--npm-registry', registryUrl, ...(npm?.cafile !== undefined ? ['--npm-cafile', npm.cafile] : [])];
      const share: Share = queue !== null ? { kind: 'queue', queue: queue.shown } : shard === null ? { kind: 'all' } : { kind: 'shard', index: shard.index, total: shard.total };
      const plan = sweepPlan(
        { tasks: planTasksOf(loaded.tasks), repeat, agent: String(args.agent), model: args.model === undefined ? null : String(args.model), versions: { qs: VERSION } },
        share,
        durations === undefined ? undefined : planDurations(loaded.tasks, durations),
      );
      if (out !== null) {
        try {
          makeDirs(out);
          // First, before any attempt: a folder says which sweep it belongs to even if qs dies in it.
          writeFileSync(resolve(out, PLAN_FILE), `${JSON.stringify(planEvent(plan, io.now().toISOString()))}\n`);
        } catch (error) {
          // A path under a file, or one qs may not write: the user's to fix, said before any attempt runs.
          throw new UsageError(`qs run: --out ${String(args.out)}: cannot write there (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
        }
      }
      if (shard !== null && level !== 'quiet') {
        io.stderr.write(`qs run: shard ${shard.index}/${shard.total}${shard.from === '--shard' ? '' : ` (from ${shard.from})`}: ${plan.assigned.length} of ${plan.attempts} attempts${durations === undefined ? '' : ', balanced by --durations'}\n`);
      }
      const total = plan.assigned.length;
      const sweepProgress = createProgress({ stream: io.stderr, colour, live: io.stderr.isTTY === true && io.env.TERM !== 'dumb', quiet: level === 'quiet', total, now: () => io.now().getTime(), workflowCommands: io.env.GITHUB_ACTIONS === 'true' });
      const many = total > 1;
      const argvOf = {
            'qs-sandbox': ['--backend', args.backend, ...(args['allow-unenforced'] ? ['--allow-unenforced'] : []), ...registries, ...keep, ...installCache, ...limits, ...quiet],
            'qs-agent': [
              '--agent',
              args.agent,
              ...(args.model !== undefined ? ['--model', String(args.model)] : []),
              ...(args['base-url'] !== undefined ? ['--base-url', String(args['base-url'])] : []),
              ...(args.prices !== undefined ? ['--prices', resolve(io.cwd, String(args.prices))] : []),
              ...(args.stream ? [] : ['--no-stream']),
              ...(args.from !== undefined ? ['--from', resolve(io.cwd, String(args.from))] : []),
              ...(ledger ? ['--spend-ledger', ledger.path] : []),
              ...(args['from-run'] !== undefined ? ['--from-run', String(args['from-run'])] : []),
              ...mapped.flatMap((m) => ['--docs-map', m]),
              ...docs,
              ...quiet,
            ],
            'qs-check': [...keep, ...installCache, ...npmArgs, ...quiet],
          };
      const label = (slug: string, attempt: number): string => (many ? `${slug}#${attempt}` : slug);
      let outcome: SweepOutcome;
      let spendStopped = false;
      let capState: { cap: number; spent: number } | undefined;
      if (queue !== null) {
        const fleet = await produce({ tasks: loaded.tasks, repeat, argvOf, out, progress: sweepProgress, label, target: queue, plan: plan.plan_sha256, ...(needsLedger && maxSpend !== undefined ? { spendCapUsd: maxSpend } : {}) }, io);
        outcome = fleet;
        if (fleet.spendStopped > 0) {
          io.stderr.write(`qs run: the fleet's spend cap ran out: ${fleet.spendStopped} attempt${fleet.spendStopped === 1 ? ' was' : 's were'} not run\n`);
          spendStopped = true;
        }
        if (fleet.spend?.exhausted) capState = { cap: fleet.spend.capUsd, spent: fleet.spend.spentUsd };
      } else
        outcome = await sweep(
        {
          tasks: loaded.tasks,
          repeat,
          jobs: plan.assigned,
          workers,
          out,
          progress: sweepProgress,
          label,
          halted: () => ledger?.state().tripped === true,
          argvOf,
        },
        io,
        io.newId,
      );
      sweepProgress.close();
      let results: Results;
      // A signal between attempts cuts none of them: the folder says itself that the sweep was stopped.
      const stopped = outcome.interrupted ? { signal: signalName(io.signal) } : null;
      if (out !== null) {
        if (stopped !== null) writeFileSync(join(out, STOP_FILE), `${JSON.stringify(stopEvent(stopped.signal, outcome.attempts.length, total, io.now().toISOString()))}\n`);
        // Folded from the files, not from memory: what is written is by construction what `qs results` rebuilds.
        results = await resultsFromDir(out, VERSION, String(args.out));
        writeFileSync(resolve(out, 'results.json'), serialiseResults(results));
      } else results = foldResults(outcome.attempts, VERSION, plan, stopped);
      publishResults(results, reportPaths, io, 'qs run');
      if (many || level === 'verbose') {
        for (const t of results.tasks) io.stderr.write(`${terminalSafe(t.task)}: ${rateText(t)}${t.flaky ? ' FLAKY' : ''}${Object.keys(t.discarded).length ? ` · discarded ${Object.entries(t.discarded).map(([k, n]) => `${k} ${n}`).join(', ')}` : ''}\n`);
      }
      if (out !== null && level !== 'quiet') io.stderr.write(`results: ${resolve(out, 'results.json')}\n`);
      if (outcome.interrupted) {
        io.stderr.write(`qs run: interrupted: ${outcome.attempts.length} of ${total} attempts recorded${queue !== null ? ' (the fleet takes no more of this sweep)' : ''}\n`);
        return QsExit.interrupted;
      }
      const local = ledger?.state();
      if (local?.tripped) capState = { cap: local.cap, spent: local.spent };
      if (capState !== undefined) {
        const stopped = results.tasks.flatMap((t) => t.runs).filter((r) => r.stop_reason === 'spend_cap').length;
        io.stderr.write(`qs run: stopped by the spend cap ($${capState.cap}): $${capState.spent} spent; ${outcome.attempts.length} of ${total} attempts recorded, ${stopped} of them stopped by the cap\n`);
        return QsExit.interrupted;
      }
      if (spendStopped) return QsExit.interrupted;
      if (outcome.usageErrors > 0) io.stderr.write(`qs run: a stage refused its input or flags in ${outcome.usageErrors} attempt${outcome.usageErrors === 1 ? '' : 's'} (its message is above)\n`);
      // More shards than attempts leaves some with none: that shard did its part, so a matrix stays green.
      if (total === 0 && loaded.code + outcome.usageErrors === 0) {
        io.stderr.write(`qs run: shard ${shard?.index}/${shard?.total} has no attempt of the ${plan.attempts} in the plan\n`);
        return QsExit.passed;
      }
      return exitCode(results, loaded.code + outcome.usageErrors, args['strict-inconclusive']);
    } finally {
      for (const e of examples) e.remove();
      await ledger?.close();
      if (ledgerDir !== undefined) rmSync(ledgerDir, { recursive: true, force: true });
    }
  },
};

/** The config in force: --config FILE, none with --no-config, else the nearest quickloop.yaml. */
function projectConfig(argv: readonly string[], cwd: string): ProjectConfig | undefined {
  const i = argv.findIndex((a) => a === '--config' || a.startsWith('--config='));
  if (argv.includes('--no-config')) {
    if (i >= 0) throw new UsageError('qs run: --config and --no-config contradict each other: give one');
    return undefined;
  }
  const given = i < 0 ? undefined : argv[i]?.startsWith('--config=') ? argv[i]?.slice('--config='.length) : argv[i + 1];
  if (i >= 0 && (given === undefined || given === '')) throw new UsageError('qs run: --config needs a file');
  const path = given !== undefined ? resolve(cwd, given) : findProjectConfig(cwd);
  return path === undefined ? undefined : loadProjectConfig(path, cwd);
}

/** The config's `run:` settings as flags, each only where the command line does not give that flag itself. */
function configFlags(config: ProjectConfig | undefined, argv: readonly string[]): string[] {
  if (!config) return [];
  const typed = (flag: string, alias?: string) => argv.some((a) => [flag, alias].some((f) => f !== undefined && (a === `--${f}` || a.startsWith(`--${f}=`) || a === `--no-${f}`)));
  const out: string[] = [];
  for (const [key, value] of Object.entries(config.run)) {
    const flag = key.replace(/_/g, '-');
    if (typed(flag, flag === 'keep-sandbox' ? 'keep' : undefined)) continue;
    if (typeof value === 'boolean') {
      if (value) out.push(`--${flag}`);
    } else if (Array.isArray(value)) for (const v of value) out.push(`--${flag}=${String(v)}`);
    else out.push(`--${flag}=${String(value)}`);
  }
  return out;
}
