// Static shards and `qs merge`, through the real binary, real pipelines and the real (bwrap)
// sandbox: three shards merged are the unsharded sweep; a missing shard is not run, never passed;
// folders of other sweeps, a shard run twice and edited plans are refused; --shard auto reads each
// CI's variables; --durations balances the shares.
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QS, qsEnv, runQs } from './testing/qs-bin.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAP = ['--docs-map', `https://docs.greeter.test/=${join(ROOT, 'fixtures', 'docs-site')}`];
// Attempt-major over these three: quickstart#1, docs-gap#1, agent-only#1, quickstart#2, … so
// round-robin over 3 shards gives each shard both attempts of one task.
const TASKS = [join(ROOT, 'fixtures', 'examples', 'greeter.yaml'), join(ROOT, 'fixtures', 'pipeline', 'docs-gap.yaml'), join(ROOT, 'fixtures', 'pipeline', 'skipped.yaml')];
const SKIPPED = join(ROOT, 'fixtures', 'pipeline', 'skipped.yaml');

const env = qsEnv;

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'qs-shards-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const qs = (args: string[], extra: Record<string, string> = {}) => runQs(args, work, extra);

type Json = Record<string, unknown>;
const json = (file: string): Json => JSON.parse(readFileSync(file, 'utf8')) as Json;
const plan = (dir: string): Json => json(join(dir, 'plan.ndjson'));
const key = (a: { slug: string; attempt: number }): string => `${a.slug}#${a.attempt}`;

/** What must match between a merged sweep and the unsharded one: verdicts and counts, times and ids aside. */
function verdicts(results: Json): unknown {
  const tasks = results.tasks as Array<Json & { runs: Json[] }>;
  return {
    plan_sha256: results.plan_sha256,
    repeat: results.repeat,
    counts: results.counts,
    not_run: results.not_run,
    runs: (results.totals as Json).runs,
    tasks: tasks.map((t) => ({
      task: t.task,
      slug: t.slug,
      attempts: t.attempts,
      passes: t.passes,
      failures: t.failures,
      evidential_runs: t.evidential_runs,
      pass_rate: t.pass_rate,
      pass_rate_interval: t.pass_rate_interval,
      discarded: t.discarded,
      skipped: t.skipped,
      not_run: t.not_run,
      suspect_pages: t.suspect_pages,
      runs: t.runs.map((r) => [r.attempt, r.classification, r.label, r.passed, r.evidential, r.stop_reason, r.docs_pages_read, r.suspect_page, (r.success_check as Json | null)?.exit_code ?? null, r.stream]),
    })),
  };
}
const untimed = (xml: string): string => xml.replace(/ time="[0-9.]+"/g, '');

