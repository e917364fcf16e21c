// Reading what a sweep saved: the attempts' streams under an --out folder, or a results.json.
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '@quickloop/cli-kit';
import { readEvents, type WireEvent } from '@quickloop/events';
import { PLAN_FILE, readPlan, readStop } from '../sweep/plan.js';
import { foldResults, type AttemptStream, type Results } from './fold.js';

/** Where JSON.parse gave up on `text`: the offset of the first character that cannot be JSON there (-1: none found). */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i += 1;
  };
  const fail = (): never => {
    throw i;
  };
  const literal = (word: string): void => {
    for (const ch of word) {
      if (text[i] !== ch) fail();
      i += 1;
    }
  };
  const string = (): void => {
    i += 1;
    while (text[i] !== '"') {
      if (i >= text.length || (text.charCodeAt(i) as number) < 0x20) fail();
      if (text[i] === '\\') {
        i += 1;
        if (text[i] === 'u') {
          for (let k = 1; k <= 4; k += 1) if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) ((i += k), fail());
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? 'x')) fail();
      }
      i += 1;
    }
    i += 1;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i += 1;
      ws();
      if (text[i] === '}') return void (i += 1);
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ':') fail();
        i += 1;
        value();
        ws();
        if (text[i] === ',') i += 1;
        else if (text[i] === '}') return void (i += 1);
        else fail();
      }
    } else if (c === '[') {
      i += 1;
      ws();
      if (text[i] === ']') return void (i += 1);
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i += 1;
        else if (text[i] === ']') return void (i += 1);
        else fail();
      }
    } else if (c === '"') string();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else {
      const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
      if (m === null || m[0] === '' || m[0] === '-') fail();
      i += (m as RegExpExecArray)[0].length;
    }
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
  } catch (at) {
    // Nesting too deep for this scanner's stack: no position, rather than a crash.
    return typeof at === 'number' ? Math.min(at, text.length) : -1;
  }
  return -1;
}

/** One saved stream's events in order; a bad line stops it with `SHOWN:LINE: message`. */
export async function readStreamFile(file: string, shown: string): Promise<WireEvent[]> {
  if (!statSync(file).isFile()) throw new InputError(`${shown}: is not a file`);
  const events: WireEvent[] = [];
  for await (const { event } of readEvents(createReadStream(file), { source: shown })) events.push(event);
  return events;
}

/** Every `SLUG/ATTEMPT/events.ndjson` under `dir`; a bad line stops it with `FILE:LINE: message`. */
export async function readAttempts(dir: string, shown = dir): Promise<AttemptStream[]> {
  const attempts: AttemptStream[] = [];
  for (const slug of readdirSync(dir).sort()) {
    const taskDir = join(dir, slug);
    // A dangling symlink (an artifact copied in part) holds no run; it is not a reason to stop.
    if (!(statSync(taskDir, { throwIfNoEntry: false })?.isDirectory() ?? false)) continue;
    for (const attempt of readdirSync(taskDir)) {
      const file = join(taskDir, attempt, 'events.ndjson');
      if (!/^[1-9]\d*$/.test(attempt)) {
        // A saved run under another name (`01`, `2.bak`) would silently leave the pass rate: refused.
        if (existsSync(file)) throw new InputError(`${join(shown, slug, attempt, 'events.ndjson')}: not in an attempt folder (they are numbered 1, 2, …): rename the folder, or move it out of ${shown}`);
        continue;
      }
      if (!existsSync(file)) continue;
      attempts.push({ slug, attempt: Number(attempt), events: await readStreamFile(file, join(shown, slug, attempt, 'events.ndjson')) });
    }
  }
  return attempts;
}

/**
 * The folder's results. `attempts` are its streams when the caller has read them already (qs report
 * keeps them for the transcripts); every reader of a folder folds it here, with the same refusals.
 */
