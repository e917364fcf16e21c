// `qs diff` through the real binary: the prior art's reference figures, the buckets, refusals and exit codes.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planSha256, type PlanInput } from './sweep/plan.js';

const QS = fileURLToPath(new URL('../bin/qs.js', import.meta.url));
const STREAMS = fileURLToPath(new URL('../../../fixtures/streams/qs-check/', import.meta.url));
const PLAN_EXAMPLE = fileURLToPath(new URL('../../../fixtures/events/sweep.plan.json', import.meta.url));

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'qs-diff-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface T {
  task: string;
  passes: number;
  evidential: number;
  attempts?: number;
  agent?: string;
  models?: string[];
  suspect?: string[];
  discarded?: Record<string, number>;
  runs?: Array<Record<string, unknown>>;
}
let n = 0;
/** A results document with only the fields quickstarted's schema 2.0 writes (what either tool reads). */
function doc(tasks: T[], extra: Record<string, unknown> = {}): string {
  const file = join(work, `r${++n}.json`);
  const body = {
    schema_version: '2.0',
    quickstarted_version: '0.4.0',
    totals: { runs: 0, estimated_cost_usd: null, unpriced_models: [] },
    tasks: tasks.map((t) => ({
      task: t.task,
      agent: t.agent ?? 'replay',
      attempts: t.attempts ?? t.evidential,
      passes: t.passes,
      evidential_runs: t.evidential,
      pass_rate: t.evidential ? t.passes / t.evidential : null,
      discarded: t.discarded ?? {},
      skipped: 0,
      models_reported: t.models ?? [],
      suspect_pages: Object.fromEntries((t.suspect ?? []).map((u) => [u, 1])),
      runs: t.runs ?? [],
    })),
    ...extra,
  };
  writeFileSync(file, JSON.stringify(body));
  return file;
}
const qs = (...args: string[]) => {
  const r = spawnSync(process.execPath, [QS, 'diff', ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

describe('qs diff', () => {
  it('5/5 -> 0/5 is a regression at p = 0.008; --fail-on-regression exits 1, without it 0', () => {
    const before = doc([{ task: 'vite', passes: 5, evidential: 5 }]);
    const after = doc([{ task: 'vite', passes: 0, evidential: 5 }]);
    const plain = qs(before, after);
    expect(plain.code).toBe(0);
    expect(plain.out).toContain('vite: 5/5 (100%, 95% CI 57–100%) -> 0/5 (0%, 95% CI 0–43%): regressed, p=0.008');
    expect(plain.out).toContain('newly failing: vite');
    expect(plain.err).toContain('regressed: vite');
    expect(qs(before, after, '--fail-on-regression').code).toBe(1);
    // The other way round is an improvement, never a failure.
    const back = qs(after, before, '--fail-on-regression');
    expect(back.code).toBe(0);
    expect(back.out).toContain('improved, p=0.008');
    expect(back.out).toContain('newly fixed: vite');
  });

  it('1/3 -> 3/3 is underpowered and says so; 5/5 -> 4/6 is inside the noise at p = 0.455', () => {
    const r = qs(doc([{ task: 'a', passes: 1, evidential: 3 }, { task: 'b', passes: 5, evidential: 5 }]), doc([{ task: 'a', passes: 3, evidential: 3 }, { task: 'b', passes: 4, evidential: 6 }]));
    expect(r.code).toBe(0);
    expect(r.out).toContain('a: 1/3 (33%, 95% CI 6–79%) -> 3/3 (100%, 95% CI 44–100%): inside the noise, p=0.400; underpowered: no result at 3 vs 3 evidential runs could reach p<0.05 (best possible p=0.100)');
    expect(r.out).toContain('b: 5/5 (100%, 95% CI 57–100%) -> 4/6 (67%, 95% CI 30–90%): inside the noise, p=0.455');
    expect(r.out).toContain('newly fixed: a');
    expect(r.out).toContain('newly failing: b');
  });

  it('12/14 -> 0/2 (p exactly 1/20) is inside the noise, not a regression, as the prior art\'s diff says', () => {
    const before = doc([{ task: 't', passes: 12, evidential: 14 }]);
    const after = doc([{ task: 't', passes: 0, evidential: 2 }]);
    const r = qs(before, after, '--fail-on-regression');
    expect(r.out).toContain(': inside the noise, p=0.050');
    expect(r.err).not.toContain('regressed');
    expect(r.code).toBe(0);
  });

  it("a page counts as failing only for docs-gap runs: an inconclusive run's last page is not the docs' fault", () => {
    const gap = (page: string) => ({ attempt: 1, classification: 'docs_gap', passed: false, suspect_page: page });
    // Both tools' suspect_pages count every run that did not pass; the refused host's page is in it.
    const before = doc([{ task: 't', passes: 1, evidential: 2, attempts: 3, suspect: ['https://d/blocked', 'https://d/old'], runs: [{ attempt: 1, classification: 'passed', passed: true, suspect_page: null }, gap('https://d/old'), { attempt: 3, classification: 'harness_error', passed: false, suspect_page: 'https://d/blocked' }] }]);
    const after = doc([{ task: 't', passes: 1, evidential: 2, attempts: 3, suspect: ['https://d/blocked2', 'https://d/new'], runs: [{ attempt: 1, classification: 'passed', passed: true, suspect_page: null }, gap('https://d/new'), { attempt: 3, classification: 'agent_error', passed: false, suspect_page: 'https://d/blocked2' }] }]);
    const r = qs(before, after, '--json');
    expect(r.code).toBe(0);
    const t = (JSON.parse(r.out) as { tasks: Array<Record<string, unknown>> }).tasks[0] as Record<string, unknown>;
    expect(t.pages_newly_failing).toEqual(['https://d/new']);
    expect(t.pages_cleared).toEqual(['https://d/old']);
    expect((t.before as { suspect_pages: string[] }).suspect_pages).toEqual(['https://d/old']);
  });

  it('says when the runs set aside changed, as quickstarted\'s diff does (text and --json), and not when they did not', () => {
    const before = doc([{ task: 'd', passes: 3, evidential: 3, attempts: 5, discarded: { infra_error: 2 } }, { task: 'same', passes: 1, evidential: 1, attempts: 2, discarded: { harness_error: 1 } }]);
    const after = doc([{ task: 'd', passes: 3, evidential: 3, attempts: 4, discarded: { harness_error: 1, infra_error: 0 } }, { task: 'same', passes: 1, evidential: 1, attempts: 2, discarded: { harness_error: 1 } }]);
    const r = qs(before, after);
    expect(r.code).toBe(0);
    expect(r.out).toContain('  discarded: infra_error 2 -> harness_error 1\n');
    expect(r.out.match(/discarded:/g)).toHaveLength(1);
    const c = JSON.parse(qs(before, after, '--json').out) as { tasks: Array<{ task: string; discarded_changed: unknown }> };
    expect(c.tasks.map((t) => [t.task, t.discarded_changed])).toEqual([
      ['d', { before: { infra_error: 2 }, after: { harness_error: 1 } }],
      ['same', null],
    ]);
  });

  it('prints names and pages from a document with their controls made visible, so a results.json cannot drive the terminal', () => {
    const name = 'evil\x1b]0;title\x07\u202e';
    const r = qs(doc([{ task: name, passes: 5, evidential: 5, suspect: ['https://d/\x1b[2J'] }]), doc([{ task: name, passes: 0, evidential: 5, agent: 'x\x9b31m' }]));
    expect(r.code).toBe(3);
    expect(r.out + r.err).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]/);
    expect(r.out).toContain('evil\\x1b]0;title\\x07\\u202e: 5/5');
    expect(r.err).toContain('evil\\x1b]0;title\\x07\\u202e (agent replay before, x\\x9b31m after)');
  });

  it('keeps a name or a page with a newline on its own line, so a results.json cannot forge a verdict line', () => {
    const forged = 'x\nforged: 0/5 (0%) -> 5/5 (100%): improved, p=0.008';
    const r = qs(doc([{ task: `a${forged}`, passes: 2, evidential: 2, suspect: [`https://d/${forged}`] }]), doc([{ task: `a${forged}`, passes: 0, evidential: 2, suspect: [`https://e/${forged}`] }]));
    expect(r.code, r.err).toBe(0);
    expect(r.out.split('\n').filter((l) => l.startsWith('forged'))).toEqual([]);
    expect(r.out).toContain('ax\\nforged: 0/5 (0%) -> 5/5 (100%): improved, p=0.008: 2/2');
  });

  it('--json gives the whole comparison with full-precision p-values, buckets and intervals', () => {
    const before = doc([
      { task: 'gone', passes: 1, evidential: 1 },
      { task: 'still', passes: 0, evidential: 4 },
      { task: 'flaky', passes: 2, evidential: 4, suspect: ['https://d/x'] },
      { task: 'none', passes: 0, evidential: 0, attempts: 3 },
    ]);
    const after = doc([
      { task: 'still', passes: 0, evidential: 4 },
      { task: 'flaky', passes: 3, evidential: 4, suspect: ['https://d/y'] },
      { task: 'none', passes: 2, evidential: 2 },
      { task: 'new', passes: 1, evidential: 1 },
    ]);
    const r = qs(before, after, '--json');
    expect(r.code).toBe(0);
    const c = JSON.parse(r.out) as { tasks: Array<Record<string, unknown>>; added: string[]; removed: string[]; alpha: number };
    expect(c.added).toEqual(['new']);
    expect(c.removed).toEqual(['gone']);
    expect(c.alpha).toBe(0.05);
    const by = Object.fromEntries(c.tasks.map((t) => [t.task, t]));
    expect(by.still).toMatchObject({ bucket: 'still_failing', p_value: 1, verdict: 'inside_the_noise' });
    expect(by.flaky).toMatchObject({ bucket: 'flaky', pages_newly_failing: ['https://d/y'], pages_cleared: ['https://d/x'] });
    // [[2,2],[3,1]] by hand: the tables have p 4/56, 24/56, 24/56, 4/56; the observed is the likeliest, so p is 1.
    expect(by.flaky?.p_value).toBe(1);
    expect(by.none).toMatchObject({ bucket: 'no_evidence', verdict: 'no_evidence', p_value: null });
    expect(by.still?.before).toMatchObject({ passes: 0, failures: 4, interval: { low: 0 } });
    const full = JSON.parse(qs(doc([{ task: 'v', passes: 5, evidential: 5 }]), doc([{ task: 'v', passes: 0, evidential: 5 }]), '--json').out) as { tasks: Array<{ p_value: number }> };
    // Every digit JSON can carry: log-space sums agree with the exact 2/252 to 1e-15.
    expect(full.tasks[0]?.p_value).toBeCloseTo(2 / 252, 15);
    expect(String(full.tasks[0]?.p_value).length).toBeGreaterThan(15);
  });

  it('refuses tasks served by different models or agents (exit 3) unless --allow-different', () => {
    const before = doc([{ task: 'm', passes: 5, evidential: 5, agent: 'anthropic', models: ['claude-a'] }]);
    const after = doc([{ task: 'm', passes: 0, evidential: 5, agent: 'anthropic', models: ['claude-b'] }]);
    const refused = qs(before, after, '--fail-on-regression');
    expect(refused.code).toBe(3);
    expect(refused.out).toContain('m: 5/5');
    expect(refused.out).toContain('not comparable: model claude-a before, claude-b after');
    expect(refused.err).toContain('--allow-different');
    // A pair that is not compared is in no bucket and has no p-value: nothing is claimed about it.
    expect(refused.out).not.toMatch(/newly failing|regressed|p=/);
    const refusedJson = JSON.parse(qs(before, after, '--json').out) as { tasks: Array<Record<string, unknown>> };
    expect(refusedJson.tasks[0]).toMatchObject({ verdict: 'not_comparable', bucket: null, p_value: null, best_possible_p: null, pages_newly_failing: [], pages_cleared: [], discarded_changed: null });
    const allowed = qs(before, after, '--allow-different', '--fail-on-regression');
    expect(allowed.code).toBe(1);
    expect(allowed.out).toContain('regressed, p=0.008');
    expect(allowed.out).toContain('warning: model claude-a before, claude-b after');
    const agents = qs(doc([{ task: 'm', passes: 1, evidential: 1, agent: 'replay' }]), doc([{ task: 'm', passes: 1, evidential: 1, agent: 'openai' }]));
    expect(agents.code).toBe(3);
    expect(agents.out).toContain('not comparable: agent replay before, openai after');
  });

  it('compares the models as sets, as quickstarted does: a model listed twice is the same model', () => {
    const r = qs(doc([{ task: 'm', passes: 5, evidential: 5, models: ['claude-a', 'claude-a'] }]), doc([{ task: 'm', passes: 5, evidential: 5, models: ['claude-a'] }]));
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('inside the noise');
  });

  it('compares every agent a side names in `agents`, not only the first run\'s (a folder with runs of two agents)', () => {
    const before = doc([{ task: 'm', passes: 5, evidential: 5, agent: 'anthropic' }]);
    const mixed = JSON.parse(readFileSync(doc([{ task: 'm', passes: 5, evidential: 10, agent: 'anthropic' }]), 'utf8')) as { tasks: Array<Record<string, unknown>> };
    (mixed.tasks[0] as Record<string, unknown>).agents = ['anthropic', 'replay'];
    const after = join(work, 'mixed-agents.json');
    writeFileSync(after, JSON.stringify(mixed));
    const r = qs(before, after);
    expect(r.code).toBe(3);
    expect(r.out).toContain('not comparable: agent anthropic before, anthropic, replay after');
    (mixed.tasks[0] as Record<string, unknown>).agents = 'anthropic';
    writeFileSync(after, JSON.stringify(mixed));
    const bad = qs(before, after);
    expect(bad.code).toBe(3);
    expect(bad.err).toBe(`qs: ${after}: tasks[0].agents: expected an array of strings\n`);
  });

  it('reads an --out folder through its streams when it has no results.json', () => {
    const dir = join(work, 'out');
    for (const [slug, fixture] of [['hello', 'passed'], ['missing', 'docs-gap']] as const) {
      mkdirSync(join(dir, slug, '1'), { recursive: true });
      writeFileSync(join(dir, slug, '1', 'events.ndjson'), readFileSync(join(STREAMS, fixture, 'out.ndjson')));
    }
    const r = qs(dir, dir, '--json');
    expect(r.code).toBe(0);
    const c = JSON.parse(r.out) as { tasks: Array<{ task: string; bucket: string; p_value: number }> };
    expect(c.tasks.map((t) => [t.task, t.bucket, t.p_value])).toEqual([
      ['greeter-hello', 'still_passing', 1],
      ['greeter-missing-step', 'still_failing', 1],
    ]);
  });

  it.each([
    ['a missing file', () => [join(work, 'nope.json'), doc([])], /nope\.json: no such file or folder/],
    ['not JSON', () => [(writeFileSync(join(work, 'bad.json'), '{oops'), join(work, 'bad.json')), doc([])], /bad\.json:1:2: not JSON/],
    ['another major version', () => [doc([], { schema_version: '3.0' }), doc([])], /schema_version: 3\.0 is not a version 2 results document/],
    ['a task without counts', () => [(writeFileSync(join(work, 'nc.json'), JSON.stringify({ schema_version: '2.0', tasks: [{ task: 'x', passes: 'many' }] })), join(work, 'nc.json')), doc([])], /tasks\[0\]\.attempts: expected a non-negative integer/],
    ['impossible counts', () => [doc([{ task: 'x', passes: 4, evidential: 3 }]), doc([])], /tasks\[0\]: passes <= evidential_runs <= attempts does not hold/],
    ['an empty folder', () => [(mkdirSync(join(work, 'empty'), { recursive: true }), join(work, 'empty')), doc([])], /no saved runs/],
    ['a cost that is not a number', () => [doc([]), doc([], { totals: { runs: 0, estimated_cost_usd: '1.50', unpriced_models: [] } })], /totals\.estimated_cost_usd: expected a number or null/],
    ['run counts too large to compute with', () => [doc([]), doc([{ task: 'x', passes: 1e300, evidential: 1e300 }])], /tasks\[0\]\.attempts: expected a non-negative integer/],
    ['an agent that is not a string', () => [doc([]), doc([{ task: 'x', passes: 1, evidential: 1, agent: 5 as unknown as string }])], /tasks\[0\]\.agent: expected a string or null/],
    ['a schema_version that is not a version', () => [doc([], { schema_version: '2.abc' }), doc([])], /schema_version: 2\.abc is not a version 2 results document/],
    ['a Python literal in the JSON (V8 quotes the text around it, over two lines)', () => [(writeFileSync(join(work, 'py.json'), '{"schema_version": "2.0",\n "interrupted": False,\n "tasks": []}'), join(work, 'py.json')), doc([])], /py\.json:2:17: not JSON \(Unexpected token 'F'\)$/m],
    ['a comment in the JSON', () => [(writeFileSync(join(work, 'comment.json'), '{"schema_version": "2.0", // made by hand\n "tasks": []}'), join(work, 'comment.json')), doc([])], /comment\.json:1:27: not JSON \(Expected double-quoted property name\)$/m],
    ['a schema_version written as a number', () => [doc([], { schema_version: 2.0 }), doc([])], /schema_version: expected a string \("2\.0"\), not the number 2/],
    ['discarded counts that are not counts', () => [doc([]), doc([{ task: 'x', passes: 1, evidential: 1, discarded: { harness_error: '1' } as never }])], /tasks\[0\]\.discarded: expected an object of counts/],
    ['discarded as a list', () => [doc([]), doc([{ task: 'x', passes: 1, evidential: 1, discarded: ['harness_error'] as never }])], /tasks\[0\]\.discarded: expected an object of counts/],
    ['suspect_pages as a list', () => [(writeFileSync(join(work, 'sp.json'), JSON.stringify({ schema_version: '2.0', tasks: [{ task: 'x', attempts: 1, passes: 0, evidential_runs: 1, suspect_pages: ['https://a.test/'] }] })), join(work, 'sp.json')), doc([])], /tasks\[0\]\.suspect_pages: expected an object of counts/],
    ['runs that are not a list', () => [doc([]), doc([{ task: 'x', passes: 1, evidential: 1, runs: {} as never }])], /tasks\[0\]\.runs: expected an array/],
    ['a run that is not an object', () => [doc([]), doc([{ task: 'x', passes: 1, evidential: 1, runs: ['oops'] as never }])], /tasks\[0\]\.runs\[0\]: expected an object/],
    ['a run classification that is not a string', () => [doc([]), doc([{ task: 'x', passes: 1, evidential: 1, runs: [{ classification: 3 }] }])], /tasks\[0\]\.runs\[0\]\.classification: expected a string/],
    ['a run suspect_page that is not a string', () => [doc([]), doc([{ task: 'x', passes: 1, evidential: 1, runs: [{ classification: 'docs_gap', suspect_page: 7 }] }])], /tasks\[0\]\.runs\[0\]\.suspect_page: expected a string or null/],
    ['one task name twice on a side', () => [doc([{ task: 'x', passes: 5, evidential: 5 }]), doc([{ task: 'x', passes: 5, evidential: 5 }, { task: 'x', passes: 0, evidential: 5, agent: 'claude' }])], /tasks\[1\]\.task: x is also tasks\[0\]/],
  ])('exits 3 with one line on %s', (_name, files, message) => {
    const r = qs(...(files() as string[]));
    expect(r.code).toBe(3);
    expect(r.err).toMatch(message);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.out).toBe('');
  });

  it('reads a results.json saved with a byte order mark; refuses one too large to be a results document, unread (exit 3, one line)', () => {
    const bom = join(work, 'bom.json');
    writeFileSync(bom, `\ufeff${readFileSync(doc([{ task: 'x', passes: 2, evidential: 2 }]), 'utf8')}`);
    const read = qs(bom, doc([{ task: 'x', passes: 2, evidential: 2 }]));
    expect(read.code, read.err).toBe(0);
    expect(read.out).toContain('x: 2/2');
    // Sparse: 300 MiB on the size the loader checks, a few bytes on disk.
    const huge = join(work, 'huge.json');
    writeFileSync(huge, '{"schema_version": "2.0", "tasks": []');
    truncateSync(huge, 300 * 2 ** 20);
    const r = qs(huge, doc([]));
    expect(r.code).toBe(3);
    expect(r.err).toBe(`qs: ${huge}: 300 MiB is more than a results document holds (at most 256 MiB)\n`);
    rmSync(huge);
  });

  it('exits 3 when not given two results', () => {
    expect(qs(doc([])).code).toBe(3);
  });
});

