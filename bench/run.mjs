#!/usr/bin/env node
// `pnpm bench`: every benchmark runs its candidate and its baseline alternately in the same run,
// then prints medians, the candidate/baseline ratio and the target. Numbers, never test assertions.
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

const dir = fileURLToPath(new URL('./benchmarks/', import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(dir).filter((f) => f.endsWith('.mjs')).sort();

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));

// A run may report its own duration ({ ms }) when only part of it is the thing measured.
async function time(fn, state) {
  const t0 = performance.now();
  const result = await fn(state);
  return { ms: result?.ms ?? performance.now() - t0, result };
}

const rows = [];
for (const file of files) {
  const mod = (await import(pathToFileURL(dir + file).href)).default;
  for (const bench of Array.isArray(mod) ? mod : [mod]) {
    if (only.length && !only.some((o) => bench.name.includes(o) || file.includes(o))) continue;
    let state;
    try {
      state = bench.setup ? await bench.setup() : undefined;
    } catch (error) {
      rows.push({ name: bench.name, error: `setup failed: ${error.message}` });
      process.stderr.write(`✗ ${bench.name}: setup failed: ${error.message}\n`);
      continue;
    }
    const n = bench.iterations ?? 10;
    const base = [];
    const cand = [];
    let units;
    try {
      // warm-up, then alternate so that machine noise hits both sides alike
      await bench.baseline.run(state);
      await bench.candidate.run(state);
      for (let i = 0; i < n; i++) {
        base.push((await time(bench.baseline.run, state)).ms);
        const c = await time(bench.candidate.run, state);
        cand.push(c.ms);
        units = c.result?.units ?? units;
      }
    } catch (error) {
      rows.push({ name: bench.name, error: error.message });
      process.stderr.write(`✗ ${bench.name}: ${error.message}\n`);
      if (bench.teardown) await bench.teardown(state);
      continue;
    }
    if (bench.teardown) await bench.teardown(state);
    const mb = median(base);
    const mc = median(cand);
    const row = { name: bench.name, baseline: bench.baseline.name, candidate_ms: mc, baseline_ms: mb, ratio: mc / mb, n };
    let verdict = '';
    if (bench.target?.max_ms !== undefined) {
      const value = bench.target.overhead ? mc - mb : mc;
      row.measured = value;
      verdict = `${bench.target.overhead ? 'overhead ' : ''}${fmt(value)} ms (target ≤ ${bench.target.max_ms} ms) ${value <= bench.target.max_ms ? 'OK' : 'MISSED'}`;
      row.ok = value <= bench.target.max_ms;
    }
    if (bench.target?.min_rate !== undefined && units) {
      const rate = units / (mc / 1000);
      row.rate = rate;
      verdict = `${Math.round(rate).toLocaleString('en')} ${bench.target.unit}/s (target ≥ ${bench.target.min_rate.toLocaleString('en')}) ${rate >= bench.target.min_rate ? 'OK' : 'MISSED'}`;
      row.ok = rate >= bench.target.min_rate;
    }
    if (bench.target?.max_ratio !== undefined) {
      row.ok = mc / mb <= bench.target.max_ratio;
      verdict = `ratio ${(mc / mb).toFixed(2)}× (target ≤ ${bench.target.max_ratio}×) ${row.ok ? 'OK' : 'MISSED'}`;
    }
    rows.push(row);
    process.stderr.write(
      `${bench.name}\n  candidate ${fmt(mc)} ms · baseline (${bench.baseline.name}) ${fmt(mb)} ms · ratio ${(mc / mb).toFixed(2)}× · n=${n}\n  ${verdict}\n`,
    );
  }
}
process.stdout.write(`${JSON.stringify({ benchmarks: rows })}\n`);
