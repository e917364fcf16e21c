/// <reference lib="dom" />
// `qs report` over real sweeps (the replay agent in the bwrap sandbox, and a model agent against the
// testkit mock), opened in real headless Chromium: no request leaves the page, the facts are there
// with JavaScript off, nothing overflows a phone's width, and markup from a stream stays text.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { InputError, memoryIo } from '@quickloop/cli-kit';
import { startMockServer, type MockServer } from '@quickloop/testkit';
import { cli } from './cli.js';
import { QS, runNodeBin } from './testing/qs-bin.js';
import { esc, reportHtml } from './results/html.js';
import type { WireEvent } from '@quickloop/events';
import type { Results } from './results/fold.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SITE = join(ROOT, 'fixtures', 'docs-site');
const MAP = ['--docs-map', `https://docs.greeter.test/=${SITE}`];
const EXAMPLE = join(ROOT, 'fixtures', 'examples', 'greeter.yaml');
const pipeline = (name: string): string => join(ROOT, 'fixtures', 'pipeline', name);
const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
/** Where the screenshots are kept for people to look at (CI uploads it). */
const SHOTS = process.env.QS_TEST_OUTPUT ?? join(ROOT, 'test-output');

// Each marks the global it would set if a stream's markup ever ran as the page's.
// (No single quote in them: the shell commands below quote them with it.)
const OUTPUT_XSS = '<script>window.__owned="output"</script></pre></details><img src=x onerror="window.__owned=1">';
const CHECK_XSS = '<script>window.__owned="check"</script>';
const NAME_XSS = '<script>window.__owned="name"</script><b>bold</b>';
const TURN_XSS = '</summary><script>window.__owned="turn"</script>';

let work: string;
let mock: MockServer;
let browser: Browser | undefined;
let written: Array<{ code: number | null; out: string; err: string }> = [];

const qs = (args: string[], bin = QS) => runNodeBin(bin, args, work);

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'qs-report-'));
  // A task whose command prints markup and whose check fails printing more: a docs gap to report.
  writeFileSync(
    join(work, 'hostile.yaml'),
    [
      'name: greeter-hostile-output',
      'goal: Print some markup.',
      'docs:',
      '  path:',
      '    - https://docs.greeter.test/quickstart.html',
      'replay:',
      `  - ${JSON.stringify(`echo '${OUTPUT_XSS}'`)}`,
      'success:',
      `  script: ${JSON.stringify(`echo '${CHECK_XSS}'; qs_fail 'markup <b>is</b> text'`)}`,
      '',
    ].join('\n'),
  );
  mock = await startMockServer({ whenEmpty: 'error', requireKey: false });
  const replay = qs(['run', EXAMPLE, pipeline('docs-gap.yaml'), pipeline('quiet-egress.yaml'), pipeline('denied-step.yaml'), 'hostile.yaml', '--workers', '2', '--out', 'sweep', ...MAP]);
  // A model run recorded against the mock: turns with text, a retried call, read_docs and commands.
  const validated = await qs([EXAMPLE], join(ROOT, 'packages', 'qs-validate', 'bin', 'qs-validate.js'));
  expect(validated.code, validated.err).toBe(0);
  const loaded = validated.out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { type: string; task?: { replay: string[] } })
    .find((e) => e.type === 'task.loaded') as { task: { replay: string[] } };
  mock.push(
    { text: `I will read the quickstart. ${TURN_XSS}`, toolCalls: [{ name: 'read_docs', input: { url: 'https://docs.greeter.test/quickstart.html' } }] },
    { error: { status: 429, message: 'slow down', type: 'rate_limit_error', retryAfterMs: 1 } },
    ...loaded.task.replay.map((command) => ({ toolCalls: [{ name: 'bash', input: { command } }], usage: { input: 1000, output: 100 } })),
    { text: 'Built the greeter.' },
  );
  writeFileSync(join(work, 'prices.json'), JSON.stringify({ as_of: '2026-12-01', models: { 'local-coder': { input: 1, cache_read: 0, cache_write: 0, output: 10 } } }));
  const model = await qs(['run', EXAMPLE, '--agent', 'openai-chat', '--model', 'local-coder', '--base-url', mock.openaiUrl, '--prices', 'prices.json', '--no-stream', '--out', 'model', ...MAP]);
  expect(model.code, model.err).toBe(0);
  const r = await replay;
  expect(r.code, r.err).toBe(1);
  // The pages every test reads, by the real binary at its default paths.
  written = [await qs(['report', 'sweep']), await qs(['report', 'model/results.json'])];
  if (HAS_CHROMIUM) {
    // launch() gives every browser a fresh profile of its own in a temporary folder, removed at close.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  }
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await mock?.close();
  rmSync(work, { recursive: true, force: true });
});

