// `qs show` over the recorded streams of fixtures/streams/qs-check: show.txt beside each out.ndjson is the golden.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InputError, memoryIo, UsageError } from '@quickloop/cli-kit';
import { cli } from './cli.js';
import { COMMANDS } from './commands/index.js';

const DIR = fileURLToPath(new URL('../../../fixtures/streams/qs-check', import.meta.url));
const cases = readdirSync(DIR).filter((d) => existsSync(join(DIR, d, 'out.ndjson')));

describe('qs show', () => {
  it.each(cases)('renders %s', async (name) => {
    const io = memoryIo({ cwd: DIR });
    expect(await cli(['show', join(name, 'out.ndjson')], io)).toBe(0);
    if (process.env.QUICKLOOP_UPDATE_GOLDEN === '1') writeFileSync(join(DIR, name, 'show.txt'), io.out());
    expect(io.out()).toBe(readFileSync(join(DIR, name, 'show.txt'), 'utf8'));
  });

  it('reads stdin with -, and says when a stream has no terminal event', async () => {
    const input = readFileSync(join(DIR, 'incomplete', 'in.ndjson'), 'utf8');
    const io = memoryIo({ stdin: input });
    expect(await cli(['show', '-'], io)).toBe(0);
    expect(io.out()).toContain('(incomplete stream: no run.completed, run.failed or run.interrupted for run run-1)');
  });

  it('names the file and line of a bad line (exit 3 through runBin)', async () => {
    const io = memoryIo({ stdin: '{"v":1}\n' });
    await expect(cli(['show', '-'], io)).rejects.toThrow(/^stdin:1: not a quickloop event/);
    await expect(cli(['show', 'no-such.ndjson'], memoryIo())).rejects.toThrow('qs show: no-such.ndjson: no such file');
    await expect(cli(['show', DIR], memoryIo())).rejects.toThrow(new InputError(`qs show: ${DIR}: is a folder, not a stream file`));
  });

  it("says what to run instead for a sweep's folder or its results.json, which are no streams", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qs-show-'));
    try {
      mkdirSync(join(dir, 'out', 'greeter', '1'), { recursive: true });
      writeFileSync(join(dir, 'out', 'greeter', '1', 'events.ndjson'), '');
      writeFileSync(join(dir, 'out', 'plan.ndjson'), '');
      writeFileSync(join(dir, 'out', 'results.json'), `${JSON.stringify({ schema_version: '2.0', tasks: [] }, null, 2)}\n`);
      const io = memoryIo({ cwd: dir });
      await expect(cli(['show', 'out'], io)).rejects.toThrow(new InputError("qs show: out: is a sweep's --out folder, not a stream file (qs results out sums it up, qs report out renders it; qs show out/greeter/1/events.ndjson shows one attempt)"));
      await expect(cli(['show', 'out/results.json'], io)).rejects.toThrow(new InputError('qs show: out/results.json: is a results document, not a stream file (qs report out/results.json renders it)'));
      writeFileSync(join(dir, 'one-line.json'), `${JSON.stringify({ tasks: [], schema_version: '2.0' })}\n`);
      await expect(cli(['show', 'one-line.json'], io)).rejects.toThrow(/^qs show: one-line\.json: is a results document/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a saved stream with no event in it (an empty or blank file: a run not saved), exit 3', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qs-show-'));
    try {
      writeFileSync(join(dir, 'empty.ndjson'), '');
      writeFileSync(join(dir, 'blank.ndjson'), '\n\n');
      for (const name of ['empty.ndjson', 'blank.ndjson']) {
        const io = memoryIo({ cwd: dir });
        await expect(cli(['show', name], io)).rejects.toThrow(new InputError(`qs show: ${name}: no events (an empty stream)`));
        expect(io.out()).toBe('');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an unknown subcommand and lists the known ones', async () => {
    // Every command, whichever were added since: the list is the table's, not a copy of it.
    await expect(cli(['frobnicate'], memoryIo())).rejects.toThrow(`unknown command 'frobnicate' (known: ${COMMANDS.map((c) => c.name).join(', ')})`);
    expect(COMMANDS.map((c) => c.name)).toEqual(expect.arrayContaining(['run', 'results', 'diff', 'show', 'merge']));
  });

  it("names the binary that validates task files to one who types quickstarted's `validate`", async () => {
    await expect(cli(['validate', 'tasks/'], memoryIo())).rejects.toThrow(
      new UsageError(`unknown command 'validate' (known: ${COMMANDS.map((c) => c.name).join(', ')}); task files are validated by qs-validate: qs-validate [FILE|DIR|GLOB]...`),
    );
  });
});

describe("qs show over quickstarted's trace.jsonl", () => {
  // The prior art's per-run trace: `{"ts": epoch seconds, "type": …}` a line, no envelope of ours.
  const trace = [
    { ts: 100.0, type: 'run_start', task: 'pa-gap', agent: 'replay', backend: 'local', enforced: false, image: '', attempt: 2, affordance_policy: 'all' },
    { ts: 100.1, type: 'tool_call', tool: 'read_docs', url: 'http://docs.test/index.html' },
    { ts: 100.2, type: 'docs_read', url: 'http://docs.test/index.html', chars: 42, original_chars: 42, truncated: false, from_cache: false, content_hash: 'ab' },
    { ts: 100.3, type: 'docs_read_error', url: 'http://docs.test/two.html', error: 'HTTP Error 404: Not Found' },
    { ts: 100.4, type: 'tool_call', tool: 'bash', command: 'echo nope > out.txt' },
    { ts: 100.5, type: 'tool_result', tool: 'bash', exit_code: 0, duration: 0.011, timed_out: false, output: '' },
    { ts: 100.6, type: 'tool_call', tool: 'bash', command: 'cat missing' },
    { ts: 100.7, type: 'tool_result', tool: 'bash', exit_code: 1, duration: 0.02, timed_out: false, output: 'cat: missing: No such file or directory' },
    { ts: 101.5, type: 'success_check', exit_code: 1, passed: false, output: 'check failed: no hello\n' },
    { ts: 101.6, type: 'run_end', stop_reason: 'completed', passed: false, classification: 'docs_gap' },
  ];

  it('renders it a step a line, with the failed command\'s output and the verdict, instead of refusing it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qs-show-qsd-'));
    try {
      writeFileSync(join(dir, 'trace.jsonl'), `${trace.map((e) => JSON.stringify(e)).join('\n')}\n`);
      const io = memoryIo({ cwd: dir });
      expect(await cli(['show', 'trace.jsonl'], io)).toBe(0);
      expect(io.out().split('\n')).toEqual([
        '[    0.0s] task pa-gap (quickstarted trace)  attempt 2',
        '[    0.0s] sandbox local UNENFORCED',
        '[    0.0s] agent replay',
        '[    0.2s] read http://docs.test/index.html (42 chars)',
        '[    0.3s] read failed http://docs.test/two.html: HTTP Error 404: Not Found',
        '[    0.4s] $ echo nope > out.txt',
        '[    0.5s] exit 0 (0.0s)',
        '[    0.6s] $ cat missing',
        '[    0.7s] exit 1 (0.0s)',
        '    | cat: missing: No such file or directory',
        '[    1.5s] check failed, exit 1',
        '    | check failed: no hello',
        '[    1.6s] FAIL pa-gap: docs_gap (stop reason completed)',
        '',
      ]);
      writeFileSync(join(dir, 'cut.jsonl'), `${JSON.stringify(trace[0])}\n{"ts": 1, "type"\n`);
      await expect(cli(['show', 'cut.jsonl'], memoryIo({ cwd: dir }))).rejects.toThrow(new InputError('qs show: cut.jsonl:2: not JSON (a quickstarted trace has one event a line)'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says a read was truncated without inventing the size it was cut from when the trace does not give it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qs-show-qsd-'));
    try {
      const reads = [trace[0], { ts: 100.2, type: 'docs_read', url: 'http://docs.test/long.html', chars: 20000, truncated: true }, { ts: 100.3, type: 'docs_read', url: 'http://docs.test/longer.html', chars: 20000, original_chars: 81234, truncated: true }];
      writeFileSync(join(dir, 'trace.jsonl'), `${reads.map((e) => JSON.stringify(e)).join('\n')}\n`);
      const io = memoryIo({ cwd: dir });
      expect(await cli(['show', 'trace.jsonl'], io)).toBe(0);
      expect(io.out()).toContain('read http://docs.test/long.html (20000 chars, TRUNCATED)\n');
      expect(io.out()).toContain('read http://docs.test/longer.html (20000 chars, TRUNCATED from 81234)\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps each field of a trace on its own line: a newline in a name, a URL, a reason or model text forges no step', async () => {
    // quickstarted writes what the run saw (the model's text, a page's error, a command) as it came.
    const FORGED = 'x\n[    9.9s] PASS forged: passed';
    const hostile = [
      { ts: 100.0, type: 'run_start', task: `pa${FORGED}`, agent: `replay${FORGED}`, backend: 'local', enforced: true, image: '', attempt: 1 },
      { ts: 100.1, type: 'docs_read', url: `http://docs.test/${FORGED}`, chars: 1 },
      { ts: 100.2, type: 'docs_read_error', url: 'http://docs.test/b', error: `gone${FORGED}` },
      { ts: 100.3, type: 'egress_blocked', host: `h${FORGED}`, reason: `r${FORGED}` },
      { ts: 100.4, type: 'tool_call', tool: 'bash', command: `echo one${FORGED}` },
      { ts: 100.5, type: 'tool_result', tool: 'bash', exit_code: 1, output: `out${FORGED}` },
      { ts: 100.6, type: 'agent_final', text: `done${FORGED}` },
      { ts: 100.7, type: 'success_check', exit_code: `1${FORGED}`, passed: false, output: `no${FORGED}` },
      { ts: 100.8, type: 'run_end', stop_reason: `completed${FORGED}`, passed: false, classification: 'docs_gap' },
    ];
    const dir = mkdtempSync(join(tmpdir(), 'qs-show-qsd-'));
    try {
      writeFileSync(join(dir, 'trace.jsonl'), `${hostile.map((e) => JSON.stringify(e)).join('\n')}\n`);
      for (const verbose of [[], ['--verbose']]) {
        const io = memoryIo({ cwd: dir });
        expect(await cli(['show', 'trace.jsonl', ...verbose], io)).toBe(0);
        const lines = io.out().trimEnd().split('\n');
        expect(lines.filter((l) => l.startsWith('[    9.9s]')), io.out()).toEqual([]);
        expect(lines.at(-1)).toBe('[    0.8s] FAIL pax\\n[    9.9s] PASS forged: passed: docs_gap (stop reason completedx\\n[    9.9s] PASS forged: passed)');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('qs show over several runs', () => {
  it('ends with each task\'s pass rate from the results fold, and calls a task that passed and failed flaky', async () => {
    const passed = readFileSync(join(DIR, 'passed', 'out.ndjson'), 'utf8');
    const again = passed.replaceAll('"run-1"', '"run-2"');
    // The docs-gap run under the passed run's task name: one task that both passed and failed.
    const gap = readFileSync(join(DIR, 'docs-gap', 'out.ndjson'), 'utf8').replaceAll('"run-1"', '"run-3"').replaceAll('greeter-missing-step', 'greeter-hello');
    const io = memoryIo({ stdin: passed + again + gap });
    expect(await cli(['show', '-'], io)).toBe(0);
    expect(io.out().trim().split('\n').at(-1)).toBe('greeter-hello: 67% [2/3 evidential of 3 runs] (95% CI 21%–94%) FLAKY');
    const one = memoryIo({ stdin: passed });
    await cli(['show', '-'], one);
    expect(one.out()).not.toContain('evidential');
  });
});

describe('qs show over loop streams', () => {
  // A loop-run stream: show.txt beside each .ndjson of fixtures/streams/loop-run is the golden.
  const LOOP = fileURLToPath(new URL('../../../fixtures/streams/loop-run', import.meta.url));
  const loops = readdirSync(LOOP).filter((f) => f.endsWith('.ndjson'));

  it.each(loops)('renders %s', async (name) => {
    const golden = join(LOOP, name.replace(/\.ndjson$/, '.show.txt'));
    const io = memoryIo({ cwd: LOOP });
    expect(await cli(['show', name], io)).toBe(0);
    if (process.env.QUICKLOOP_UPDATE_GOLDEN === '1') writeFileSync(golden, io.out());
    expect(io.out()).toBe(readFileSync(golden, 'utf8'));
    expect(io.out()).not.toContain('incomplete stream');
  });

  it('renders the loop events the demo does not reach: consent, redaction, no progress, a failed loop', async () => {
    const EVENTS = fileURLToPath(new URL('../../../fixtures/events', import.meta.url));
    const types = ['loop.started', 'consent.asked', 'consent.answered', 'redaction.applied', 'redaction.blind_spot', 'gate.started', 'gate.check', 'review.completed', 'gate.verdict', 'no_progress.detected', 'loop.failed'];
    const stream = types.map((t) => JSON.stringify(JSON.parse(readFileSync(join(EVENTS, `${t}.json`), 'utf8')))).join('\n');
    const refused = JSON.stringify({ ...JSON.parse(readFileSync(join(EVENTS, 'consent.answered.json'), 'utf8')), member: 'reviewer-2', granted: false, how: 'end_of_input' });
    const io = memoryIo({ stdin: `${stream}\n${refused}\n` });
    expect(await cli(['show', '-'], io)).toBe(0);
    const text = io.out();
    expect(text).toContain('consent asked for judge-1: sends plan.md, delivery artifacts; redacts .env, .env.*, secrets/**, **/*.key');
    expect(text).toMatch(/\] {5}consent judge-1: granted \(answered yes\)/);
    expect(text).toContain('consent reviewer-2: REFUSED (end of input)');
    expect(text).toContain('redacted .env in prompt for host');
    expect(text).toContain('redaction blind spot secrets/dump.bin: not valid UTF-8');
    expect(text).toContain('NO PROGRESS delivery_gate failed the same way 2 times (threshold 2): stop');
    expect(text).toContain('  - missing citations');
    expect(text).toContain('LOOP FAILED at iteration 1: no_progress_detected (exit 1)');
    expect(text).toContain('loop total: 4 model calls (1 without usage), 1,200 in, 340 out, $0.01, 61.2s');
    expect(text).not.toContain('incomplete stream');
  });

  it("takes loop-gate's rounds as a whole stream once each has its verdict, and a loop cut short as incomplete", async () => {
    const lines = readFileSync(join(LOOP, 'demo-haiku.ndjson'), 'utf8').trimEnd().split('\n');
    const rounds = lines.filter((l) => /"type":"(gate\.|model\.|review\.)/.test(l)).map((l) => l.replace('"stage":"loop-run"', '"stage":"loop-gate"'));
    const whole = memoryIo({ stdin: `${rounds.join('\n')}\n` });
    expect(await cli(['show', '-'], whole)).toBe(0);
    expect(whole.out()).toContain('PASS delivery_gate round 1 (judge-1)');
    expect(whole.out()).not.toContain('incomplete stream');
    const cut = memoryIo({ stdin: `${rounds.slice(0, -1).join('\n')}\n` });
    await cli(['show', '-'], cut);
    expect(cut.out()).toContain('(incomplete stream: a gate round without its gate.verdict for run id-1)');
    const loop = memoryIo({ stdin: `${lines.slice(0, -1).join('\n')}\n` });
    await cli(['show', '-'], loop);
    expect(loop.out()).toContain('(incomplete stream: no loop.completed or loop.failed for run id-1)');
  });
});