describe('qs run --shard and qs merge', () => {
  let full: string;
  let shards: string[];

  beforeAll(async () => {
    full = join(work, 'full');
    shards = [1, 2, 3].map((i) => join(work, `shard-${i}`));
    // The unsharded sweep and the three shards side by side (the shards as a CI matrix would run them).
    const runs = await Promise.all([
      qs(['run', ...TASKS, '--repeat', '2', '--workers', '2', '--out', full, '--junit', join(work, 'full.xml'), ...MAP]),
      ...shards.map((dir, i) => qs(['run', ...TASKS, '--repeat', '2', '--shard', `${i + 1}/3`, '--out', dir, ...MAP])),
    ]);
    expect(runs.map((r) => r.code), runs.map((r) => r.err).join('\n')).toEqual([1, 0, 1, 2]);
  }, 120_000);

  it('each shard folder starts with the plan: the same sweep, its own share, and together every attempt once', () => {
    const plans = shards.map(plan);
    const whole = plan(full);
    expect(whole).toMatchObject({ type: 'sweep.plan', stage: 'qs', attempts: 6, repeat: 2, agent: 'replay', model: null, share: { kind: 'all' } });
    for (const [i, p] of plans.entries()) {
      expect(p.plan_sha256).toBe(whole.plan_sha256);
      expect(p.share).toEqual({ kind: 'shard', index: i + 1, total: 3 });
    }
    const assigned = plans.map((p) => (p.assigned as Array<{ slug: string; attempt: number }>).map(key));
    expect(assigned).toEqual([
      ['greeter-quickstart#1', 'greeter-quickstart#2'],
      ['greeter-docs-gap#1', 'greeter-docs-gap#2'],
      ['greeter-agent-only#1', 'greeter-agent-only#2'],
    ]);
    // A shard's own results.json is complete for its share: nothing of its share missing.
    expect(json(join(shards[0] as string, 'results.json')).counts).toMatchObject({ passed: 2, not_run: 0 });
  });

  it('1/3 + 2/3 + 3/3 merged is the unsharded run: results.json verdicts and counts, JUnit, exit 1', async () => {
    const merged = join(work, 'merged');
    const r = await qs(['merge', ...shards, '--out', merged, '--junit', join(work, 'merged.xml'), '--summary', join(work, 'merged.md')]);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toBe('');
    const m = json(join(merged, 'results.json'));
    expect(verdicts(m)).toEqual(verdicts(json(join(full, 'results.json'))));
    expect(m.counts).toEqual({ passed: 2, docs_gap: 2, inconclusive: 0, skipped: 2, interrupted: 0, not_run: 0 });
    expect(untimed(readFileSync(join(work, 'merged.xml'), 'utf8'))).toBe(untimed(readFileSync(join(work, 'full.xml'), 'utf8')));
    expect(readFileSync(join(work, 'merged.md'), 'utf8')).toContain('6 runs of 3 tasks · 2 passed · 2 docs gap · 0 inconclusive · 2 skipped · backend bwrap');
    // The merged folder is one a run could have written: its streams byte for byte, `qs results` rebuilds it.
    expect(readFileSync(join(merged, 'greeter-docs-gap', '2', 'events.ndjson'), 'utf8')).toBe(readFileSync(join(shards[1] as string, 'greeter-docs-gap', '2', 'events.ndjson'), 'utf8'));
    expect(plan(merged)).toMatchObject({ plan_sha256: plan(full).plan_sha256, share: { kind: 'all' } });
    const rebuilt = spawnSync(process.execPath, [QS, 'results', merged], { env: env(), encoding: 'utf8' });
    expect(rebuilt.stdout).toBe(readFileSync(join(merged, 'results.json'), 'utf8'));
    // Order of the folders on the command line does not matter.
    const reversed = join(work, 'merged-reversed');
    expect((await qs(['merge', ...[...shards].reverse(), '--out', reversed, '-q'])).code).toBe(1);
    expect(verdicts(json(join(reversed, 'results.json')))).toEqual(verdicts(m));
  });

  it('a missing shard: its attempts are not run — counted, listed, a JUnit error, never a pass — and the exit is 2', async () => {
    const merged = join(work, 'missing');
    const r = await qs(['merge', shards[0] as string, shards[2] as string, '--out', merged, '--junit', join(work, 'missing.xml'), '--summary', join(work, 'missing.md')], { GITHUB_ACTIONS: 'true' });
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain('qs merge: 2 attempts of the plan not run (greeter-docs-gap#1, greeter-docs-gap#2): is a shard missing?');
    const m = json(join(merged, 'results.json'));
    expect(m.counts).toEqual({ passed: 2, docs_gap: 0, inconclusive: 0, skipped: 2, interrupted: 0, not_run: 2 });
    expect(m.not_run).toEqual([
      { task: 'greeter-docs-gap', slug: 'greeter-docs-gap', attempt: 1 },
      { task: 'greeter-docs-gap', slug: 'greeter-docs-gap', attempt: 2 },
    ]);
    const gap = (m.tasks as Json[]).find((t) => t.slug === 'greeter-docs-gap');
    expect(gap).toMatchObject({ task: 'greeter-docs-gap', attempts: 0, passes: 0, evidential_runs: 0, pass_rate: null, not_run: 2, runs: [] });
    const junit = readFileSync(join(work, 'missing.xml'), 'utf8');
    expect(junit).toContain('<testsuites name="quickloop" tests="6" failures="0" errors="2" skipped="2"');
    expect(junit.match(/<error type="not_run"/g)).toHaveLength(2);
    expect(readFileSync(join(work, 'missing.md'), 'utf8')).toMatch(/· 2 not run ·[\s\S]*## Not run[\s\S]*\*\*greeter-docs-gap\*\* attempt 2/);
    expect(r.err).toMatch(/^::warning .*title=quickloop not run::greeter-docs-gap: 2 attempts of the plan not run$/m);
    // Even with every shard that ran passing, the exit is not 0.
    const only = await qs(['merge', shards[0] as string, '--out', join(work, 'only-passes'), '-q']);
    expect(only.code).toBe(2);
  });

  it('a shard a signal stopped between attempts: its folder says so (stopped.ndjson), results.json is interrupted, and the merge exits 130, not 2', async () => {
    // As qs run leaves shard 2/3 when Ctrl-C comes before its first attempt: its plan, no attempt, the stop.
    const stopped = join(work, 'stopped-2');
    mkdirSync(stopped);
    copyFileSync(join(shards[1] as string, 'plan.ndjson'), join(stopped, 'plan.ndjson'));
    writeFileSync(join(stopped, 'stopped.ndjson'), `${JSON.stringify({ v: 1, type: 'sweep.stopped', ts: '2026-01-01T00:00:05.000Z', run_id: 'sweep', stage: 'qs', signal: 'SIGINT', recorded: 0, assigned: 2 })}\n`);
    const alone = spawnSync(process.execPath, [QS, 'results', stopped], { env: env(), encoding: 'utf8' });
    expect(alone.status, alone.stderr).toBe(0);
    expect(JSON.parse(alone.stdout)).toMatchObject({ interrupted: true, counts: { not_run: 2 } });
    const merged = join(work, 'merged-stopped');
    const r = await qs(['merge', shards[0] as string, stopped, shards[2] as string, '--out', merged]);
    expect(r.code, r.err).toBe(130);
    expect(r.err).toContain('qs merge: a shard was interrupted');
    expect(json(join(merged, 'results.json'))).toMatchObject({ interrupted: true, counts: { passed: 2, skipped: 2, not_run: 2 } });
    expect(json(join(merged, 'stopped.ndjson'))).toMatchObject({ type: 'sweep.stopped', signal: 'SIGINT', recorded: 4, assigned: 6 });
    const rebuilt = spawnSync(process.execPath, [QS, 'results', merged], { env: env(), encoding: 'utf8' });
    expect(rebuilt.stdout).toBe(readFileSync(join(merged, 'results.json'), 'utf8'));
    // A stop record that is not one is refused, naming the file.
    writeFileSync(join(stopped, 'stopped.ndjson'), '{"v":1,"type":"sweep.plan"}\n');
    const bad = spawnSync(process.execPath, [QS, 'results', stopped], { env: env(), encoding: 'utf8' });
    expect(bad.status).toBe(3);
    expect(bad.stderr).toMatch(/stopped-2\/stopped\.ndjson:1: /);
  });

  it('refuses folders of different sweeps in one line naming both, and a shard run twice', async () => {
    const other = join(work, 'other');
    expect((await qs(['run', SKIPPED, '--out', other, '-q', ...MAP])).code).toBe(2);
    const different = await qs(['merge', shards[0] as string, other, '--out', join(work, 'refused-1')]);
    expect(different.code).toBe(3);
    const message = different.err.trim().split('\n');
    expect(message).toHaveLength(1);
    expect(message[0]).toMatch(new RegExp(`^qs merge: ${shards[0]} \\(plan [0-9a-f]{12}\\) and ${other} \\(plan [0-9a-f]{12}\\) are not shards of one sweep: repeat 2 vs 1$`));
    expect(existsSync(join(work, 'refused-1'))).toBe(false);

    const again = join(work, 'shard-1-again');
    cpSync(shards[0] as string, again, { recursive: true });
    const twice = await qs(['merge', shards[0] as string, again, shards[1] as string, '--out', join(work, 'refused-2')]);
    expect(twice.code).toBe(3);
    expect(twice.err).toContain(`qs merge: ${shards[0]} and ${again} are both shard 1/3 (a shard run twice? merge one of them)`);
    // A merged folder beside one of its shards holds the same attempts twice.
    const merged = join(work, 'merged-whole');
    expect((await qs(['merge', ...shards, '--out', merged, '-q'])).code).toBe(1);
    const overlap = await qs(['merge', merged, shards[0] as string, '--out', join(work, 'refused-3')]);
    expect(overlap.code).toBe(3);
    expect(overlap.err).toMatch(/qs merge: .*merged-whole\/greeter-quickstart\/1\/events\.ndjson and .*shard-1\/greeter-quickstart\/1\/events\.ndjson are the same attempt greeter-quickstart#1/);
  });

  it('refuses an edited plan, an attempt outside the plan, a folder with no plan, and bad arguments', async () => {
    const edited = join(work, 'edited');
    cpSync(shards[0] as string, edited, { recursive: true });
    const p = plan(edited);
    writeFileSync(join(edited, 'plan.ndjson'), `${JSON.stringify({ ...p, repeat: 1, attempts: 3 })}\n`);
    let r = await qs(['merge', edited, shards[1] as string, '--out', join(work, 'x1')]);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/edited\/plan\.ndjson:1: plan_sha256 is not the sha256 of this plan/);

    const extra = join(work, 'extra');
    cpSync(shards[0] as string, extra, { recursive: true });
    mkdirSync(join(extra, 'greeter-quickstart', '9'));
    cpSync(join(extra, 'greeter-quickstart', '1', 'events.ndjson'), join(extra, 'greeter-quickstart', '9', 'events.ndjson'));
    r = await qs(['merge', extra, '--out', join(work, 'x2')]);
    expect(r.code).toBe(3);
    expect(r.err).toContain('greeter-quickstart/9/events.ndjson: greeter-quickstart#9 is not an attempt of the plan (3 tasks × repeat 2)');

    const bare = join(work, 'bare');
    cpSync(shards[0] as string, bare, { recursive: true });
    rmSync(join(bare, 'plan.ndjson'));
    r = await qs(['merge', bare, '--out', join(work, 'x3')]);
    expect(r.code).toBe(3);
    expect(r.err).toContain(`qs merge: ${bare}: no plan.ndjson`);

    const garbage = join(work, 'garbage');
    cpSync(shards[0] as string, garbage, { recursive: true });
    writeFileSync(join(garbage, 'plan.ndjson'), '{"v":1,"type":"sweep.plan"}\n');
    r = await qs(['merge', garbage, '--out', join(work, 'x4')]);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/garbage\/plan\.ndjson:1: /);

    for (const [args, message] of [
      [['merge', shards[0] as string], /--out DIR is required/],
      [['merge', '--out', join(work, 'x5')], /name the folders/],
      [['merge', shards[0] as string, '--out', join(shards[0] as string, 'inner')], /is inside .*shard-1, one of the folders merged/],
      [['merge', shards[0] as string, '--out', shards[1] as string], /the folder is not empty/],
      [['merge', join(work, 'nope'), '--out', join(work, 'x6')], /nope: no such folder/],
      [['merge', shards[0] as string, shards[0] as string, '--out', join(work, 'x7')], /is named twice/],
    ] as const) {
      r = await qs([...args]);
      expect(r.code, args.join(' ')).toBe(3);
      expect(r.err).toMatch(message);
    }
    expect(existsSync(join(work, 'x5'))).toBe(false);
  });
});

