// `qs merge DIR... --out DIR`: the --out folders of one sweep's shards folded into one folder, one
// results.json, JUnit and summary, as if one `qs run` had written them.
import { copyFileSync, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { InputError, logLevel, makeDirs, parseArgs, QsExit, terminalSafe, UsageError } from '@quickloop/cli-kit';
import type { Command } from '../command.js';
import { serialiseResults, type AttemptStream } from '../results/fold.js';
import { readAttempts, resultsFromDir } from '../results/load.js';
import { writeQuickstartedTrace } from '../results/trace-export.js';
import { checkReportPaths, exitCode, publishResults } from '../results/publish.js';
import { rateText } from '../results/reports.js';
import { PLAN_FILE, planAttempts, planEvent, readPlan, readStop, STOP_FILE, stopEvent, type SweepPlan } from '../sweep/plan.js';
import { VERSION } from '../version.js';

const inside = (child: string, parent: string): boolean => {
  const r = relative(parent, child);
  return r === '' || (!r.startsWith(`..${sep}`) && r !== '..' && !r.startsWith(sep));
};

/** The first thing two plans disagree on, for a person to read. */
function planDifference(a: SweepPlan, b: SweepPlan): string {
  if (a.repeat !== b.repeat) return `repeat ${a.repeat} vs ${b.repeat}`;
  if (a.agent !== b.agent) return `agent ${a.agent} vs ${b.agent}`;
  if (a.model !== b.model) return `model ${String(a.model)} vs ${String(b.model)}`;
  if (JSON.stringify(a.versions) !== JSON.stringify(b.versions)) return `versions ${JSON.stringify(a.versions)} vs ${JSON.stringify(b.versions)}`;
  const names = (p: SweepPlan): string => p.tasks.map((t) => t.slug).join(',');
  if (names(a) !== names(b)) return `tasks ${names(a) || 'none'} vs ${names(b) || 'none'}`;
  const changed = a.tasks.find((t, i) => t.sha256 !== b.tasks[i]?.sha256 || t.config_sha256 !== b.tasks[i]?.config_sha256);
  return changed ? `task ${changed.slug}'s file or config differs` : 'their content differs';
}

export const merge: Command = {
  name: 'merge',
  summary: 'Fold the --out folders of one sweep\'s shards into one folder, results.json, JUnit and summary',
  async run(argv, io) {
    const args = parseArgs(
      argv,
      { name: 'qs merge', version: VERSION, usage: '$0 DIR... --out DIR [--junit FILE] [--summary FILE] [--strict-inconclusive]', out: io.stdout, positionals: 10000 },
      (y) =>
        y
          .option('out', { type: 'string', describe: 'The merged folder (new or empty): plan.ndjson, every attempt\'s stream, results.json' })
          .option('junit', { type: 'string', describe: 'Write JUnit XML here' })
          .option('summary', { type: 'string', describe: 'Write a Markdown summary here' })
          .option('strict-inconclusive', { type: 'boolean', default: false, describe: 'An inconclusive run makes the exit code 2 even when others passed' }),
    );
    const level = logLevel(args);
    const dirs = args._.map(String);
    if (dirs.length === 0) throw new UsageError('qs merge: name the folders qs run --out wrote (one per shard)');
    if (args.out === undefined || String(args.out) === '') throw new UsageError('qs merge: --out DIR is required (a new or empty folder)');
    const out = resolve(io.cwd, String(args.out));
    if (existsSync(out)) {
      if (!statSync(out).isDirectory()) throw new UsageError(`qs merge: --out ${String(args.out)}: is a file, not a folder`);
      if (readdirSync(out).length > 0) throw new UsageError(`qs merge: --out ${String(args.out)}: the folder is not empty (name a new one)`);
    }
    const reportPaths = { junit: args.junit === undefined ? undefined : String(args.junit), summary: args.summary === undefined ? undefined : String(args.summary) };
    checkReportPaths(reportPaths, io.cwd, 'qs merge');

    const folders: { shown: string; path: string; plan: SweepPlan; stop: { signal: string } | null }[] = [];
    for (const shown of dirs) {
      const path = resolve(io.cwd, shown);
      if (!existsSync(path)) throw new InputError(`qs merge: ${shown}: no such folder`);
      if (!statSync(path).isDirectory()) throw new InputError(`qs merge: ${shown}: is a file, not a folder qs run --out wrote`);
      if (inside(out, path)) throw new UsageError(`qs merge: --out ${String(args.out)} is inside ${shown}, one of the folders merged`);
      if (folders.some((f) => f.path === path)) throw new UsageError(`qs merge: ${shown} is named twice`);
      const plan = readPlan(path, shown);
      if (plan === null) throw new InputError(`qs merge: ${shown}: no ${PLAN_FILE} (not a folder qs run --out wrote, or one from before plans)`);
      folders.push({ shown, path, plan, stop: readStop(path, shown) });
    }
    const head = folders[0] as (typeof folders)[number];
    for (const f of folders.slice(1)) {
      if (f.plan.plan_sha256 !== head.plan.plan_sha256) {
        throw new InputError(`qs merge: ${head.shown} (plan ${head.plan.plan_sha256.slice(0, 12)}) and ${f.shown} (plan ${f.plan.plan_sha256.slice(0, 12)}) are not shards of one sweep: ${planDifference(head.plan, f.plan)}`);
      }
    }
    // Refused, not counted once: two copies of an attempt may disagree, and picking one would hide that a shard ran twice.
    for (const [i, a] of folders.entries()) {
      for (const b of folders.slice(i + 1)) {
        if (a.plan.share.kind === 'shard' && b.plan.share.kind === 'shard' && a.plan.share.index === b.plan.share.index && a.plan.share.total === b.plan.share.total) {
          throw new InputError(`qs merge: ${a.shown} and ${b.shown} are both shard ${a.plan.share.index}/${a.plan.share.total} (a shard run twice? merge one of them)`);
        }
        const mine = new Set(a.plan.assigned.map((x) => `${x.slug}#${x.attempt}`));
        const both = b.plan.assigned.find((x) => mine.has(`${x.slug}#${x.attempt}`));
        if (both && a.plan.share.kind === 'shard' && b.plan.share.kind === 'shard') {
          throw new InputError(`qs merge: ${a.shown} and ${b.shown} were both assigned ${both.slug}#${both.attempt} (shards split with different --shard totals or --durations files)`);
        }
      }
    }
    const planned = new Set(planAttempts(head.plan.tasks, head.plan.repeat).map((x) => `${x.slug}#${x.attempt}`));
    const holder = new Map<string, string>();
    const copies: { from: string; slug: string; attempt: number; events: AttemptStream['events'] }[] = [];
    for (const f of folders) {
      for (const a of await readAttempts(f.path, f.shown)) {
        const k = `${a.slug}#${a.attempt}`;
        const file = join(f.shown, a.slug, String(a.attempt), 'events.ndjson');
        if (!planned.has(k)) throw new InputError(`qs merge: ${file}: ${k} is not an attempt of the plan (${head.plan.tasks.length} tasks × repeat ${head.plan.repeat})`);
        const other = holder.get(k);
        if (other !== undefined) throw new InputError(`qs merge: ${other} and ${file} are the same attempt ${k} (a shard run twice? merge one of them)`);
        holder.set(k, file);
        copies.push({ from: join(f.path, a.slug, String(a.attempt), 'events.ndjson'), slug: a.slug, attempt: a.attempt, events: a.events });
      }
    }

    makeDirs(out);
    const whole: SweepPlan = { ...head.plan, share: { kind: 'all' }, assigned: planAttempts(head.plan.tasks, head.plan.repeat) };
    writeFileSync(join(out, PLAN_FILE), `${JSON.stringify(planEvent(whole, io.now().toISOString()))}\n`);
    // A shard a signal stopped leaves the merged sweep stopped as well: its not-run attempts are not a missing shard.
    const stop = folders.find((f) => f.stop !== null)?.stop;
    if (stop) writeFileSync(join(out, STOP_FILE), `${JSON.stringify(stopEvent(stop.signal, copies.length, whole.assigned.length, io.now().toISOString()))}\n`);
    // Byte for byte: the merged folder is one a run could have written, and `qs results` rebuilds it.
    for (const c of copies) {
      makeDirs(join(out, c.slug, String(c.attempt)));
      copyFileSync(c.from, join(out, c.slug, String(c.attempt), 'events.ndjson'));
      writeQuickstartedTrace(join(out, c.slug, String(c.attempt)), c, { agent: head.plan.agent });
    }
    const results = await resultsFromDir(out, VERSION, String(args.out));
    writeFileSync(join(out, 'results.json'), serialiseResults(results));
    publishResults(results, reportPaths, io, 'qs merge');
    if (level !== 'quiet') {
      for (const t of results.tasks) io.stderr.write(`${terminalSafe(t.task)}: ${rateText(t)}${t.flaky ? ' FLAKY' : ''}${t.not_run && t.attempts > 0 ? ` · ${t.not_run} not run` : ''}\n`);
      io.stderr.write(`results: ${join(out, 'results.json')} (${copies.length} of ${head.plan.attempts} attempts from ${folders.length} folder${folders.length === 1 ? '' : 's'})\n`);
    }
    // A shard the sweep's --max-spend stopped ran no more attempts: qs run exited 130 for it, so does its merge.
    const capped = results.tasks.flatMap((t) => t.runs).filter((r) => r.stop_reason === 'spend_cap').length;
    if (results.not_run.length > 0) {
      const shown = results.not_run.slice(0, 5).map((n) => `${n.slug}#${n.attempt}`);
      io.stderr.write(`qs merge: ${results.not_run.length} attempt${results.not_run.length === 1 ? '' : 's'} of the plan not run (${shown.join(', ')}${results.not_run.length > 5 ? ', …' : ''}): ${capped > 0 ? 'the spend cap stopped the sweep, or a shard is missing' : 'is a shard missing?'}\n`);
    }
    if (results.interrupted) {
      io.stderr.write('qs merge: a shard was interrupted\n');
      return QsExit.interrupted;
    }
    if (capped > 0) {
      io.stderr.write(`qs merge: a shard was stopped by the spend cap (${capped} attempt${capped === 1 ? '' : 's'})\n`);
      return QsExit.interrupted;
    }
    return exitCode(results, 0, args['strict-inconclusive']);
  },
};
