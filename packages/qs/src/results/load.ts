// Reading what a sweep saved: the attempts' streams under an --out folder, or a results.json.
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '@quickloop/cli-kit';
import { readEvents, type WireEvent } from '@quickloop/events';
import { readPlan } from '../sweep/plan.js';
import { foldResults, type AttemptStream, type Results } from './fold.js';

/** Every `SLUG/ATTEMPT/events.ndjson` under `dir`; a bad line stops it with `FILE:LINE: message`. */
export async function readAttempts(dir: string, shown = dir): Promise<AttemptStream[]> {
  const attempts: AttemptStream[] = [];
  for (const slug of readdirSync(dir).sort()) {
    const taskDir = join(dir, slug);
    if (!statSync(taskDir).isDirectory()) continue;
    for (const attempt of readdirSync(taskDir)) {
      if (!/^[1-9]\d*$/.test(attempt)) continue;
      const file = join(taskDir, attempt, 'events.ndjson');
      if (!existsSync(file)) continue;
      const events: WireEvent[] = [];
      for await (const { event } of readEvents(createReadStream(file), { source: join(shown, slug, attempt, 'events.ndjson') })) events.push(event);
      attempts.push({ slug, attempt: Number(attempt), events });
    }
  }
  return attempts;
}

export async function resultsFromDir(dir: string, version: string, shown = dir): Promise<Results> {
  if (!existsSync(dir)) throw new InputError(`${shown}: no such folder`);
  if (!statSync(dir).isDirectory()) throw new InputError(`${shown}: is a file, not the folder a qs run --out wrote`);
  const plan = readPlan(dir, shown);
  const attempts = await readAttempts(dir, shown);
  // A folder with a plan is a sweep's even with no run in it (a shard given no attempt, or stopped before any).
  if (attempts.length === 0 && plan === null) throw new InputError(`${shown}: no saved runs (expected SLUG/ATTEMPT/events.ndjson, as qs run --out writes)`);
  return foldResults(attempts, version, plan ?? undefined);
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
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new InputError(`${shown}: not JSON (${(error as Error).message})`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new InputError(`${shown}: not a results document (expected a JSON object)`);
  const d = doc as Record<string, unknown>;
  if (typeof d.schema_version !== 'string') throw new InputError(`${shown}: schema_version: missing (not a results.json?)`);
  if (d.schema_version.split('.')[0] !== '2') throw new InputError(`${shown}: schema_version: ${d.schema_version} is not a version 2 results document`);
  if (!Array.isArray(d.tasks)) throw new InputError(`${shown}: tasks: expected an array`);
  for (const [i, t] of d.tasks.entries()) {
    const task = t as Record<string, unknown> | null;
    if (typeof task !== 'object' || task === null) throw new InputError(`${shown}: tasks[${i}]: expected an object`);
    if (typeof task.task !== 'string') throw new InputError(`${shown}: tasks[${i}].task: expected a string`);
    for (const k of ['attempts', 'passes', 'evidential_runs'] as const) {
      if (!Number.isInteger(task[k]) || (task[k] as number) < 0) throw new InputError(`${shown}: tasks[${i}].${k}: expected a non-negative integer`);
    }
    if ((task.passes as number) > (task.evidential_runs as number) || (task.evidential_runs as number) > (task.attempts as number)) {
      throw new InputError(`${shown}: tasks[${i}]: passes <= evidential_runs <= attempts does not hold`);
    }
    if (task.models_reported !== undefined && !(Array.isArray(task.models_reported) && task.models_reported.every((m) => typeof m === 'string'))) {
      throw new InputError(`${shown}: tasks[${i}].models_reported: expected an array of strings`);
    }
  }
  return doc as Results;
}
