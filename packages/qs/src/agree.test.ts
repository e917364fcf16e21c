// Issue acceptance: one sweep of 3 tasks × 4 attempts on 2 workers writes results.json, JUnit, the
// summary and the report, and every one of them says the same as the saved streams.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const QS = join(ROOT, 'packages', 'qs', 'bin', 'qs.js');
const TASKS = [join(ROOT, 'fixtures', 'examples', 'greeter.yaml'), join(ROOT, 'fixtures', 'pipeline', 'docs-gap.yaml'), join(ROOT, 'fixtures', 'pipeline', 'harness-error.yaml')];
const work = mkdtempSync(join(tmpdir(), 'qs-agree-'));
let code: number | null = null;

function qs(args: string[]): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [QS, ...args], { cwd: work, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', NO_COLOR: '1' }, stdio: ['ignore', 'ignore', 'ignore'] });
    child.on('close', (c) => resolve(c));
  });
}

beforeAll(async () => {
  code = await qs(['run', ...TASKS, '--repeat', '4', '--workers', '2', '--out', 'sweep', '--junit', 'junit.xml', '--summary', 'summary.md', '--docs-map', `https://docs.greeter.test/=${join(ROOT, 'fixtures', 'docs-site')}`, '-q']);
  expect(await qs(['report', 'sweep', '--out', 'report.html'])).toBe(0);
}, 240_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

type Verdict = 'passed' | 'docs_gap' | 'inconclusive';

describe('a sweep of 3 tasks × 4 attempts on 2 workers', () => {
  it('has one verdict per attempt in the streams, and results.json, JUnit, the summary and the report all say the same', () => {
    expect(code).toBe(1);
    // The streams: one folder per task and attempt, each ending in its run.completed.
    const fromStreams = new Map<string, Verdict[]>();
    for (const slug of readdirSync(join(work, 'sweep'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name)) {
      for (const attempt of readdirSync(join(work, 'sweep', slug))) {
        const lines = readFileSync(join(work, 'sweep', slug, attempt, 'events.ndjson'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
        const done = lines.at(-1) as { type: string; task: string; classification: string };
        expect(done.type).toBe('run.completed');
        const v: Verdict = done.classification === 'passed' || done.classification === 'docs_gap' ? done.classification : 'inconclusive';
        fromStreams.set(done.task, [...(fromStreams.get(done.task) ?? []), v]);
      }
    }
    const count = (task: string, v: Verdict) => (fromStreams.get(task) ?? []).filter((x) => x === v).length;
    expect([...fromStreams.keys()].sort()).toEqual(['greeter-blocked-host', 'greeter-docs-gap', 'greeter-quickstart']);
    expect([...fromStreams.values()].every((v) => v.length === 4)).toBe(true);
    expect(count('greeter-quickstart', 'passed')).toBe(4);
    expect(count('greeter-docs-gap', 'docs_gap')).toBe(4);
    expect(count('greeter-blocked-host', 'inconclusive')).toBe(4);

    const results = JSON.parse(readFileSync(join(work, 'sweep', 'results.json'), 'utf8')) as { counts: Record<string, number>; tasks: Array<{ task: string; attempts: number; passes: number; evidential_runs: number; pass_rate: number | null }> };
    expect(results.counts).toMatchObject({ passed: 4, docs_gap: 4, inconclusive: 4, skipped: 0 });
    for (const t of results.tasks) {
      expect(t.attempts).toBe(4);
      expect(t.passes).toBe(count(t.task, 'passed'));
      expect(t.evidential_runs).toBe(count(t.task, 'passed') + count(t.task, 'docs_gap'));
    }

    const junit = readFileSync(join(work, 'junit.xml'), 'utf8');
    const suites = [...junit.matchAll(/<testsuite [^>]*name="([^"]+)"[^>]*>/g)].map((m) => [m[1], m[0]] as const);
    expect(suites.map(([n]) => n).sort()).toEqual(['greeter-blocked-host', 'greeter-docs-gap', 'greeter-quickstart']);
    for (const [name, tag] of suites) {
      const attr = (a: string) => Number(new RegExp(`${a}="(\\d+)"`).exec(tag)?.[1]);
      expect([attr('tests'), attr('failures'), attr('errors')], name).toEqual([4, count(name, 'docs_gap'), count(name, 'inconclusive')]);
    }

    const summary = readFileSync(join(work, 'summary.md'), 'utf8');
    expect(summary).toContain('12 runs of 3 tasks · 4 passed · 4 docs gap · 4 inconclusive · 0 skipped');
    expect(summary).toMatch(/\| greeter-quickstart \| replay \| 100% \\\[4\/4 evidential of 4 runs\\\]/);
    expect(summary).toMatch(/\| greeter-docs-gap \| replay \| 0% \\\[0\/4 evidential of 4 runs\\\]/);

    const report = readFileSync(join(work, 'report.html'), 'utf8');
    expect(report.match(/<details class="attempt"/g)).toHaveLength(12);
    for (const name of fromStreams.keys()) expect(report).toContain(name);
    expect(report).toMatch(/100%/);
    // Every docs gap is on the page with the page to look at first.
    expect(report.split('https://docs.greeter.test/quickstart.html').length - 1).toBeGreaterThanOrEqual(4);
  });
});