const results = (dir: string): Results => JSON.parse(readFileSync(join(work, dir, 'results.json'), 'utf8')) as Results;
const pct = (x: number): string => `${Math.round(x * 100)}%`;

describe('qs report', () => {
  it('writes RESULTS.html beside an --out folder by default, and to --out from a results.json', async () => {
    const [a, c] = written as [{ code: number; out: string; err: string }, { code: number; out: string; err: string }];
    expect(a.code, a.err).toBe(0);
    expect(a.out).toBe('');
    expect(a.err).toBe('qs report: wrote sweep.html (5 tasks, 5 runs, 5 transcripts)\n');
    const b = await qs(['report', 'sweep/results.json', '--out', 'from-json.html']);
    expect(b.code, b.err).toBe(0);
    // A results.json still in its folder finds its streams beside it: the same page.
    expect(readFileSync(join(work, 'from-json.html'), 'utf8')).toBe(readFileSync(join(work, 'sweep.html'), 'utf8'));
    expect(c.code, c.err).toBe(0);
    expect(c.err).toBe('qs report: wrote model/results.html (1 task, 1 run, 1 transcript)\n');
    expect(existsSync(join(work, 'model', 'results.html'))).toBe(true);
    // From inside the folder: `.` is the folder, so the page goes beside it.
    const io = memoryIo({ cwd: join(work, 'nested') });
    mkdirSync(join(work, 'nested', 'copy'), { recursive: true });
    cpSync(join(work, 'model'), join(work, 'nested', 'copy'), { recursive: true });
    const inside = memoryIo({ cwd: join(work, 'nested', 'copy') });
    expect(await cli(['report', '.'], inside)).toBe(0);
    expect(inside.err()).toBe('qs report: wrote ../copy.html (1 task, 1 run, 1 transcript)\n');
    expect(existsSync(join(work, 'nested', 'copy.html'))).toBe(true);
    expect(await cli(['report', 'copy/'], io)).toBe(0);
    expect(io.err()).toBe('qs report: wrote copy.html (1 task, 1 run, 1 transcript)\n');
  });

  it('puts every pass rate with its interval, every docs gap with its check and page, and the egress, denials and cost on the page', () => {
    const html = readFileSync(join(work, 'sweep.html'), 'utf8');
    const doc = results('sweep');
    for (const t of doc.tasks) {
      expect(html).toContain(esc(t.task));
      if (t.pass_rate_interval) expect(html).toContain(`95% CI ${pct(t.pass_rate_interval.low)}–${pct(t.pass_rate_interval.high)}`);
      for (const r of t.runs.filter((x) => x.classification === 'docs_gap')) {
        expect(html).toContain(esc(r.outcome.check_reason));
        expect(html).toContain(`href="${r.suspect_page}"`);
      }
    }
    const denied = doc.tasks.find((t) => t.task === 'greeter-denied-write')?.runs[0];
    expect(html).toContain('Runs without a verdict <span class="count">1</span>');
    expect(html).toContain(esc(denied?.outcome.detail));
    expect(html).toContain('<code>telemetry.example.test</code>');
    expect(html).toContain('<code>write /etc/profile.d/greeter.sh</code>');
    expect(html).not.toMatch(/<(link|img|iframe|object|embed)\b(?![^>]*href="data:,")/i);
    expect(html).not.toMatch(/\b(src|href)="(?!#|data:,|https:\/\/docs\.greeter\.test\/)/);
  });

  it('names the file and line of a bad stream line, and refuses what is not results (exit 3)', async () => {
    const bad = join(work, 'bad');
    cpSync(join(work, 'sweep'), bad, { recursive: true });
    const stream = join(bad, 'greeter-docs-gap', '1', 'events.ndjson');
    writeFileSync(stream, `${readFileSync(stream, 'utf8')}{"v":1,"type":"nope"\n`);
    const lines = readFileSync(stream, 'utf8').trimEnd().split('\n').length;
    const r = await qs(['report', 'bad']);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(new RegExp(`^qs: bad/greeter-docs-gap/1/events\\.ndjson:${lines}: `));
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(existsSync(join(work, 'bad.html'))).toBe(false);

    const io = memoryIo({ cwd: work });
    writeFileSync(join(work, 'not-results.json'), '{"tasks": []}');
    writeFileSync(join(work, 'broken.json'), '{"schema_version": "2.0", "tasks": [{"task": "t", "attempts": 1, "passes": 2, "evidential_runs": 1}]}');
    writeFileSync(join(work, 'cut.json'), '{\n  "schema_version": "2.0",\n  "tasks": [,]\n}\n');
    mkdirSync(join(work, 'empty'));
    await expect(cli(['report', 'cut.json'], io)).rejects.toThrow(/^cut\.json:3:13: not JSON \(/);
    writeFileSync(join(work, 'deep.json'), `${'['.repeat(200_000)}x`);
    await expect(cli(['report', 'deep.json'], io)).rejects.toThrow(/^deep\.json(:1:200001)?: not JSON/);
    await expect(cli(['report', 'no-such'], io)).rejects.toThrow(new InputError('qs report: no-such: no such file or folder'));
    await expect(cli(['report', 'not-results.json'], io)).rejects.toThrow('not-results.json: schema_version: missing');
    await expect(cli(['report', 'broken.json'], io)).rejects.toThrow('broken.json: tasks[0]: passes <= evidential_runs <= attempts does not hold');
    // A run that is no run is a broken document, never read as fewer runs.
    writeFileSync(join(work, 'junk-runs.json'), JSON.stringify({ schema_version: '2.0', tasks: [{ task: 't', attempts: 2, passes: 1, evidential_runs: 1, runs: [{ attempt: 1, classification: 'passed' }, null] }] }));
    await expect(cli(['report', 'junk-runs.json'], io)).rejects.toThrow('junk-runs.json: tasks[0].runs[1]: expected an object');
    await expect(cli(['report', 'empty'], io)).rejects.toThrow('qs report: empty: no results.json and no saved runs');
    await expect(cli(['report', 'sweep', '--out', 'sweep'], io)).rejects.toThrow('qs report: --out sweep: is the results it reads');
    await expect(cli(['report', 'sweep', '--out', 'empty'], io)).rejects.toThrow('qs report: --out empty: is a folder, not a file');
    await expect(cli(['report', 'sweep', '--out', 'no-such-dir/r.html'], io)).rejects.toThrow('qs report: --out no-such-dir/r.html: cannot write (ENOENT)');
    await expect(cli(['report'], io)).rejects.toThrow(InputError);
  });

  it('folds a folder without its results.json as qs results does: the same refusals, and the page its results.json would give', async () => {
    // Another task's stream copied into a task's folder: qs results refuses to count it as this task's, so does the report.
    const mixed = join(work, 'mixed');
    cpSync(join(work, 'sweep'), mixed, { recursive: true });
    rmSync(join(mixed, 'results.json'));
    mkdirSync(join(mixed, 'greeter-quickstart', '2'));
    cpSync(join(mixed, 'greeter-docs-gap', '1', 'events.ndjson'), join(mixed, 'greeter-quickstart', '2', 'events.ndjson'));
    const refused = await qs(['results', 'mixed']);
    expect(refused.code).toBe(3);
    const r = await qs(['report', 'mixed']);
    expect(r.code).toBe(3);
    expect(r.err).toBe(refused.err);
    expect(existsSync(join(work, 'mixed.html'))).toBe(false);
    // A sweep folder whose attempt is missing: its plan names it, the page from the streams is the page from their results.json.
    const partial = join(work, 'partial');
    cpSync(join(work, 'sweep'), partial, { recursive: true });
    rmSync(join(partial, 'results.json'));
    rmSync(join(partial, 'greeter-docs-gap'), { recursive: true });
    const fromStreams = await qs(['report', 'partial', '--out', 'partial-streams.html']);
    expect(fromStreams.code, fromStreams.err).toBe(0);
    expect((await qs(['results', 'partial', '--write'])).code).toBe(0);
    expect(results('partial').not_run).toEqual([{ task: 'greeter-docs-gap', slug: 'greeter-docs-gap', attempt: 1 }]);
    const fromJson = await qs(['report', 'partial', '--out', 'partial-json.html']);
    expect(fromJson.code, fromJson.err).toBe(0);
    expect(readFileSync(join(work, 'partial-streams.html'), 'utf8')).toBe(readFileSync(join(work, 'partial-json.html'), 'utf8'));
  });

  it('lists the attempts of the plan that no folder holds, as the summary and JUnit do (a shard not merged is not a clean sweep)', async () => {
    const dir = join(work, 'unmerged');
    cpSync(join(work, 'sweep'), dir, { recursive: true });
    rmSync(join(dir, 'results.json'));
    rmSync(join(dir, 'greeter-denied-write'), { recursive: true });
    const r = await qs(['results', 'unmerged', '--junit', 'unmerged.xml', '--summary', 'unmerged.md']);
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out) as Results;
    expect(doc.counts.not_run).toBe(1);
    expect(readFileSync(join(work, 'unmerged.md'), 'utf8')).toContain('- **greeter-denied-write** attempt 1');
    expect(readFileSync(join(work, 'unmerged.xml'), 'utf8')).toContain('<error type="not_run"');
    expect((await qs(['report', 'unmerged'])).code).toBe(0);
    const html = readFileSync(join(work, 'unmerged.html'), 'utf8');
    expect(html).toContain('<li><b>1</b>not run</li>');
    expect(html).toMatch(/<section id="not-run"><h2>Not run <span class="count">1<\/span><\/h2>.*<td data-label="Task">greeter-denied-write<\/td><td data-label="Attempt">1<\/td>/s);
    // The sweep that ran every attempt has neither.
    expect(readFileSync(join(work, 'sweep.html'), 'utf8')).not.toContain('not-run');
  });

  it('refuses an --out that is a file it reads (the folder\'s results.json, a stream), leaving it as it was', async () => {
    const dir = join(work, 'own-files');
    cpSync(join(work, 'model'), dir, { recursive: true });
    const json = readFileSync(join(dir, 'results.json'), 'utf8');
    const stream = join('own-files', 'greeter-quickstart', '1', 'events.ndjson');
    const events = readFileSync(join(work, stream), 'utf8');
    const io = memoryIo({ cwd: work });
    await expect(cli(['report', 'own-files', '--out', 'own-files/results.json'], io)).rejects.toThrow('qs report: --out own-files/results.json: is a file the report reads');
    await expect(cli(['report', 'own-files', '--out', stream], io)).rejects.toThrow(`qs report: --out ${stream}: is a file the report reads`);
    await expect(cli(['report', 'own-files/results.json', '--out', stream], io)).rejects.toThrow(`qs report: --out ${stream}: is a file the report reads`);
    // The same files by another name: a link to the folder, a link to the results.json.
    symlinkSync(dir, join(work, 'own-link'));
    symlinkSync(join(dir, 'results.json'), join(work, 'own-results-link.json'));
    await expect(cli(['report', 'own-files', '--out', 'own-link/results.json'], io)).rejects.toThrow('is a file the report reads');
    await expect(cli(['report', 'own-link', '--out', 'own-results-link.json'], io)).rejects.toThrow('is a file the report reads');
    expect(readFileSync(join(dir, 'results.json'), 'utf8')).toBe(json);
    expect(readFileSync(join(work, stream), 'utf8')).toBe(events);
  });

  it('refuses a stream named by a results.json that is a folder, with its path (exit 3)', async () => {
    const dir = join(work, 'stream-folder');
    mkdirSync(join(dir, 'greeter-quickstart', '1', 'events.ndjson'), { recursive: true });
    writeFileSync(join(dir, 'results.json'), readFileSync(join(work, 'model', 'results.json')));
    await expect(cli(['report', 'stream-folder/results.json'], memoryIo({ cwd: work }))).rejects.toThrow(new InputError('stream-folder/greeter-quickstart/1/events.ndjson: is not a file'));
  });

  it("reads another tool's sparse results.json without crashing: what it lacks is said, not invented", async () => {
    // quickstarted's schema 2.0 fields only: no egress hosts, denials, streams or intervals.
    const doc = {
      schema_version: '2.0',
      interrupted: true,
      generated_at: '2026-01-01T00:00:00Z',
      tasks: [{ task: 'theirs', attempts: 3, passes: 1, evidential_runs: 2, runs: [{ attempt: 1, classification: 'passed' }, { attempt: 2, classification: 'docs_gap', suspect_page: 'javascript:alert(1)', success_check: { exit_code: 1, output: 'nope' } }, { attempt: 3, classification: 'infra_error', suspect_page: 'https://a.test/infra' }, { attempt: 4, classification: 'docs_gap', suspect_page: 'https://a.test/"><script>window.__owned=1</script>' }], suspect_pages: { 'https://a.test/infra': 1 } }],
    };
    writeFileSync(join(work, 'theirs.json'), JSON.stringify(doc));
    const io = memoryIo({ cwd: work });
    expect(await cli(['report', 'theirs.json'], io)).toBe(0);
    const html = readFileSync(join(work, 'theirs.html'), 'utf8');
    expect(html).toContain('95% CI 9%–91%');
    expect(html).toContain('<code>javascript:alert(1)</code>');
    expect(html).toContain('href="https://a.test/&quot;&gt;&lt;script&gt;window.__owned=1&lt;/script&gt;"');
    expect(html).not.toContain('href="javascript:');
    // Where to look first counts docs gaps: the infrastructure error's page is not the docs' fault.
    expect(html).not.toContain('a.test/infra');
    expect(html).toContain('No stream beside the results document');
    expect(html).toContain('<strong>The sweep was interrupted</strong>');
    expect(html).toContain('<li><b>unknown</b>cost</li>');
    // Its runs carry no egress counts, denials, retries or labels: none of them is shown as a zero.
    expect(html).not.toContain('No connection left any sandbox.');
    expect(html).not.toContain('None: no command was refused a path or ran into a limit.');
    expect(html).toContain('<p>Not recorded: no run in this document counts its egress.</p>');
    expect(html).toContain('<p>Not recorded: no run in this document counts its sandbox denials.</p>');
    expect(html).not.toMatch(/data-label="Retries">0</);
    expect(html).toContain('<td data-label="Retries">—</td>');
    // The verdict labels are the prior art's too, so a run without one gets it from its classification.
    expect(html).toContain('<span class="badge pass">PASS</span> passed');
    expect(html).toContain('<span class="badge fail">FAIL</span> docs_gap');
    expect(html).toContain('<span class="badge warn">INCONCLUSIVE</span> infra_error');
  });

  it('lists, per run, the paths the sandbox refused and the limits its commands ran into', async () => {
    const runs = [
      { attempt: 1, classification: 'harness_error', sandbox: { denials: 2, denied_paths: { 'write /etc/x': 2 }, limit_hits: { processes: 2, memory: 1 } } },
      { attempt: 2, classification: 'harness_error', sandbox: { denials: 0, denied_paths: {}, limit_hits: { '<tmp>': 1 } } },
      { attempt: 3, classification: 'passed', sandbox: { denials: 0, denied_paths: {}, limit_hits: {} } },
    ];
    writeFileSync(join(work, 'limits.json'), JSON.stringify({ schema_version: '2.0', tasks: [{ task: 'bounded', attempts: 3, passes: 1, evidential_runs: 1, runs }] }));
    expect(await cli(['report', 'limits.json'], memoryIo({ cwd: work }))).toBe(0);
    const section = /<section id="denials">.*?<\/section>/s.exec(readFileSync(join(work, 'limits.html'), 'utf8'))?.[0] ?? '';
    expect(section).toContain('<h2>Sandbox denials and limits</h2>');
    expect(section).toMatch(/attempt 1<\/a>: <code>write \/etc\/x<\/code> ×2; <span class="warn">limit hit<\/span> <code>processes<\/code> ×2, <code>memory<\/code><\/li>/);
    expect(section).toMatch(/attempt 2<\/a>: <span class="warn">limit hit<\/span> <code>&lt;tmp&gt;<\/code><\/li>/);
    expect(section).not.toContain('attempt 3');
  });

  it("reads a quickstarted --out folder: the agents its tasks name, and each run's transcript from its trace.jsonl", async () => {
    const dir = join(work, 'theirs-out');
    mkdirSync(join(dir, 'toy', 'attempt-1'), { recursive: true });
    // Its layout: TASK/attempt-N/trace.jsonl, a format of its own, beside a results.json with no top-level agents.
    const trace = `${[{ ts: 1, type: 'run_start', task: 'toy', agent: 'replay', backend: 'docker', enforced: true, image: 'python:3.12-slim', attempt: 1 }, { ts: 2, type: 'run_end', stop_reason: 'completed', passed: true, classification: 'passed' }].map((e) => JSON.stringify(e)).join('\n')}\n`;
    writeFileSync(join(dir, 'toy', 'attempt-1', 'trace.jsonl'), trace);
    const run = { task: 'toy', attempt: 1, agent: 'replay', model_reported: '', classification: 'passed', passed: true, evidential: true };
    writeFileSync(join(dir, 'results.json'), JSON.stringify({ schema_version: '2.0', quickstarted_version: '0.6.1', tasks: [{ task: 'toy', agent: 'replay', attempts: 1, passes: 1, evidential_runs: 1, runs: [run] }] }));
    const io = memoryIo({ cwd: work });
    expect(await cli(['report', 'theirs-out'], io)).toBe(0);
    const html = readFileSync(join(work, 'theirs-out.html'), 'utf8');
    expect(html).toContain(' · agents replay · ');
    // Its trace is there, in its own format: the transcript is rendered from it, as qs show does.
    expect(html).toContain(`<p class="muted">From quickstarted's trace <code>toy/attempt-1/trace.jsonl</code>.</p><pre class="out">[    0.0s] task toy (quickstarted trace)  attempt 1`);
    expect(html).toContain('[    1.0s] PASS toy: passed (stop reason completed)');
    expect(html).not.toContain('Its stream is not in the folder');
    expect(html).not.toContain('.:');
    // With one attempt the prior art writes TASK/trace.jsonl; a task name that is not a folder name is never looked up.
    const one = join(work, 'theirs-one');
    mkdirSync(join(one, 'toy'), { recursive: true });
    writeFileSync(join(one, 'toy', 'trace.jsonl'), trace);
    writeFileSync(join(one, 'results.json'), JSON.stringify({ schema_version: '2.0', repeat: 1, tasks: [{ task: 'toy', agent: 'replay', attempts: 1, passes: 1, evidential_runs: 1, runs: [run] }, { task: '../toy', attempts: 1, passes: 1, evidential_runs: 1, runs: [{ ...run, task: '../toy' }] }] }));
    expect(await cli(['report', 'theirs-one'], memoryIo({ cwd: work }))).toBe(0);
    const page = readFileSync(join(work, 'theirs-one.html'), 'utf8');
    expect(page).toContain(`From quickstarted's trace <code>toy/trace.jsonl</code>.`);
    expect(page.match(/From quickstarted/g)).toHaveLength(1);
  });

  it('renders a results document with every field replaced by the wrong type or by markup, without a crash or a tag from it', () => {
    const real = results('sweep');
    // Each run's transcript is every saved stream, its payloads swapped the same way.
    const streams = new Map<string, WireEvent[]>();
    // Only the counts loadResults checks keep their meaning: the page must survive the rest.
    const KEEP = new Set(['attempts', 'passes', 'evidential_runs', 'schema_version']);
    const swap = (v: unknown, leaf: () => unknown, key = ''): unknown => {
      if (KEEP.has(key)) return v;
      if (Array.isArray(v)) return v.length === 0 ? [leaf()] : v.map((x) => swap(x, leaf));
      if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, swap(x, leaf, k)]));
      return leaf();
    };
    const leaves: Array<() => unknown> = [() => '<script>window.__owned=1</script>"\'&', () => -1.5, () => null, () => ({ '<svg onload=x>': '<math>' }), () => ['<xmp>'], () => true, () => Number.MAX_SAFE_INTEGER];
    const ENVELOPE = new Set(['v', 'type', 'ts', 'run_id', 'stage', 'id', 'parent_id']);
    const events = ['greeter-docs-gap', 'greeter-denied-write', 'greeter-quiet-telemetry', 'greeter-hostile-output'].flatMap((slug) =>
      readFileSync(join(work, 'sweep', slug, '1', 'events.ndjson'), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as WireEvent),
    );
    const model = readFileSync(join(work, 'model', 'greeter-quickstart', '1', 'events.ndjson'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as WireEvent);
    for (const leaf of leaves) {
      const hostile = [...events, ...model].map((e) => Object.fromEntries(Object.entries(e).map(([k, x]) => [k, ENVELOPE.has(k) ? x : swap(x, leaf)])) as WireEvent);
      for (const t of real.tasks) for (const r of t.runs) streams.set(r.stream, hostile);
      const html = reportHtml(swap(real, leaf) as Results, streams, { fromFolder: false });
      expect(html.match(/<script/g)).toHaveLength(1);
      expect(html).not.toMatch(/<(svg|math|xmp)\b/);
    }
  });

  it('counts in English: 1 run, 2 retries, 2 shell reaches (never "1 runs", "retrys", "reachs")', () => {
    const run = (retries: number, bypass: number) => ({ attempt: 1, classification: 'passed', retries, docs_bypass_attempts: bypass, egress: { allowed: 0, blocked: bypass, errors: 0, allowed_hosts: {}, blocked_hosts: bypass > 0 ? { 'docs.a.test': bypass } : {}, error_hosts: {} } });
    const one = { schema_version: '2.0', tasks: [{ task: 't', attempts: 1, passes: 1, evidential_runs: 1, runs: [run(2, 2)] }] };
    const text = reportHtml(one as unknown as Results, new Map(), { fromFolder: false }).replace(/<[^>]+>/g, '');
    expect(text).toContain('1 run of 1 task');
    expect(text).toContain('2 retries');
    expect(text).toContain('2 shell reaches for a docs host');
    expect(text).not.toMatch(/\b1 runs\b|retrys|reachs/);
  });

  it('links no page whose address holds a control, bidi or invisible character: it is shown, and the link markup stays whole', () => {
    const pages = ['https://a.test/\x01x', 'https://a.test/\u202e"><img/src=x/onerror=alert(1)>', 'https://a.test/\u200bb', 'https://a.test/\ud800c'];
    const doc = { schema_version: '2.0', tasks: [{ task: 't', attempts: 4, passes: 0, evidential_runs: 4, runs: pages.map((p, i) => ({ attempt: i + 1, classification: 'docs_gap', suspect_page: p })) }] };
    const html = reportHtml(doc as unknown as Results, new Map(), { fromFolder: false });
    // An attribute value never holds markup: a span there would end the href at its class's quote.
    expect(html).not.toMatch(/href="[^"]*</);
    expect(html).not.toContain('href="https://a.test/');
    expect(html).toContain('<code>https://a.test/<span class="ctl">U+0001</span>x</code>');
    expect(html).toContain('<code>https://a.test/<span class="ctl">U+202E</span>&quot;&gt;&lt;img/src=x/onerror=alert(1)&gt;</code>');
  });

  it('escapes text from a stream: markup, quotes, controls, bidi overrides and lone surrogates', () => {
    expect(esc(`<a href="x" onclick='y'>&amp;</a>`)).toBe('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;');
    expect(esc('a\x1b[2Jb\u202ec\ud800d😀')).toBe('a<span class="ctl">U+001B</span>[2Jb<span class="ctl">U+202E</span>c<span class="ctl">U+D800</span>d😀');
    // Every format character, not only the bidi and zero-width ones listed once: U+061C, U+2060–U+2064, tag characters.
    expect(esc('x\u061cy\u2061z\u{e0041}w\u00e9')).toBe('x<span class="ctl">U+061C</span>y<span class="ctl">U+2061</span>z<span class="ctl">U+E0041</span>wé');
    expect(esc('tab\tand\nnewline')).toBe('tab\tand\nnewline');
  });
});

