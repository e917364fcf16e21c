// The plan shards, the fleet and qs merge share: its identity, the shares, and --shard's specs.
import { describe, expect, it } from 'vitest';
import { canonicalJson, durationsFromResults, parseShard, planAttempts, planSha256, shardAttempts, spendShare, sweepPlan, type AttemptRef, type PlanInput } from './plan.js';

const sha = (c: string): string => c.repeat(64);
const input = (over: Partial<PlanInput> = {}): PlanInput => ({
  tasks: [
    { name: 'a', slug: 'a', source: 'tasks/a.yaml', sha256: sha('1'), config_sha256: null },
    { name: 'b', slug: 'b', source: 'tasks/b.yaml', sha256: sha('2'), config_sha256: sha('3') },
  ],
  repeat: 3,
  agent: 'replay',
  model: null,
  versions: { qs: '0.1.0' },
  ...over,
});
const key = (a: AttemptRef): string => `${a.slug}#${a.attempt}`;

describe('the plan', () => {
  it('has one identity whatever order its keys were built in, and the source path is not part of it', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: null }] })).toBe('{"a":[{"c":null,"d":2}],"b":1}');
    const moved = input({ tasks: input().tasks.map((t) => ({ ...t, source: `/elsewhere/${t.source}` })) });
    expect(planSha256(moved)).toBe(planSha256(input()));
    expect(planSha256(input())).toMatch(/^[0-9a-f]{64}$/);
  });

  it('changes identity with anything that changes what a result means', () => {
    const base = planSha256(input());
    const variants = [
      input({ repeat: 4 }),
      input({ agent: 'anthropic' }),
      input({ model: 'm' }),
      input({ versions: { qs: '0.2.0' } }),
      input({ tasks: [...input().tasks].reverse() }),
      input({ tasks: input().tasks.map((t, i) => (i === 0 ? { ...t, sha256: sha('9') } : t)) }),
      input({ tasks: input().tasks.map((t, i) => (i === 0 ? { ...t, config_sha256: sha('9') } : t)) }),
    ];
    const all = new Set([base, ...variants.map(planSha256)]);
    expect(all.size).toBe(variants.length + 1);
  });

  it('lists attempts attempt-major, and shards partition them whatever N', () => {
    const all = planAttempts(input().tasks, 3);
    expect(all.map(key)).toEqual(['a#1', 'b#1', 'a#2', 'b#2', 'a#3', 'b#3']);
    for (const total of [1, 2, 3, 4, 6, 7, 50]) {
      const shares = Array.from({ length: total }, (_, i) => shardAttempts(all, i + 1, total));
      expect(shares.flat().map(key).sort()).toEqual(all.map(key).sort());
      const sizes = shares.map((s) => s.length);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    }
    expect(shardAttempts(all, 2, 3).map(key)).toEqual(['b#1', 'a#3']);
  });

  it('balances by expected duration: longest first onto the least-loaded shard, deterministic on ties', () => {
    const tasks = ['slow', 'mid', 'fast', 'unknown'].map((s) => ({ slug: s }));
    const all = planAttempts(tasks, 2);
    const durations = new Map([
      ['slow', 10],
      ['mid', 5],
      ['fast', 1],
    ]);
    const shares = [1, 2, 3].map((i) => shardAttempts(all, i, 3, durations));
    expect(shares.flat().map(key).sort()).toEqual(all.map(key).sort());
    // unknown takes the known mean (16/3); LPT places slow, slow, unknown, unknown, mid, mid, fast, fast.
    expect(shares.map((s) => s.map(key))).toEqual([['slow#1', 'mid#1'], ['slow#2', 'mid#2'], ['fast#1', 'unknown#1', 'fast#2', 'unknown#2']]);
    const load = (s: AttemptRef[]): number => s.reduce((t, a) => t + (durations.get(a.slug) ?? 16 / 3), 0);
    const loads = shares.map(load);
    // Graham's bound: LPT's longest shard is within 4/3 of the optimum, itself at least the mean load.
    expect(Math.max(...loads)).toBeLessThanOrEqual(((2 * (10 + 5 + 1 + 16 / 3)) / 3) * (4 / 3));
    // Same inputs, same shares: every machine computes the same split.
    expect([1, 2, 3].map((i) => shardAttempts(all, i, 3, new Map(durations)))).toEqual(shares);
    // Equal durations: plan order decides, so the result is round-robin.
    const flat = new Map(tasks.map((t) => [t.slug, 2]));
    expect([1, 2, 3].map((i) => shardAttempts(all, i, 3, flat).map(key))).toEqual([1, 2, 3].map((i) => shardAttempts(all, i, 3).map(key)));
  });

  it('gives each folder its assigned attempts: a shard its share, all and queue every attempt', () => {
    expect(sweepPlan(input(), { kind: 'all' }).assigned).toHaveLength(6);
    expect(sweepPlan(input(), { kind: 'queue', queue: 'redis://h:6379/0' }).assigned).toHaveLength(6);
    const p = sweepPlan(input(), { kind: 'shard', index: 3, total: 4 });
    expect(p.attempts).toBe(6);
    expect(p.assigned.map(key)).toEqual(['a#2']);
    expect(p.plan_sha256).toBe(sweepPlan(input(), { kind: 'all' }).plan_sha256);
  });

  it('reads expected durations from a results document, by slug and by name', () => {
    const d = durationsFromResults({ tasks: [{ task: 'A', slug: 'a', runs: [{ duration_seconds: 1 }, { duration_seconds: 3 }] }, { task: 'b', runs: [] }, { task: 'c', runs: [{ duration_seconds: 'x' }] }] });
    expect([...d]).toEqual([
      ['A', 2],
      ['a', 2],
    ]);
  });

  it('splits a spend cap so the shares never add up to more than the cap', () => {
    for (const [cap, n] of [
      [10, 3],
      [0.01, 7],
      [1, 1],
      [0.000001, 2],
    ] as const) {
      const part = spendShare(cap, n);
      expect(part * n).toBeLessThanOrEqual(cap);
      expect(cap - part * n).toBeLessThan(1e-6 * n + 1e-12);
    }
  });
});