describe('qs results', () => {
  const results = (...args: string[]) => spawnSync(process.execPath, [QS, 'results', ...args], { encoding: 'utf8' });

  it('prints results.json from the streams, or writes it and the reports with --write, --junit, --summary', () => {
    const dir = join(work, 'saved');
    mkdirSync(join(dir, 'hello', '1'), { recursive: true });
    writeFileSync(join(dir, 'hello', '1', 'events.ndjson'), readFileSync(join(STREAMS, 'passed', 'out.ndjson')));
    const printed = results(dir);
    expect(printed.status).toBe(0);
    expect(JSON.parse(printed.stdout)).toMatchObject({ schema_version: '2.0', tasks: [{ task: 'greeter-hello', passes: 1 }] });
    const written = results(dir, '--write', '--junit', join(work, 'r.xml'), '--summary', join(work, 'r.md'));
    expect(written.status).toBe(0);
    expect(written.stdout).toBe('');
    expect(readFileSync(join(dir, 'results.json'), 'utf8')).toBe(printed.stdout);
    expect(readFileSync(join(work, 'r.xml'), 'utf8')).toContain('<testsuites name="quickloop" tests="1" failures="0" errors="0" skipped="0"');
    expect(readFileSync(join(work, 'r.md'), 'utf8')).toContain('| greeter-hello |');
  });

  it('refuses report paths it cannot write before printing anything (exit 3, one line), and a results.json that is a folder', () => {
    const dir = join(work, 'unwritable');
    mkdirSync(join(dir, 'hello', '1'), { recursive: true });
    writeFileSync(join(dir, 'hello', '1', 'events.ndjson'), readFileSync(join(STREAMS, 'passed', 'out.ndjson')));
    for (const [args, message] of [
      [['--junit', join(work, 'no-such-folder', 'r.xml')], /--junit .*no-such-folder\/r\.xml: its folder does not exist/],
      [['--summary', work], /--summary .*: name a file/],
      // Below a file, and under /proc: no mode says so to a root harness, the write does.
      [['--junit', join(dir, 'hello', '1', 'events.ndjson', 'j.xml')], /--junit .*events\.ndjson\/j\.xml: cannot be written \(ENOTDIR\)/],
      [['--summary', '/proc/qs-summary.md'], /--summary \/proc\/qs-summary\.md: cannot be written \(E[A-Z]+\)/],
    ] as const) {
      const r = results(dir, ...args);
      expect(r.status).toBe(3);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stdout).toBe('');
    }
    // A path that can be written is tried and left as it was: nothing made there before the results.
    const probe = join(work, 'probe-summary.md');
    const ok = results(dir, '--summary', probe);
    expect(ok.status, ok.stderr).toBe(0);
    expect(readFileSync(probe, 'utf8')).toContain('hello');
    // A link the user made (dangling until written) is kept: the summary goes where it points.
    const target = join(work, 'linked-summary.md');
    const link = join(work, 'summary-link.md');
    symlinkSync(target, link);
    const linked = results(dir, '--summary', link);
    expect(linked.status, linked.stderr).toBe(0);
    expect(readFileSync(link, 'utf8')).toContain('hello');
    expect(readFileSync(target, 'utf8')).toContain('hello');
    mkdirSync(join(dir, 'results.json'));
    const w = results(dir, '--write');
    expect(w.status).toBe(3);
    expect(w.stderr).toBe(`qs results: ${join(dir, 'results.json')}: is a folder, not a file\n`);
  });

  it('passes over a dangling symlink beside the task folders (an artifact copied in part) instead of crashing', () => {
    const dir = join(work, 'dangling');
    mkdirSync(join(dir, 'hello', '1'), { recursive: true });
    writeFileSync(join(dir, 'hello', '1', 'events.ndjson'), readFileSync(join(STREAMS, 'passed', 'out.ndjson')));
    symlinkSync(join(work, 'no-such-target'), join(dir, 'gone'));
    const r = results(dir);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ tasks: [{ task: 'greeter-hello', passes: 1 }] });
  });

  it.each([
    ['a missing folder', () => join(work, 'nowhere'), /nowhere: no such folder/],
    ['a file', () => (writeFileSync(join(work, 'plain'), 'x'), join(work, 'plain')), /plain: is a file/],
    ['a folder without streams', () => (mkdirSync(join(work, 'bare'), { recursive: true }), join(work, 'bare')), /bare: no saved runs/],
    [
      'a bad line',
      () => {
        mkdirSync(join(work, 'badline', 't', '1'), { recursive: true });
        writeFileSync(join(work, 'badline', 't', '1', 'events.ndjson'), '{"v":1}\n');
        return join(work, 'badline');
      },
      /badline\/t\/1\/events\.ndjson:1: /,
    ],
    [
      'an events.ndjson that is a folder',
      () => {
        mkdirSync(join(work, 'dirstream', 't', '1', 'events.ndjson'), { recursive: true });
        return join(work, 'dirstream');
      },
      /dirstream\/t\/1\/events\.ndjson: is not a file/,
    ],
    [
      'a stream holding two runs (two saved streams joined into one file would count as one attempt)',
      () => {
        mkdirSync(join(work, 'joined', 'greeter-hello', '1'), { recursive: true });
        const passed = readFileSync(join(STREAMS, 'passed', 'out.ndjson'), 'utf8');
        writeFileSync(join(work, 'joined', 'greeter-hello', '1', 'events.ndjson'), passed + passed.replaceAll('"run_id":"run-1"', '"run_id":"run-2"'));
        return join(work, 'joined');
      },
      /joined\/greeter-hello\/1\/events\.ndjson: holds 2 runs \(run-1, run-2\): an attempt's stream is one run's/,
    ],
    [
      'one run saved as two attempts (a copied folder would count its verdict twice)',
      () => {
        for (const attempt of ['1', '2']) {
          mkdirSync(join(work, 'copied', 'greeter-hello', attempt), { recursive: true });
          writeFileSync(join(work, 'copied', 'greeter-hello', attempt, 'events.ndjson'), readFileSync(join(STREAMS, 'passed', 'out.ndjson')));
        }
        return join(work, 'copied');
      },
      /copied\/greeter-hello\/2\/events\.ndjson: run run-1 is also \S*copied\/greeter-hello\/1\/events\.ndjson's: one run counts once/,
    ],
    [
      "an attempt the folder's plan did not give it (a stream copied in would count as the sweep's)",
      () => {
        const plan = { ...(JSON.parse(readFileSync(PLAN_EXAMPLE, 'utf8')) as Record<string, unknown>) };
        plan.plan_sha256 = planSha256(plan as unknown as PlanInput);
        for (const [attempt, run] of [['1', 'run-1'], ['2', 'run-2']] as const) {
          mkdirSync(join(work, 'unplanned', 'greeter-quickstart', attempt), { recursive: true });
          const stream = readFileSync(join(STREAMS, 'passed', 'out.ndjson'), 'utf8').replaceAll('"greeter-hello"', '"greeter-quickstart"').replaceAll('"run_id":"run-1"', `"run_id":"${run}"`);
          writeFileSync(join(work, 'unplanned', 'greeter-quickstart', attempt, 'events.ndjson'), stream);
        }
        writeFileSync(join(work, 'unplanned', 'plan.ndjson'), `${JSON.stringify(plan)}\n`);
        return join(work, 'unplanned');
      },
      /unplanned\/greeter-quickstart\/2\/events\.ndjson: greeter-quickstart#2 is not an attempt \S*unplanned\/plan\.ndjson gives this folder \(shard 1\/3: 1 of 3 attempts\)/,
    ],
    [
      'a plan.ndjson that is a folder',
      () => {
        mkdirSync(join(work, 'dirplan', 'plan.ndjson'), { recursive: true });
        return join(work, 'dirplan');
      },
      /dirplan\/plan\.ndjson: is not a file/,
    ],
    [
      'a plan of more attempts than any sweep makes (hash and all consistent)',
      () => {
        const plan = { ...(JSON.parse(readFileSync(PLAN_EXAMPLE, 'utf8')) as Record<string, unknown>), repeat: 1e8, attempts: 1e8, share: { kind: 'all' }, assigned: [] };
        plan.plan_sha256 = planSha256(plan as unknown as PlanInput);
        mkdirSync(join(work, 'bigplan'), { recursive: true });
        writeFileSync(join(work, 'bigplan', 'plan.ndjson'), `${JSON.stringify(plan)}\n`);
        return join(work, 'bigplan');
      },
      /bigplan\/plan\.ndjson:1: attempts: 1 tasks × repeat 100000000 is more than qs reads \(at most 1000000\)/,
    ],
  ])('exits 3 with one line on %s', (_name, dir, message) => {
    const r = results(dir());
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('qs merge over hand-made folders', () => {
  it('prints a task name from the streams with its controls made visible on stderr', () => {
    const plan = { ...(JSON.parse(readFileSync(PLAN_EXAMPLE, 'utf8')) as Record<string, unknown>), repeat: 1, attempts: 1, share: { kind: 'all' }, assigned: [{ slug: 'greeter-quickstart', attempt: 1 }] };
    plan.plan_sha256 = planSha256(plan as unknown as PlanInput);
    const dir = join(work, 'merge-hostile');
    mkdirSync(join(dir, 'greeter-quickstart', '1'), { recursive: true });
    writeFileSync(join(dir, 'plan.ndjson'), `${JSON.stringify(plan)}\n`);
    const stream = readFileSync(join(STREAMS, 'passed', 'out.ndjson'), 'utf8').replaceAll('"greeter-hello"', '"evil\\u001b]0;t\\u0007"');
    writeFileSync(join(dir, 'greeter-quickstart', '1', 'events.ndjson'), stream);
    const r = spawnSync(process.execPath, [QS, 'merge', dir, '--out', join(work, 'merged-hostile')], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('evil\\x1b]0;t\\x07: 100%');
    expect(r.stderr).not.toMatch(/[\x00-\x09\x0b-\x1f]/);
  });
});