export async function resultsFromDir(dir: string, version: string, shown = dir, read?: AttemptStream[]): Promise<Results> {
  if (!existsSync(dir)) throw new InputError(`${shown}: no such folder`);
  if (!statSync(dir).isDirectory()) throw new InputError(`${shown}: is a file, not the folder a qs run --out wrote`);
  const plan = readPlan(dir, shown);
  const attempts = read ?? (await readAttempts(dir, shown));
  // One folder is one task's runs: a stream of another task copied in would be counted as this one's.
  const tasks = new Map<string, { name: string; where: string }>();
  /** Each run's stream, by task folder and run id: a run saved twice would count twice in its pass rate. */
  const holders = new Map<string, string>();
  const assigned = plan === null ? null : new Set(plan.assigned.map((a) => `${a.slug}#${a.attempt}`));
  for (const a of attempts) {
    const where = join(shown, a.slug, String(a.attempt), 'events.ndjson');
    if (plan !== null && assigned !== null && !assigned.has(`${a.slug}#${a.attempt}`)) {
      const share = plan.share.kind === 'shard' ? `shard ${plan.share.index}/${plan.share.total}` : plan.share.kind === 'queue' ? 'the fleet' : 'the whole sweep';
      throw new InputError(`${where}: ${a.slug}#${a.attempt} is not an attempt ${join(shown, PLAN_FILE)} gives this folder (${share}: ${plan.assigned.length} of ${plan.attempts} attempts): a stream copied in would be counted as this sweep's`);
    }
    // qs run gives each attempt a run id of its own; streams joined into one file would be folded as one attempt, the first verdict winning.
    const runIds = [...new Set(a.events.map((e) => e.run_id))];
    if (runIds.length > 1) throw new InputError(`${where}: holds ${runIds.length} runs (${runIds.slice(0, 3).join(', ')}${runIds.length > 3 ? ', …' : ''}): an attempt's stream is one run's (streams joined into one file?)`);
    const runId = runIds[0];
    if (runId !== undefined) {
      const key = `${a.slug}\0${runId}`;
      const other = holders.get(key);
      if (other !== undefined) throw new InputError(`${where}: run ${runId} is also ${other}'s: one run counts once (a copied attempt folder?)`);
      holders.set(key, where);
    }
    const loaded = a.events.find((e) => e.type === 'task.loaded') as { task?: { name?: unknown } } | undefined;
    const name = loaded?.task?.name;
    if (typeof name !== 'string') continue;
    const first = tasks.get(a.slug);
    if (first === undefined) tasks.set(a.slug, { name, where });
    else if (first.name !== name) throw new InputError(`${where}: a run of task ${JSON.stringify(name)}, but ${first.where} is of ${JSON.stringify(first.name)}: one folder holds one task's runs`);
  }
  // A folder with a plan is a sweep's even with no run in it (a shard given no attempt, or stopped before any).
  if (attempts.length === 0 && plan === null) throw new InputError(`${shown}: no saved runs (expected SLUG/ATTEMPT/events.ndjson, as qs run --out writes)`);
  return foldResults(attempts, version, plan ?? undefined, readStop(dir, shown));
}

/** More runs of one task than any sweep makes: a count above it is a broken document, not a sweep. */
export const MAX_RUNS = 1_000_000;
/** A results.json larger than this is refused unread (a million runs take about 1 GB less). */
export const MAX_RESULTS_BYTES = 256 * 1024 * 1024;

const isCounts = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((n) => Number.isInteger(n) && (n as number) >= 0);

/** The fields of a task that diff, show and report read besides its counts: wrong types are refused, never read as none. */
function checkTaskFields(task: Record<string, unknown>, at: string): void {
  const optional = (k: string, ok: (v: unknown) => boolean, what: string): void => {
    if (task[k] !== undefined && task[k] !== null && !ok(task[k])) throw new InputError(`${at}.${k}: expected ${what}`);
  };
  optional('discarded', isCounts, 'an object of counts ({"classification": n})');
  optional('suspect_pages', isCounts, 'an object of counts ({"url": n})');
  optional('skipped', (v) => Number.isInteger(v) && (v as number) >= 0, 'a non-negative integer');
  if (task.runs === undefined || task.runs === null) return;
  if (!Array.isArray(task.runs)) throw new InputError(`${at}.runs: expected an array`);
  for (const [j, r] of task.runs.entries()) {
    if (typeof r !== 'object' || r === null || Array.isArray(r)) throw new InputError(`${at}.runs[${j}]: expected an object`);
    const run = r as Record<string, unknown>;
    if (run.classification !== undefined && typeof run.classification !== 'string') throw new InputError(`${at}.runs[${j}].classification: expected a string`);
    if (run.suspect_page !== undefined && run.suspect_page !== null && typeof run.suspect_page !== 'string') throw new InputError(`${at}.runs[${j}].suspect_page: expected a string or null`);
  }
}

/**
 * A results document from a results.json or an --out folder. Only schema major 2 is read (ours and
 * quickstarted's); anything else is refused with the field named.
 */