describe('--shard', () => {
  it('takes INDEX/TOTAL, 1-based', () => {
    expect(parseShard('2/3', {})).toEqual({ index: 2, total: 3, from: '--shard' });
    expect(parseShard('1/1', {})).toEqual({ index: 1, total: 1, from: '--shard' });
  });

  it.each([
    ['0/3', /the index must be from 1 to 3/],
    ['4/3', /the index must be from 1 to 3/],
    ['3', /give the total too/],
    ['1/0', /the total must be a whole number/],
    ['-1/3', /expected INDEX\/TOTAL/],
    ['1.5/3', /expected INDEX\/TOTAL/],
    ['1/3/4', /expected INDEX\/TOTAL/],
    ['', /expected INDEX\/TOTAL/],
    ['a/b', /expected INDEX\/TOTAL/],
    ['1/99999999999', /the total must be a whole number/],
    ['auto/0', /the total must be a whole number/],
  ])('refuses %j', (spec, message) => {
    expect(() => parseShard(spec, {})).toThrow(message);
    try {
      parseShard(spec, {});
    } catch (error) {
      expect((error as { kind?: string }).kind).toBe('usage');
    }
  });

  it('reads a Kubernetes Indexed Job (0-based), the total from auto/N or QS_SHARD_TOTAL', () => {
    expect(parseShard('auto/3', { JOB_COMPLETION_INDEX: '0' })).toEqual({ index: 1, total: 3, from: 'JOB_COMPLETION_INDEX' });
    expect(parseShard('auto', { JOB_COMPLETION_INDEX: '2', QS_SHARD_TOTAL: '3' })).toEqual({ index: 3, total: 3, from: 'JOB_COMPLETION_INDEX' });
    expect(() => parseShard('auto', { JOB_COMPLETION_INDEX: '2' })).toThrow(/give the total as auto\/TOTAL or in QS_SHARD_TOTAL/);
    expect(() => parseShard('auto/3', { JOB_COMPLETION_INDEX: '3' })).toThrow(/JOB_COMPLETION_INDEX=3 is outside 3 shards \(Kubernetes Indexed Job indexes count from 0\)/);
    expect(() => parseShard('auto/3', { JOB_COMPLETION_INDEX: ' 1' })).toThrow(/is not a whole number/);
  });

  it('reads GitLab parallel (1-based, with its total)', () => {
    expect(parseShard('auto', { CI_NODE_INDEX: '1', CI_NODE_TOTAL: '4' })).toEqual({ index: 1, total: 4, from: 'CI_NODE_INDEX' });
    expect(parseShard('auto/4', { CI_NODE_INDEX: '4', CI_NODE_TOTAL: '4' })).toEqual({ index: 4, total: 4, from: 'CI_NODE_INDEX' });
    expect(() => parseShard('auto/3', { CI_NODE_INDEX: '1', CI_NODE_TOTAL: '4' })).toThrow(/CI_NODE_TOTAL=4 says 4 shards, the spec says 3/);
    expect(() => parseShard('auto', { CI_NODE_INDEX: '0', CI_NODE_TOTAL: '4' })).toThrow(/GitLab parallel indexes count from 1/);
  });

  it('reads an AWS Batch array job (0-based; total as auto/N)', () => {
    expect(parseShard('auto/5', { AWS_BATCH_JOB_ARRAY_INDEX: '4' })).toEqual({ index: 5, total: 5, from: 'AWS_BATCH_JOB_ARRAY_INDEX' });
  });

  it('refuses auto with no CI variable (pointing at the Actions matrix), or two CIs at once', () => {
    expect(() => parseShard('auto', {})).toThrow(/none of JOB_COMPLETION_INDEX, CI_NODE_INDEX, AWS_BATCH_JOB_ARRAY_INDEX is set \(in a GitHub Actions matrix give --shard \$\{\{ matrix.shard \}\}\/\$\{\{ strategy.job-total \}\}\)/);
    expect(() => parseShard('auto/2', { JOB_COMPLETION_INDEX: '0', AWS_BATCH_JOB_ARRAY_INDEX: '1' })).toThrow(/JOB_COMPLETION_INDEX and AWS_BATCH_JOB_ARRAY_INDEX are both set/);
  });
});