describe.skipIf(!HAS_CHROMIUM)(`qs report in headless Chromium${HAS_CHROMIUM ? '' : ` (skipped: ${CHROMIUM} is not installed here; scripts/install.sh installs the chromium package)`}`, () => {
  /** A fresh context whose every request is routed: anything but file:, data: or about: is recorded and refused. */
  async function open(file: string, options: { javaScriptEnabled: boolean; width: number }): Promise<{ context: BrowserContext; text: string; outside: string[]; page: import('playwright-core').Page }> {
    const context = await (browser as Browser).newContext({ viewport: { width: options.width, height: 800 }, javaScriptEnabled: options.javaScriptEnabled, serviceWorkers: 'block' });
    const outside: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (/^(file|data|about):/.test(url)) return route.continue();
      outside.push(url);
      return route.abort();
    });
    const page = await context.newPage();
    page.on('request', (q) => {
      if (!/^(file|data|about):/.test(q.url())) outside.push(q.url());
    });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    return { context, page, outside, text: await page.locator('body').innerText() };
  }

  /** The sweep's streams with a task renamed to markup (a name qs-validate would refuse, so a hand-edited stream). */
  function hostileFolder(): string {
    const dir = join(work, 'renamed');
    rmSync(dir, { recursive: true, force: true });
    cpSync(join(work, 'sweep'), dir, { recursive: true });
    rmSync(join(dir, 'results.json'));
    // Task folders only: the sweep's plan.ndjson sits beside them.
    for (const slug of readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name)) {
      const file = join(dir, slug, '1', 'events.ndjson');
      writeFileSync(file, readFileSync(file, 'utf8').replaceAll('"greeter-docs-gap"', JSON.stringify(NAME_XSS)));
    }
    return dir;
  }

  it('makes no request, renders the pass rates and the docs gaps, and runs none of the markup from the streams', async () => {
    const dir = hostileFolder();
    const r = await qs(['report', 'renamed', '--out', 'renamed.html']);
    expect(r.code, r.err).toBe(0);
    const { context, page, outside, text } = await open(join(work, 'renamed.html'), { javaScriptEnabled: true, width: 1200 });
    try {
      // Everything opened, so any markup inside a fold would have been parsed and run by now.
      await page.locator('#tools button', { hasText: 'Open every transcript' }).click();
      expect(await page.locator('#transcripts details:not([open])').count()).toBe(0);
      expect(outside).toEqual([]);
      expect(await page.evaluate(() => (window as { __owned?: unknown }).__owned)).toBeUndefined();
      expect(await page.locator('script').count()).toBe(1);
      expect(await page.locator('img, iframe, object, embed').count()).toBe(0);
      const all = await page.locator('body').innerText();
      expect(text).toContain(NAME_XSS);
      expect(all).toContain(OUTPUT_XSS);
      expect(all).toContain(CHECK_XSS);
      expect(await page.locator('b', { hasText: 'bold' }).count()).toBe(0);
      const doc = JSON.parse((await qs(['results', dir])).out) as Results;
      for (const t of doc.tasks) {
        const row = page.locator('#rates tr', { hasText: t.task });
        expect(await row.count()).toBe(1);
        if (t.pass_rate !== null) expect(await row.innerText()).toContain(`${pct(t.pass_rate)} (${t.passes}/${t.evidential_runs})`);
      }
      const gaps = page.locator('#gaps article.gap');
      expect(await gaps.count()).toBe(doc.counts.docs_gap);
      expect(await gaps.filter({ hasText: NAME_XSS }).innerText()).toContain("check failed: nothing the run printed contains 'Hello, Ada!'");
      await page.screenshot({ path: join(SHOTS, 'report-desktop.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });

  it('has every essential with JavaScript off: the rates, the gaps, and transcripts that open natively', async () => {
    const { context, page, outside, text } = await open(join(work, 'sweep.html'), { javaScriptEnabled: false, width: 1200 });
    try {
      expect(outside).toEqual([]);
      expect(await page.locator('#tools button').count()).toBe(0);
      expect(text).toContain('Pass rates');
      expect(text).toMatch(/greeter-quickstart\s+100% \(1\/1\)/);
      expect(text).toContain('Look first at');
      expect(text).toContain("check failed: nothing the run printed contains 'Hello, Ada!'");
      const attempt = page.locator('details.attempt', { hasText: 'docs_gap' }).first();
      expect(await attempt.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
      await attempt.locator('summary').first().click();
      expect(await attempt.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
      expect(await attempt.innerText()).toContain('node greeter/greet.js Ada');
    } finally {
      await context.close();
    }
  });

  it('shows a model run turn by turn, with its retry and cost, on a 375 px phone with nothing wider than the screen', async () => {
    const { context, page, outside } = await open(join(work, 'model', 'results.html'), { javaScriptEnabled: true, width: 375 });
    try {
      expect(outside).toEqual([]);
      await page.locator('#tools button', { hasText: 'Open every transcript' }).click();
      const transcript = await page.locator('#transcripts').innerText();
      expect(transcript).toMatch(/turn 1\b/);
      expect(transcript).toContain(`I will read the quickstart. ${TURN_XSS}`);
      expect(transcript).toContain('read_docs https://docs.greeter.test/quickstart.html');
      expect(transcript).toMatch(/retry of turn \d+ after attempt 1: HTTP 429/);
      expect(transcript).toContain('final answer:\nBuilt the greeter.');
      expect(await page.evaluate(() => (window as { __owned?: unknown }).__owned)).toBeUndefined();
      const doc = results('model');
      const run = doc.tasks[0]?.runs[0];
      expect(run?.retries).toBe(1);
      const runs = await page.locator('#runs').innerText();
      expect(runs).toContain(`$${(run?.estimated_cost_usd as number).toFixed(4)}`);
      expect(await page.locator('#runs tbody tr').first().locator('td[data-label="Retries"]').innerText()).toBe('1');
      const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, body: document.body.scrollWidth, view: window.innerWidth }));
      expect(widths.page).toBeLessThanOrEqual(widths.view);
      expect(widths.body).toBeLessThanOrEqual(widths.view);
      await page.screenshot({ path: join(SHOTS, 'report-phone.png'), fullPage: true });
    } finally {
      await context.close();
    }
    // The sweep's page too, every fold open, at the same width.
    const sweep = await open(join(work, 'sweep.html'), { javaScriptEnabled: true, width: 375 });
    try {
      await sweep.page.locator('#tools button', { hasText: 'Open every transcript' }).click();
      expect(await sweep.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    } finally {
      await sweep.context.close();
    }
  });
});
