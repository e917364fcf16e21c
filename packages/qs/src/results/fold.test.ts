// The fold over saved streams (fixtures/streams), and what is written from it: JUnit, the summary,
// GitHub annotations. Each writer is checked against the fold's counts, never against itself.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { readEvents, type WireEvent } from '@quickloop/events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINAL_TEXT_CHARS, foldResults, foldRun, gapPages, serialiseResults, type AttemptStream, type Results } from './fold.js';
import { readAttempts, resultsFromDir } from './load.js';
import { githubAnnotations, junitXml, summaryMarkdown } from './reports.js';
import { slugify } from '../sweep/sweep.js';

const STREAMS = fileURLToPath(new URL('../../../../fixtures/streams/qs-check/', import.meta.url));
const EVENTS = fileURLToPath(new URL('../../../../fixtures/events/', import.meta.url));

async function stream(name: string): Promise<WireEvent[]> {
  const out: WireEvent[] = [];
  for await (const { event } of readEvents(Readable.from(readFileSync(join(STREAMS, name, 'out.ndjson'))), { source: name })) out.push(event);
  return out;
}
const example = (type: string): WireEvent => JSON.parse(readFileSync(join(EVENTS, `${type}.json`), 'utf8')) as WireEvent;
const withRun = (events: WireEvent[], runId: string): WireEvent[] => events.map((e) => ({ ...e, run_id: runId }));