export async function loadResults(path: string, shown: string, version: string): Promise<Results> {
  if (!existsSync(path)) throw new InputError(`${shown}: no such file or folder`);
  if (statSync(path).isDirectory()) {
    // A folder's own results.json is what the sweep wrote; its streams are the fallback.
    const file = join(path, 'results.json');
    return existsSync(file) ? loadResults(file, join(shown, 'results.json'), version) : resultsFromDir(path, version, shown);
  }
  let doc: unknown;
  const size = statSync(path).size;
  if (size > MAX_RESULTS_BYTES) throw new InputError(`${shown}: ${Math.round(size / 2 ** 20)} MiB is more than a results document holds (at most ${MAX_RESULTS_BYTES / 2 ** 20} MiB)`);
  // A byte order mark (PowerShell's Out-File, Notepad) is no part of the document.
  const source = readFileSync(path, 'utf8').replace(/^\ufeff/, '');
  try {
    doc = JSON.parse(source);
  } catch (error) {
    // V8 names a character offset only for some errors; people and editors want the line and column.
    // Its quote of the text around the error (`..."rrupted": False,\n"... is not valid JSON`) may span lines: dropped.
    const message = (error as Error).message
      .replace(/ in JSON at position \d+.*$/s, '')
      .replace(/, (?:\.\.\.)?"[\s\S]*"(?:\.\.\.)? is not valid JSON$/, '')
      .replace(/\s+/g, ' ');
    const at = jsonErrorOffset(source);
    if (at < 0) throw new InputError(`${shown}: not JSON (${message})`);
    const before = source.slice(0, at).split('\n');
    throw new InputError(`${shown}:${before.length}:${(before.at(-1) as string).length + 1}: not JSON (${message})`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new InputError(`${shown}: not a results document (expected a JSON object)`);
  const d = doc as Record<string, unknown>;
  if (typeof d.schema_version === 'number') throw new InputError(`${shown}: schema_version: expected a string ("2.0"), not the number ${d.schema_version}`);
  if (typeof d.schema_version !== 'string') throw new InputError(`${shown}: schema_version: missing (not a results.json?)`);
  if (!/^2(\.\d+)*$/.test(d.schema_version)) throw new InputError(`${shown}: schema_version: ${d.schema_version} is not a version 2 results document`);
  if (!Array.isArray(d.tasks)) throw new InputError(`${shown}: tasks: expected an array`);
  if (d.totals !== undefined && d.totals !== null) {
    const totals = d.totals as Record<string, unknown>;
    if (typeof totals !== 'object' || Array.isArray(totals)) throw new InputError(`${shown}: totals: expected an object`);
    const cost = totals.estimated_cost_usd;
    if (cost !== undefined && cost !== null && !(typeof cost === 'number' && Number.isFinite(cost))) throw new InputError(`${shown}: totals.estimated_cost_usd: expected a number or null`);
  }
  for (const [i, t] of d.tasks.entries()) {
    const task = t as Record<string, unknown> | null;
    if (typeof task !== 'object' || task === null) throw new InputError(`${shown}: tasks[${i}]: expected an object`);
    if (typeof task.task !== 'string') throw new InputError(`${shown}: tasks[${i}].task: expected a string`);
    for (const k of ['attempts', 'passes', 'evidential_runs'] as const) {
      // The exact test's log-factorial table and its sum over tables grow with the run counts.
      if (!Number.isInteger(task[k]) || (task[k] as number) < 0 || (task[k] as number) > MAX_RUNS) throw new InputError(`${shown}: tasks[${i}].${k}: expected a non-negative integer (at most ${MAX_RUNS})`);
    }
    if (task.agent !== undefined && task.agent !== null && typeof task.agent !== 'string') throw new InputError(`${shown}: tasks[${i}].agent: expected a string or null`);
    if ((task.passes as number) > (task.evidential_runs as number) || (task.evidential_runs as number) > (task.attempts as number)) {
      throw new InputError(`${shown}: tasks[${i}]: passes <= evidential_runs <= attempts does not hold`);
    }
    if (task.agents !== undefined && !(Array.isArray(task.agents) && task.agents.every((m) => typeof m === 'string'))) {
      throw new InputError(`${shown}: tasks[${i}].agents: expected an array of strings`);
    }
    if (task.models_reported !== undefined && !(Array.isArray(task.models_reported) && task.models_reported.every((m) => typeof m === 'string'))) {
      throw new InputError(`${shown}: tasks[${i}].models_reported: expected an array of strings`);
    }
    checkTaskFields(task, `${shown}: tasks[${i}]`);
  }
  return doc as Results;
}