describe('qs run --shard auto and --durations', () => {
  it.each([
    ['a Kubernetes Indexed Job', ['auto/3'], { JOB_COMPLETION_INDEX: '1' }, 2, 'JOB_COMPLETION_INDEX'],
    ['a Kubernetes Indexed Job, total in QS_SHARD_TOTAL', ['auto'], { JOB_COMPLETION_INDEX: '0', QS_SHARD_TOTAL: '3' }, 1, 'JOB_COMPLETION_INDEX'],
    ['GitLab parallel', ['auto'], { CI_NODE_INDEX: '3', CI_NODE_TOTAL: '3' }, 3, 'CI_NODE_INDEX'],
    ['an AWS Batch array job', ['auto/3'], { AWS_BATCH_JOB_ARRAY_INDEX: '2' }, 3, 'AWS_BATCH_JOB_ARRAY_INDEX'],
  ])('reads %s', async (_name, spec, vars, index, from) => {
    const out = join(work, `auto-${from}-${index}-${spec[0]?.replace('/', '-')}`);
    const r = await qs(['run', SKIPPED, '--repeat', '3', '--shard', spec[0] as string, '--out', out, ...MAP], vars);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain(`qs run: shard ${index}/3 (from ${from}): 1 of 3 attempts`);
    expect(plan(out)).toMatchObject({ share: { kind: 'shard', index, total: 3 }, assigned: [{ slug: 'greeter-agent-only', attempt: index }] });
  });

  it('a GitHub Actions matrix passes the index itself, and auto there says how', async () => {
    const r = await qs(['run', SKIPPED, '--shard', 'auto', ...MAP], { GITHUB_ACTIONS: 'true' });
    expect(r.code).toBe(3);
    expect(r.err).toContain('--shard ${{ matrix.shard }}/${{ strategy.job-total }}');
    expect(r.out).toBe('');
  });

  it.each([
    [['--shard', '0/3'], {}, /--shard 0\/3: the index must be from 1 to 3/],
    [['--shard', '2'], {}, /give the total too/],
    [['--shard', 'auto/3'], { CI_NODE_INDEX: '1', CI_NODE_TOTAL: '2' }, /CI_NODE_TOTAL=2 says 2 shards, the spec says 3/],
    [['--shard', 'auto/3'], { JOB_COMPLETION_INDEX: '1', CI_NODE_INDEX: '1' }, /JOB_COMPLETION_INDEX and CI_NODE_INDEX are both set/],
    [['--shard', 'auto/3'], { JOB_COMPLETION_INDEX: 'one' }, /JOB_COMPLETION_INDEX="one" is not a whole number/],
    [['--durations', '@RESULTS'], {}, /--durations balances shards; give --shard with it/],
    [['--shard', '1/2', '--durations', '/nonexistent-qs/results.json'], {}, /nonexistent-qs\/results\.json: no such file or folder/],
  ])('refuses %j with exit 3 before running anything', async (flags, vars, message) => {
    const out = join(work, 'refused-run');
    const results = join(work, 'some-results.json');
    writeFileSync(results, JSON.stringify({ schema_version: '2.0', tasks: [] }));
    const r = await qs(['run', SKIPPED, ...flags.map((f) => (f === '@RESULTS' ? results : f)), '--out', out, ...MAP], vars as Record<string, string>);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(message);
    expect(r.out).toBe('');
    expect(existsSync(out)).toBe(false);
  });

  it('--durations balances by expected time (longest first onto the least-loaded shard); a shard with nothing to do exits 0', async () => {
    // Three agent-only tasks (cheap to run): one expected to take 10 s, two 1 s.
    const files = ['slow', 'quick-a', 'quick-b'].map((name) => {
      const f = join(work, `${name}.yaml`);
      writeFileSync(f, readFileSync(SKIPPED, 'utf8').replace('name: greeter-agent-only', `name: ${name}`));
      return f;
    });
    const durations = join(work, 'durations.json');
    const task = (name: string, seconds: number): Json => ({ task: name, slug: name, attempts: 1, passes: 0, evidential_runs: 0, runs: [{ duration_seconds: seconds }] });
    writeFileSync(durations, JSON.stringify({ schema_version: '2.0', tasks: [task('slow', 10), task('quick-a', 1), task('quick-b', 1)] }));
    const shares = await Promise.all(
      [1, 2].map(async (i) => {
        const out = join(work, `balanced-${i}`);
        const r = await qs(['run', ...files, '--repeat', '2', '--shard', `${i}/2`, '--durations', durations, '--out', out, '-q', ...MAP]);
        expect(r.code, r.err).toBe(2);
        return (plan(out).assigned as Array<{ slug: string; attempt: number }>).map(key);
      }),
    );
    // Plan order slow#1 quick-a#1 quick-b#1 slow#2 …: round-robin would give shard 1 slow#1, quick-b#1, quick-a#2.
    expect(shares).toEqual([
      ['slow#1', 'quick-a#1', 'quick-a#2'],
      ['quick-b#1', 'slow#2', 'quick-b#2'],
    ]);
    const merged = join(work, 'balanced-merged');
    expect((await qs(['merge', join(work, 'balanced-1'), join(work, 'balanced-2'), '--out', merged, '-q'])).code).toBe(2);
    expect(json(join(merged, 'results.json')).counts).toMatchObject({ skipped: 6, not_run: 0 });

    const empty = join(work, 'empty-shard');
    const r = await qs(['run', SKIPPED, '--shard', '2/2', '--out', empty, ...MAP]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('qs run: shard 2/2 has no attempt of the 1 in the plan');
    expect(json(join(empty, 'results.json'))).toMatchObject({ counts: { passed: 0, not_run: 0 }, tasks: [] });
  });
});