let s: Record<'passed' | 'docsGap' | 'skipped' | 'refusal' | 'incomplete', WireEvent[]>;
let work: string;
beforeAll(async () => {
  s = {
    passed: await stream('passed'),
    docsGap: await stream('docs-gap'),
    skipped: await stream('skipped'),
    refusal: await stream('agent-refusal'),
    incomplete: await stream('incomplete'),
  };
  work = mkdtempSync(join(tmpdir(), 'qs-fold-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A model agent's run: the refusal fixture with two priced turns (and one unpriced, when asked). */
function modelRun(unpriced: boolean): WireEvent[] {
  const turn = example('agent.turn');
  const turns = [
    { ...turn, id: 't-1', turn: 1 },
    { ...turn, id: 't-2', turn: 2, usd: unpriced ? null : 0.01, usage: { input_tokens: 10, cache_read_tokens: 1100, cache_write_tokens: 0, output_tokens: 5, reasoning_tokens: 3 } },
  ];
  const at = s.refusal.findIndex((e) => e.type === 'agent.completed');
  return withRun([...s.refusal.slice(0, at), ...turns, ...s.refusal.slice(at)], 'run-1');
}

/** A fixture stream renamed as another task's run (one task's folder holds only its own runs). */
const named = (events: WireEvent[], name: string): WireEvent[] => events.map((e) => (e.type === 'task.loaded' ? { ...e, task: { ...(e.task as object), name } } : e)) as WireEvent[];

/** A sweep as qs run saves it: every attempt a run of its own (the fixtures are all run-1). */
function sweep(): AttemptStream[] {
  return [
    { slug: 'hello', attempt: 1, events: s.passed },
    { slug: 'hello', attempt: 2, events: withRun(named(s.docsGap, 'greeter-hello'), 'run-2') },
    { slug: 'hello', attempt: 3, events: withRun(s.passed, 'run-3') },
    { slug: 'missing-step', attempt: 1, events: s.docsGap },
    { slug: 'agent-only', attempt: 1, events: s.skipped },
    { slug: 'refused', attempt: 1, events: modelRun(false) },
    { slug: 'refused', attempt: 2, events: withRun(modelRun(true), 'run-2') },
    { slug: 'cut-short', attempt: 1, events: s.incomplete },
  ];
}

describe('foldRun', () => {
  it('reads the verdict, the pages, the check and the outcome detail of each fixture', () => {
    const gap = foldRun({ slug: 'g', attempt: 1, events: s.docsGap });
    expect(gap).toMatchObject({
      task: 'greeter-missing-step',
      classification: 'docs_gap',
      label: 'FAIL',
      passed: false,
      evidential: true,
      stop_reason: 'command_failed',
      backend: 'bwrap',
      enforced: true,
      docs_pages_read: ['https://docs.greeter.test/quickstart.html'],
      suspect_page: 'https://docs.greeter.test/quickstart.html',
      success_check: { exit_code: 1, output: 'check failed: greeter/greet.js was never written\n' },
      outcome: { ended: 'completed', detail: 'replay step 2 exited 1: node greeter/greet.js Ada', check_reason: 'check failed: greeter/greet.js was never written' },
      stream: 'g/1/events.ndjson',
    });
    expect(foldRun({ slug: 'p', attempt: 1, events: s.passed })).toMatchObject({ classification: 'passed', suspect_page: null, evidential: true });
    expect(foldRun({ slug: 's', attempt: 1, events: s.skipped })).toMatchObject({ classification: 'skipped', label: 'SKIP', evidential: false, success_check: null });
  });

  it("keeps the run's affordance policy, the first probe by kind and each withheld URL once; null for a stream that records none", () => {
    expect(foldRun({ slug: 'p', attempt: 1, events: s.passed }).affordances).toBeNull();
    const at = s.passed.findIndex((e) => e.type === 'agent.completed');
    const withheld = (url: string): WireEvent => ({ ...example('docs.error'), run_id: 'run-1', url, error: `NOT AVAILABLE: ${url}`, from: 'policy', reason: 'affordance_withheld' }) as WireEvent;
    const probe = { ...example('docs.affordances'), run_id: 'run-1', affordances: 'none' } as WireEvent;
    // A second probe (a stream joined from two) does not replace the first; junk kinds are not kept.
    const again = { ...probe, entrypoint: 'https://elsewhere.test/', probes: [{ kind: '__proto__', url: 'x', present: true }, { kind: 'llms.txt', url: 'https://elsewhere.test/llms.txt', present: false }] } as WireEvent;
    const events = [...s.passed.slice(0, at), probe, withheld('https://docs.example.test/llms.txt'), again, withheld('https://docs.example.test/a.md'), withheld('https://docs.example.test/llms.txt'), ...s.passed.slice(at)];
    const run = foldRun({ slug: 'p', attempt: 1, events });
    expect(run.affordances).toEqual({
      policy: 'none',
      entrypoint: 'https://docs.example.test/',
      found: {
        'llms.txt': { url: 'https://docs.example.test/llms.txt', present: true, status: 200, bytes: 812, note: null },
        'llms-full.txt': { url: 'https://docs.example.test/llms-full.txt', present: false, status: 404, bytes: null, note: 'HTTP 404 Not Found: https://docs.example.test/llms-full.txt' },
        md: { url: 'https://docs.example.test/index.html.md', present: false, status: 200, bytes: 1432, note: 'served HTML where a machine-readable file was expected' },
      },
      withheld: ['https://docs.example.test/llms.txt', 'https://docs.example.test/a.md'],
    });
    expect(Object.getPrototypeOf(run.affordances?.found)).toBe(Object.prototype);
    // The policy alone, from agent.started, when nothing was probed or withheld.
    const started = s.passed.map((e) => (e.type === 'agent.started' ? { ...e, affordances: 'all' } : e));
    expect(foldRun({ slug: 'p', attempt: 1, events: started }).affordances).toEqual({ policy: 'all', entrypoint: null, found: null, withheld: [] });
  });

  it("keeps the start of a run's final text in results.json, never half a character: a model that writes megabytes does not make the document unreadable", () => {
    const huge = `${'a'.repeat(FINAL_TEXT_CHARS - 1)}🦀${'b'.repeat(6_000_000)}`;
    const events = modelRun(false).map((e) => (e.type === 'agent.completed' ? { ...e, final_text: huge } : e));
    const text = foldRun({ slug: 'r', attempt: 1, events }).final_text as string;
    expect(text).toBe('a'.repeat(FINAL_TEXT_CHARS - 1));
    const short = modelRun(false).map((e) => (e.type === 'agent.completed' ? { ...e, final_text: 'Done: the server answers.' } : e));
    expect(foldRun({ slug: 'r', attempt: 1, events: short }).final_text).toBe('Done: the server answers.');
  });

  it('a run.failed is harness_error naming the stage; a stream with no terminal event is incomplete', () => {
    expect(foldRun({ slug: 'c', attempt: 1, events: s.incomplete })).toMatchObject({ classification: 'harness_error', label: 'INCONCLUSIVE', outcome: { ended: 'failed', failed_stage: 'qs-agent' } });
    const cut = s.passed.slice(0, 6);
    expect(foldRun({ slug: 'c', attempt: 1, events: cut })).toMatchObject({ classification: 'harness_error', outcome: { ended: 'incomplete' } });
  });

  it('an interrupted run is its own classification, never evidence, and the first terminal wins', () => {
    const interrupted = [...s.passed.slice(0, 6), { ...example('run.interrupted'), run_id: 'run-1' }, s.passed.at(-1) as WireEvent];
    expect(foldRun({ slug: 'i', attempt: 1, events: interrupted })).toMatchObject({ classification: 'interrupted', evidential: false, outcome: { ended: 'interrupted', signal: 'SIGINT' } });
  });

  it('counts egress by host, whatever the host is called', () => {
    const blocked = (host: string): WireEvent => ({ ...example('egress.blocked'), run_id: 'run-1', host });
    const at = s.passed.length - 1;
    const events = [...s.passed.slice(0, at), blocked('__proto__'), blocked('constructor'), blocked('__proto__'), s.passed[at] as WireEvent];
    const run = foldRun({ slug: 'e', attempt: 1, events });
    expect(run.egress.blocked).toBe(3);
    expect(JSON.stringify(run.egress.blocked_hosts)).toBe('{"__proto__":2,"constructor":1}');
  });

  it('counts allowed egress by host and sandbox denials by operation and path', () => {
    const allowed = (host: string): WireEvent => ({ ...example('egress.allowed'), run_id: 'run-1', host });
    const denied = (operation: string, path: string): WireEvent => ({ ...example('sandbox.denied'), run_id: 'run-1', operation, path });
    const at = s.passed.length - 1;
    const events = [...s.passed.slice(0, at), allowed('b.test'), allowed('a.test'), allowed('b.test'), denied('write', '/etc/x'), denied('write', '/etc/x'), denied('read', '/root/.npmrc'), s.passed[at] as WireEvent];
    const run = foldRun({ slug: 'e', attempt: 1, events });
    expect(run.egress.allowed).toBe(3);
    expect(JSON.stringify(run.egress.allowed_hosts)).toBe('{"b.test":2,"a.test":1}');
    expect(run.sandbox.denials).toBe(3);
    expect(JSON.stringify(run.sandbox.denied_paths)).toBe('{"write /etc/x":2,"read /root/.npmrc":1}');
  });

  it('records the image actually used, as quickstarted does: the task\'s under docker, "" under a backend that runs none', () => {
    const loaded = { ...(s.passed[0] as WireEvent & { task: Record<string, unknown> }) };
    loaded.task = { ...loaded.task, image: 'node:22-slim' };
    const withBackend = (backend: string): WireEvent[] => [loaded, ...s.passed.slice(1).map((e) => (e.type === 'sandbox.ready' || e.type === 'run.completed' ? ({ ...e, backend } as WireEvent) : e))];
    expect(foldRun({ slug: 'i', attempt: 1, events: withBackend('docker') }).image).toBe('node:22-slim');
    expect(foldRun({ slug: 'i', attempt: 1, events: withBackend('bwrap') }).image).toBe('');
    expect(foldRun({ slug: 'i', attempt: 1, events: [loaded, { ...example('run.failed'), run_id: loaded.run_id }] }).image).toBeNull();
  });

  it('counts the sandbox limits commands ran into, by limit', () => {
    const hit = (limit: string): WireEvent => ({ ...example('sandbox.limit_hit'), run_id: 'run-1', limit });
    const at = s.passed.length - 1;
    const events = [...s.passed.slice(0, at), hit('processes'), hit('memory'), hit('processes'), s.passed[at] as WireEvent];
    const run = foldRun({ slug: 'l', attempt: 1, events });
    expect(JSON.stringify(run.sandbox.limit_hits)).toBe('{"processes":2,"memory":1}');
    expect(foldRun({ slug: 'l', attempt: 1, events: s.passed }).sandbox.limit_hits).toEqual({});
  });

  it("a replay run's turns are the commands it ran, as quickstarted counts a replay; a model run's are its model turns", () => {
    expect(foldRun({ slug: 'x', attempt: 1, events: s.docsGap }).turns).toBe(2);
    expect(foldRun({ slug: 'x', attempt: 1, events: s.passed }).turns).toBe(1);
    expect(foldRun({ slug: 'x', attempt: 1, events: s.skipped }).turns).toBe(0);
    // The refusal fixture's claude agent made no bash call and reports no turns: still 0, not its commands.
    expect(foldRun({ slug: 'x', attempt: 1, events: s.refusal }).turns).toBe(0);
  });

  it('adds up the turns\' tokens and cost; an unpriced turn makes the run\'s cost unknown', () => {
    const priced = foldRun({ slug: 'r', attempt: 1, events: modelRun(false) });
    expect(priced).toMatchObject({ model_reported: 'claude-sonnet-4-5', tokens: { input: 1210, output: 45, cache_write: 1100, cache_read: 1100 }, reasoning_tokens: 3 });
    expect(priced.estimated_cost_usd).toBeCloseTo(0.01849, 10);
    expect(foldRun({ slug: 'r', attempt: 1, events: modelRun(true) }).estimated_cost_usd).toBeNull();
  });
});

describe('foldResults', () => {
  let r: Results;
  beforeAll(() => {
    r = foldResults(sweep(), '0.0.0-test');
  });

  it('keeps every field of results schema 2.0 under its name', () => {
    for (const k of ['schema_version', 'quickstarted_version', 'generated_at', 'environment', 'repeat', 'duration_seconds', 'interrupted', 'totals', 'tasks']) expect(r).toHaveProperty(k);
    expect(r.schema_version).toBe('2.0');
    for (const k of ['python', 'platform', 'hostname', 'backend']) expect(r.environment).toHaveProperty(k);
    for (const k of ['runs', 'tokens', 'estimated_cost_usd', 'unpriced_models']) expect(r.totals).toHaveProperty(k);
    for (const t of r.tasks) {
      for (const k of ['task', 'agent', 'attempts', 'passes', 'evidential_runs', 'pass_rate', 'discarded', 'skipped', 'models_reported', 'suspect_pages', 'tokens', 'estimated_cost_usd', 'runs']) expect(t).toHaveProperty(k);
      for (const run of t.runs) {
        for (const k of ['task', 'attempt', 'agent', 'model_reported', 'classification', 'passed', 'evidential', 'stop_reason', 'turns', 'duration_seconds', 'backend', 'enforced', 'image', 'docs_pages_read', 'suspect_page', 'docs_bypass_attempts', 'success_check', 'tokens']) expect(run).toHaveProperty(k);
      }
    }
  });

  // The types, not only the names, that quickstarted's own readers and writer use for these fields.
  it("gives the schema 2.0 fields the types quickstarted's readers take them as", () => {
    // Its HTML report prints `quickstarted <quickstarted_version>` in the page's header as it is: null
    // came out as "quickstarted None", and "" as a name with nothing after it. A string that says who wrote the file.
    expect(r.quickstarted_version).toBe('quickloop 0.0.0-test');
    // Its writer stamps the document to the second, `YYYY-MM-DDTHH:MM:SSZ`, and a consumer written
    // against that format parses nothing finer.
    expect(r.generated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const runs = r.tasks.flatMap((t) => t.runs);
    // Its writer gives every run a string model_reported, "" when no model served the run (replay).
    for (const run of runs) expect(typeof run.model_reported).toBe('string');
    expect(runs.filter((run) => run.agent === 'replay').map((run) => run.model_reported)).toEqual(expect.arrayContaining(['']));
    expect(runs.some((run) => run.model_reported === 'claude-sonnet-4-5')).toBe(true);
    // "" is no model: never listed as one served or unpriced.
    for (const t of r.tasks) expect(t.models_reported.concat(t.unpriced_models)).not.toContain('');
    expect(r.models_reported).not.toContain('');
  });

  it('gives pass rates of evidential runs only, the discarded counts, the flaky flag and the invariant', () => {
    const by = Object.fromEntries(r.tasks.map((t) => [t.slug, t]));
    expect(r.tasks.map((t) => t.slug)).toEqual(['agent-only', 'cut-short', 'hello', 'missing-step', 'refused']);
    expect(by.hello).toMatchObject({ attempts: 3, passes: 2, failures: 1, evidential_runs: 3, flaky: true, suspect_pages: { 'https://docs.greeter.test/quickstart.html': 1 } });
    expect(by.hello?.pass_rate).toBeCloseTo(2 / 3, 15);
    expect(by['missing-step']).toMatchObject({ pass_rate: 0, flaky: false });
    expect(by['agent-only']).toMatchObject({ pass_rate: null, skipped: 1, pass_rate_interval: null });
    expect(by.refused).toMatchObject({ pass_rate: null, discarded: { agent_refusal: 2 }, models_reported: ['claude-sonnet-4-5'], unpriced_models: ['claude-sonnet-4-5'] });
    expect(by['cut-short']).toMatchObject({ discarded: { harness_error: 1 } });
    for (const t of r.tasks) expect(t.attempts - t.evidential_runs).toBe(Object.values(t.discarded).reduce((a, b) => a + b, 0) + t.skipped);
    expect(r.counts).toEqual({ passed: 2, docs_gap: 2, inconclusive: 3, skipped: 1, interrupted: 0, not_run: 0 });
    expect(r.totals.runs).toBe(8);
    expect(r.repeat).toBe(3);
    // The unpriced run adds nothing it can know and names its model instead.
    expect(r.totals.estimated_cost_usd).toBeCloseTo(0.01849, 10);
    expect(r.totals.unpriced_models).toEqual(['claude-sonnet-4-5']);
  });

  it('does not depend on the order the attempts finished in', () => {
    const shuffled = sweep().reverse();
    [shuffled[1], shuffled[4]] = [shuffled[4] as AttemptStream, shuffled[1] as AttemptStream];
    expect(serialiseResults(foldResults(shuffled, '0.0.0-test'))).toBe(serialiseResults(r));
  });

  it('rebuilds byte for byte from the streams saved as SLUG/ATTEMPT/events.ndjson', async () => {
    const dir = join(work, 'out');
    for (const a of sweep()) {
      mkdirSync(join(dir, a.slug, String(a.attempt)), { recursive: true });
      writeFileSync(join(dir, a.slug, String(a.attempt), 'events.ndjson'), a.events.map((e) => `${JSON.stringify(e)}\n`).join(''));
    }
    // Things that are not attempts are not read.
    writeFileSync(join(dir, 'results.json'), '{}');
    mkdirSync(join(dir, 'hello', 'notes'));
    expect(serialiseResults(await resultsFromDir(dir, '0.0.0-test'))).toBe(serialiseResults(r));
    writeFileSync(join(dir, 'hello', '2', 'events.ndjson'), `${JSON.stringify(s.passed[0])}\nnot json\n`);
    await expect(readAttempts(dir, 'out')).rejects.toThrow(/^out\/hello\/2\/events\.ndjson:2: not JSON/);
  });

  it('refuses a saved run it would otherwise leave out or count under the wrong task', async () => {
    const write = (dir: string, rel: string, events: WireEvent[]) => {
      mkdirSync(join(dir, rel, '..'), { recursive: true });
      writeFileSync(join(dir, rel), events.map((e) => `${JSON.stringify(e)}\n`).join(''));
    };
    const misnamed = join(work, 'misnamed');
    write(misnamed, 'greeter/1/events.ndjson', s.passed);
    write(misnamed, 'greeter/01/events.ndjson', s.passed);
    await expect(resultsFromDir(misnamed, '0.0.0-test', 'out')).rejects.toThrow('out/greeter/01/events.ndjson: not in an attempt folder (they are numbered 1, 2, …): rename the folder, or move it out of out');
    const mixed = join(work, 'mixed');
    write(mixed, 'greeter/1/events.ndjson', named(s.passed, 'greeter'));
    write(mixed, 'greeter/2/events.ndjson', withRun(named(s.docsGap, 'another-task'), 'run-2'));
    await expect(resultsFromDir(mixed, '0.0.0-test', 'out')).rejects.toThrow('out/greeter/2/events.ndjson: a run of task "another-task", but out/greeter/1/events.ndjson is of "greeter": one folder holds one task\'s runs');
  });
});

/** A strict little XML reader: well-formedness (nesting, quoting, entities) and the tree. */
interface Node {
  name: string;
  attrs: Record<string, string>;
  children: Node[];
  text: string;
}
function parseXml(xml: string): Node {
  expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n')).toBe(true);
  const body = xml.slice(xml.indexOf('?>') + 2);
  // eslint-disable-next-line no-control-regex
  expect(body).not.toMatch(/[\x00-\x08\x0b\x0c\x0e-\x1f]/);
  const root: Node = { name: '#root', attrs: {}, children: [], text: '' };
  const stack = [root];
  const token = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"<]*")*)\s*(\/?)>|([^<]+)/gy;
  let m: RegExpExecArray | null;
  let at = 0;
  while (at < body.length && (m = token.exec(body)) !== null) {
    at = token.lastIndex;
    const top = stack.at(-1) as Node;
    if (m[5] !== undefined) {
      expect(m[5]).not.toMatch(/&(?!(amp|lt|gt|quot|apos);)/);
      top.text += m[5];
      continue;
    }
    const [, close, name, attrText, self] = m as unknown as [string, string, string, string, string];
    if (close) {
      expect(top.name).toBe(name);
      stack.pop();
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const [, k, v] of attrText.matchAll(/([A-Za-z_][\w.-]*)="([^"]*)"/g)) {
      expect(v).not.toMatch(/&(?!(amp|lt|gt|quot|apos);)/);
      attrs[k as string] = v as string;
    }
    const node = { name, attrs, children: [], text: '' };
    top.children.push(node);
    if (!self) stack.push(node);
  }
  expect(at).toBe(body.length);
  expect(stack).toHaveLength(1);
  expect(root.children).toHaveLength(1);
  return root.children[0] as Node;
}

describe('JUnit, the summary and GitHub annotations', () => {
  it('JUnit: a docs gap is a failure, an inconclusive run an error, a skipped run skipped; the counts are the fold\'s', () => {
    const r = foldResults(sweep(), '0.0.0-test');
    const suites = parseXml(junitXml(r));
    expect(suites.name).toBe('testsuites');
    expect(suites.attrs).toMatchObject({ tests: '8', failures: '2', errors: '3', skipped: '1' });
    expect(suites.children.map((c) => c.attrs.name)).toEqual(r.tasks.map((t) => t.task));
    for (const [i, suite] of suites.children.entries()) {
      const t = r.tasks[i] as Results['tasks'][number];
      expect(suite.children).toHaveLength(t.runs.length);
      for (const [j, tc] of suite.children.entries()) {
        const run = t.runs[j] as Results['tasks'][number]['runs'][number];
        const kind = run.classification === 'passed' ? [] : run.classification === 'docs_gap' ? ['failure'] : run.classification === 'skipped' ? ['skipped'] : ['error'];
        expect(tc.children.map((c) => c.name)).toEqual(kind);
        if (kind[0] === 'error') expect(tc.children[0]?.attrs.type).toBe(run.classification);
        if (kind[0] === 'failure') expect(tc.children[0]?.text).toContain('last docs page read: https://docs.greeter.test/quickstart.html');
      }
    }
  });

  it("JUnit names an attempt interrupted before its agent started by the task's agent, like its other attempts", () => {
    const cut = s.passed.findIndex((e) => e.type === 'agent.started');
    const interrupted = [...withRun(s.passed.slice(0, cut), 'run-cut'), { ...example('run.interrupted'), run_id: 'run-cut' }];
    const r = foldResults([{ slug: 'g', attempt: 1, events: s.passed }, { slug: 'g', attempt: 2, events: interrupted }], 'v');
    const agent = r.tasks[0]?.runs[0]?.agent;
    expect(agent).toBeTruthy();
    expect(r.tasks[0]?.runs[1]?.agent).toBeNull();
    const names = parseXml(junitXml(r)).children[0]?.children.map((c) => c.attrs.name);
    expect(names).toEqual([`${agent} attempt 1`, `${agent} attempt 2`]);
  });

  it('stays well-formed XML whatever the check printed (markup, entities, control characters, lone surrogates)', () => {
    const hostile = 'a < b && c > "d" ]]> \x1b[2J \x00 \ud800 \u{1F600} </failure>';
    const gap = s.docsGap.map((e) => (e.type === 'check.completed' ? { ...e, output: hostile, reason: hostile } : e.type === 'task.loaded' ? { ...e, task: { ...(e.task as object), name: 'x"<&>' } } : e));
    const tree = parseXml(junitXml(foldResults([{ slug: 'x', attempt: 1, events: gap }], 'v')));
    const failure = tree.children[0]?.children[0]?.children[0] as Node;
    expect(failure.name).toBe('failure');
    expect(failure.text).toContain('a &lt; b &amp;&amp; c &gt; &quot;d&quot; ]]&gt;');
    expect(failure.text).toContain('\u{1F600}');
    expect(tree.children[0]?.attrs.name).toBe('x&quot;&lt;&amp;&gt;');
  });

  it('the Markdown summary has a row per task with its rate, and escapes table syntax', () => {
    const r = foldResults(sweep(), '0.0.0-test');
    const md = summaryMarkdown(r);
    const rows = md.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Task') && !l.startsWith('| ---'));
    expect(rows).toHaveLength(r.tasks.length);
    expect(md).toContain('| greeter-hello | replay | 67% \\[2/3 evidential of 3 runs\\] (95% CI 21%–94%) | 3/3 | — | yes |');
    expect(md).toContain('8 runs of 5 tasks · 2 passed · 2 docs gap · 3 inconclusive · 1 skipped');
    const piped = s.passed.map((e) => (e.type === 'task.loaded' ? { ...e, task: { ...(e.task as object), name: 'a|b' } } : e));
    expect(summaryMarkdown(foldResults([{ slug: 'p', attempt: 1, events: piped }], 'v'))).toContain('| a\\|b |');
  });

  it('the Markdown summary shows controls and bidi overrides from a stream as U+XXXX (GitHub renders them, so they could disguise a row)', () => {
    const hostile = 'ok\x1b]0;t\x07 \u202eevil\r done';
    const gap = s.docsGap.map((e) => (e.type === 'check.completed' ? { ...e, reason: hostile } : e.type === 'task.loaded' ? { ...e, task: { ...(e.task as object), name: 'n\u202e\x1b' } } : e));
    const md = summaryMarkdown(foldResults([{ slug: 'x', attempt: 1, events: gap }], 'v'));
    expect(md).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/);
    expect(md).toContain('| nU+202EU+001B |');
    expect(md).toContain('okU+001B\\]0;tU+0007 U+202EevilU+000D done');
    const hidden = s.docsGap.map((e) => (e.type === 'check.completed' ? { ...e, reason: 'a\u061cb\u2064c\u{e0067}d' } : e));
    expect(summaryMarkdown(foldResults([{ slug: 'x', attempt: 1, events: hidden }], 'v'))).toContain('aU+061CbU+2064cU+E0067d');
  });

  it('the Markdown summary shows a character reference from a stream as written: GitHub would render it as the character it names', () => {
    const hostile = 'ok &#x202E;lave &#124; &lt;img src=x onerror=alert(1)&gt; &#10;| forged | row |';
    const gap = s.docsGap.map((e) => (e.type === 'check.completed' ? { ...e, reason: hostile } : e.type === 'task.loaded' ? { ...e, task: { ...(e.task as object), name: 'n&#8238;x' } } : e));
    const md = summaryMarkdown(foldResults([{ slug: 'x', attempt: 1, events: gap }], 'v'));
    // Unescaped, `&` starts a reference: every one of them is escaped, so none is decoded.
    expect(md).not.toMatch(/(?<!\\)&/);
    expect(md).toContain('| n\\&#8238;x |');
    expect(md).toContain('ok \\&#x202E;lave \\&#124; \\&lt;img src=x onerror=alert(1)\\&gt; \\&#10;\\| forged \\| row \\|');
  });

  it('the Markdown summary stays within what GitHub takes for a step summary (1 MiB) however many docs gaps, each line clipped', () => {
    // A check's last line can be as long as its output (10 000 characters kept): 300 attempts of them.
    const long = 'x'.repeat(10_000);
    const gap = s.docsGap.map((e) => (e.type === 'check.completed' ? { ...e, reason: long } : e));
    const md = summaryMarkdown(foldResults(Array.from({ length: 300 }, (_, i) => ({ slug: 'x', attempt: i + 1, events: withRun(gap, `run-${i}`) })), 'v'));
    expect(Buffer.byteLength(md)).toBeLessThan(256 * 1024);
    for (const l of md.split('\n')) expect(l.length).toBeLessThan(1000);
    expect(md).toContain('300 runs of 1 task · 0 passed · 300 docs gap');
    expect(md).toMatch(/and 200 more docs gaps \(results\.json, JUnit and the report have each of them\)/);
  });

  it('GitHub annotations: one error per task with a docs gap, newlines and percent signs encoded', () => {
    const tricky = s.docsGap.map((e) => (e.type === 'check.completed' ? { ...e, output: 'first\n100% broken\r\n' } : e));
    const lines = githubAnnotations(foldResults([{ slug: 'g', attempt: 1, events: tricky }, { slug: 'r', attempt: 1, events: modelRun(false) }], 'v'));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(
      '::error file=greeter-missing-step.yaml,title=quickloop docs gap::pass rate 0%25 [0/1 evidential of 1 run] (95%25 CI 0%25–79%25) for greeter-missing-step. 100%25 broken%0ALast documentation page read before failing: https://docs.greeter.test/quickstart.html',
    );
    expect(lines[1]).toMatch(/^::warning file=greeter-refused\.yaml,title=quickloop no evidence::/);
    for (const l of lines) expect(l).not.toMatch(/[\r\n]/);
  });
});

describe('gapPages', () => {
  it("counts the suspect page of docs-gap runs only, most frequent first; without usable runs, the document's own counts", () => {
    const runs = [
      { classification: 'docs_gap', suspect_page: 'https://d/b' },
      { classification: 'docs_gap', suspect_page: 'https://d/a' },
      { classification: 'docs_gap', suspect_page: 'https://d/a' },
      { classification: 'harness_error', suspect_page: 'https://d/refused' },
      { classification: 'interrupted', suspect_page: 'https://d/cut' },
      { classification: 'docs_gap', suspect_page: null },
      { classification: 'passed', suspect_page: 'https://d/passed' },
      null,
      'x',
    ];
    expect(Object.entries(gapPages({ runs, suspect_pages: { 'https://d/refused': 1 } }))).toEqual([['https://d/a', 2], ['https://d/b', 1]]);
    expect(gapPages({ runs: [], suspect_pages: { 'https://d/x': 1, 'https://d/y': 3, bad: 'many' } })).toEqual({ 'https://d/y': 3, 'https://d/x': 1 });
    expect(gapPages({ runs: 'none', suspect_pages: null })).toEqual({});
  });
});

describe('slugify', () => {
  it('makes any task name a single safe folder name, unique in the sweep', () => {
    const taken = new Set<string>();
    const names = ['Greeter Quickstart', 'greeter quickstart', '../../etc/passwd', '.', '..', '', 'ünïcødé', 'a/b\\c', '-x-', 'x'.repeat(300)];
    const slugs = names.map((n) => slugify(n, taken));
    expect(slugs.slice(0, 8)).toEqual(['greeter-quickstart', 'greeter-quickstart-2', 'etc-passwd', 'task', 'task-2', 'task-3', 'n-c-d', 'a-b-c']);
    expect(new Set(slugs).size).toBe(slugs.length);
    for (const s of slugs) {
      expect(s).toMatch(/^[a-z0-9][a-z0-9._-]*$/);
      expect(s.length).toBeLessThanOrEqual(84);
    }
  });
});
