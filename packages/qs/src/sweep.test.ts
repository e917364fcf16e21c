// `qs run` as a sweep, through the real binary, real pipelines and the real (bwrap) sandbox:
// --repeat, --workers, --out streamed per attempt, results.json and its rebuild, JUnit, the summary,
// GitHub's annotations and step summary, exit codes, and Ctrl-C in the middle of a sweep.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { memoryIo } from '@quickloop/cli-kit';
import { createProgress } from './sweep/progress.js';
import { loadTasks, sweep } from './sweep/sweep.js';
import { QS, qsEnv, runQs } from './testing/qs-bin.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAP = ['--docs-map', `https://docs.greeter.test/=${join(ROOT, 'fixtures', 'docs-site')}`];
const EXAMPLE = join(ROOT, 'fixtures', 'examples', 'greeter.yaml');
const pipeline = (name: string): string => join(ROOT, 'fixtures', 'pipeline', name);

type Ev = Record<string, unknown> & { type: string; run_id: string; ts: string };

/** Calls `each` with every event on `stdout`, as its lines complete. */
function eachEvent(stdout: Readable, each: (e: Ev) => void): void {
  let buffered = '';
  stdout.on('data', (c: Buffer) => {
    buffered += c.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const l of parts) each(JSON.parse(l) as Ev);
  });
}
const env = qsEnv;

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'qs-sweep-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A task (written in `work`) whose one command sleeps a random time: the marker finds its process. */
function slowTask(name: string): { slow: string; marker: string } {
  const marker = `${40 + Math.floor(Math.random() * 50)}.${Math.floor(Math.random() * 900) + 100}`;
  const slow = join(work, `${name}.yaml`);
  writeFileSync(slow, `name: ${name}\ngoal: Wait a while.\ndocs:\n  path:\n    - https://docs.greeter.test/install.html\nreplay:\n  - sleep ${marker}\nsuccess:\n  script: test -d /\n`);
  return { slow, marker };
}

const qs = (args: string[], extra: Record<string, string> = {}) => runQs(args, work, extra);
const lines = (text: string): Ev[] =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Ev);
const TERMINAL = new Set(['run.completed', 'run.failed', 'run.interrupted']);

/** Every attempt under an --out folder: `slug/attempt` -> its events. */
function saved(dir: string): Map<string, Ev[]> {
  const m = new Map<string, Ev[]>();
  for (const slug of readdirSync(dir).sort()) {
    if (slug.endsWith('.json') || slug.endsWith('.ndjson')) continue;
    for (const a of readdirSync(join(dir, slug)).sort()) m.set(`${slug}/${a}`, lines(readFileSync(join(dir, slug, a, 'events.ndjson'), 'utf8')));
  }
  return m;
}

describe('qs run: a sweep', () => {
  it('3 tasks x 2 attempts on 2 workers: one stream per attempt, and results.json, JUnit and the summaries agree with them', async () => {
    const out = join(work, 'sweep');
    const step = join(work, 'step-summary.md');
    writeFileSync(step, '# earlier step\n');
    const r = await qs(
      ['run', EXAMPLE, pipeline('docs-gap.yaml'), pipeline('skipped.yaml'), '--repeat', '2', '--workers', '2', '--out', out, '--junit', join(work, 'junit.xml'), '--summary', join(work, 'summary.md'), ...MAP],
      { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: step },
    );
    expect(r.code, r.err).toBe(1);
    const attempts = saved(out);
    expect([...attempts.keys()]).toEqual(['greeter-agent-only/1', 'greeter-agent-only/2', 'greeter-docs-gap/1', 'greeter-docs-gap/2', 'greeter-quickstart/1', 'greeter-quickstart/2']);
    const runIds = new Set<string>();
    const roots = new Set<string>();
    for (const [key, events] of attempts) {
      // One run per attempt, first task.loaded, ending with its one terminal event.
      expect(new Set(events.map((e) => e.run_id)).size, key).toBe(1);
      runIds.add(events[0]?.run_id as string);
      expect(events[0]?.type).toBe('task.loaded');
      expect(events.filter((e) => TERMINAL.has(e.type))).toHaveLength(1);
      const root = events.find((e) => e.type === 'sandbox.ready')?.root as string;
      roots.add(root);
      expect(existsSync(root)).toBe(false);
    }
    expect(runIds.size).toBe(6);
    // Each attempt had its own sandbox.
    expect(roots.size).toBe(6);
    // stdout is the same events, nothing else.
    expect(lines(r.out).map((e) => JSON.stringify(e)).sort()).toEqual([...attempts.values()].flat().map((e) => JSON.stringify(e)).sort());
    // Two attempts were in flight at once: the later start came before the earlier end.
    const spans = [...attempts.values()].map((ev) => [Date.parse(ev[0]?.ts as string), Math.max(...ev.map((e) => Date.parse(e.ts)))] as const);
    expect(spans.some(([s1, e1], i) => spans.some(([s2], j) => i !== j && s2 >= s1 && s2 < e1))).toBe(true);

    const resultsText = readFileSync(join(out, 'results.json'), 'utf8');
    const rebuilt = spawnSync(process.execPath, [QS, 'results', out], { env: env(), encoding: 'utf8' });
    expect(rebuilt.status).toBe(0);
    expect(rebuilt.stdout).toBe(resultsText);
    const results = JSON.parse(resultsText) as { tasks: Array<{ task: string; attempts: number; passes: number; pass_rate: number | null; skipped: number; runs: Array<{ classification: string; run_id: string }> }>; counts: Record<string, number> };
    const verdicts = [...attempts.values()].map((ev) => [ev[0]?.run_id, ev.find((e) => e.type === 'run.completed')?.classification]);
    expect(results.tasks.flatMap((t) => t.runs.map((x) => [x.run_id, x.classification])).sort()).toEqual(verdicts.sort());
    expect(results.tasks.map((t) => [t.task, t.attempts, t.passes, t.pass_rate, t.skipped])).toEqual([
      ['greeter-agent-only', 2, 0, null, 2],
      ['greeter-docs-gap', 2, 0, 0, 0],
      ['greeter-quickstart', 2, 2, 1, 0],
    ]);

    // Beside each stream, the same run in quickstarted's trace format, for the prior art's show and report.
    for (const [key, events] of attempts) {
      const trace = lines(readFileSync(join(out, key, 'trace.jsonl'), 'utf8')) as unknown as Array<Record<string, unknown>>;
      expect(trace.every((e) => typeof e.ts === 'number' && typeof e.type === 'string' && !('run_id' in e)), key).toBe(true);
      expect(trace[0], key).toMatchObject({ type: 'run_start', task: key.split('/')[0], attempt: Number(key.split('/')[1]), backend: 'bwrap', enforced: true });
      const end = events.find((e) => e.type === 'run.completed');
      expect(trace.at(-1), key).toEqual({ ts: Date.parse(end?.ts as string) / 1000, type: 'run_end', stop_reason: end?.stop_reason, passed: end?.classification === 'passed', classification: end?.classification });
      const commands = events.filter((e) => e.type === 'tool.call' && e.tool === 'bash').map((e) => e.command);
      expect(trace.filter((e) => e.type === 'tool_call' && e.tool === 'bash').map((e) => e.command), key).toEqual(commands);
      expect(trace.filter((e) => e.type === 'tool_result').length, key).toBe(commands.length);
      expect(trace.filter((e) => e.type === 'success_check').length, key).toBe(events.some((e) => e.type === 'check.completed') ? 1 : 0);
    }
    const shown = spawnSync(process.execPath, [QS, 'show', join(out, 'greeter-docs-gap', '1', 'trace.jsonl')], { env: env(), encoding: 'utf8' });
    expect(shown.status, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/FAIL greeter-docs-gap: docs_gap \(stop reason command_failed\)/);

    const junit = readFileSync(join(work, 'junit.xml'), 'utf8');
    expect(junit).toContain('<testsuites name="quickloop" tests="6" failures="2" errors="0" skipped="2"');
    expect(junit.match(/<testcase /g)).toHaveLength(6);
    expect(junit.match(/<failure type="docs_gap"/g)).toHaveLength(2);
    const summary = readFileSync(join(work, 'summary.md'), 'utf8');
    expect(summary).toContain('6 runs of 3 tasks · 2 passed · 2 docs gap · 0 inconclusive · 2 skipped');
    expect(readFileSync(step, 'utf8')).toBe(`# earlier step\n${summary}`);
    const annotations = r.err.split('\n').filter((l) => l.startsWith('::'));
    expect(annotations).toHaveLength(1);
    expect(annotations[0]).toMatch(/^::error file=.*docs-gap\.yaml,title=quickloop docs gap::pass rate 0%25 \[0\/2 evidential of 2 runs\]/);
    // Progress off a terminal: stamped lines, one start and one verdict per attempt, no escapes.
    expect(r.err).toMatch(/^\[ {3}\d+s\] greeter-quickstart#1 started$/m);
    expect(r.err.match(/^\[ *\d+s\] greeter-quickstart#\d PASS passed/gm)).toHaveLength(2);
    expect(r.err.match(/^\[ *\d+s\] greeter-docs-gap#\d FAIL docs_gap/gm)).toHaveLength(2);
    expect(r.err).toContain('greeter-quickstart: 100% [2/2 evidential of 2 runs]');
    expect(r.err).not.toContain('\x1b');
  });

  it('two attempts of one task at once each serve on the task\'s QS_PORT in their own sandbox, and both pass', async () => {
    const r = await qs(['run', EXAMPLE, '--repeat', '2', '--workers', '2', '-q', ...MAP]);
    expect(r.code, r.err).toBe(0);
    const events = lines(r.out);
    const checks = events.filter((e) => e.type === 'check.started');
    expect(checks).toHaveLength(2);
    expect(new Set(checks.map((e) => e.port)).size).toBe(1);
    expect(events.filter((e) => e.type === 'run.completed').map((e) => e.classification)).toEqual(['passed', 'passed']);
    // Quiet: the stages say nothing; the sweep still gives each verdict and the pass rate.
    expect(r.err).not.toContain('qs-sandbox:');
    expect(r.err).toContain('greeter-quickstart: 100% [2/2 evidential of 2 runs]');
  });

  it('Ctrl-C mid-sweep: finished attempts are kept whole, the running one is recorded as interrupted, exit 130', async () => {
    const { slow, marker } = slowTask('slow');
    const out = join(work, 'interrupted');
    const child = spawn(process.execPath, [QS, 'run', EXAMPLE, slow, '--repeat', '2', '--workers', '2', '--out', out, ...MAP], { cwd: work, env: env(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    let passed = false;
    let sleeping: string | null = null;
    let sent = false;
    eachEvent(child.stdout, (e) => {
      if (e.type === 'run.completed' && e.task === 'greeter-quickstart') passed = true;
      if (e.type === 'tool.call' && e.command === `sleep ${marker}`) sleeping ??= e.run_id;
      if (passed && sleeping !== null && !sent) {
        sent = true;
        // What a terminal does on Ctrl-C: SIGINT to the foreground group (the stages have their own).
        process.kill(-(child.pid as number), 'SIGINT');
      }
    });
    // Only a hang gets here (an interrupted sweep ends in seconds): say what was running, not just "timed out".
    let hung = '';
    const watchdog = setInterval(() => {
      if (!sent || hung) return;
      hung = spawnSync('ps', ['-eo', 'pid,pgid,stat,etime,args', '--forest'], { encoding: 'utf8' }).stdout.split('\n').filter((l) => /qs-|qs\.js|sleep|bwrap/.test(l)).join('\n');
      process.kill(-(child.pid as number), 'SIGKILL');
    }, 60_000);
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    clearInterval(watchdog);
    expect(hung, err).toBe('');
    expect(sent, err).toBe(true);
    expect(code, err).toBe(130);
    const attempts = saved(out);
    const byRun = new Map([...attempts.values()].map((ev) => [ev[0]?.run_id as string, ev]));
    expect([...attempts].some(([k, ev]) => k.startsWith('greeter-quickstart/') && ev.find((e) => e.type === 'run.completed')?.classification === 'passed'), err).toBe(true);
    const slowRun = byRun.get(sleeping as unknown as string);
    expect(slowRun?.at(-1)).toMatchObject({ type: 'run.interrupted' });
    // qs-agent ended its run itself before the stream closed.
    expect(slowRun?.find((e) => e.type === 'agent.completed')).toMatchObject({ stop_reason: 'interrupted' });
    for (const [key, events] of attempts) {
      expect(events.filter((e) => TERMINAL.has(e.type)), key).toHaveLength(1);
      expect(['run.completed', 'run.interrupted']).toContain(events.find((e) => TERMINAL.has(e.type))?.type);
      expect(existsSync(events.find((e) => e.type === 'sandbox.ready')?.root as string)).toBe(false);
    }
    // Nothing queued started after the Ctrl-C: what qs says it recorded is what is on disk.
    expect(err).toContain(`qs run: interrupted: ${attempts.size} of 4 attempts recorded`);
    // The folder says itself that a signal stopped the sweep (a Ctrl-C between two attempts cuts neither).
    expect(JSON.parse(readFileSync(join(out, 'stopped.ndjson'), 'utf8'))).toMatchObject({ type: 'sweep.stopped', signal: 'SIGINT', recorded: attempts.size, assigned: 4 });
    const resultsText = readFileSync(join(out, 'results.json'), 'utf8');
    expect(JSON.parse(resultsText)).toMatchObject({ interrupted: true });
    const rebuilt = spawnSync(process.execPath, [QS, 'results', out], { env: env(), encoding: 'utf8' });
    expect(rebuilt.stdout).toBe(resultsText);
    const left = spawnSync('pgrep', ['-f', `sleep ${marker}`], { encoding: 'utf8' });
    expect(left.stdout.trim()).toBe('');
  });

  /** A sweep of one attempt that sleeps, sent `signals` once its sleep has started; what qs did then. */
  async function signalledSweep(name: string, signals: NodeJS.Signals[]): Promise<{ code: number | null; err: string; sent: boolean; out: string; marker: string }> {
    const { slow, marker } = slowTask(name);
    const out = join(work, `${name}-out`);
    const child = spawn(process.execPath, [QS, 'run', slow, '--out', out, ...MAP], { cwd: work, env: env(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    let sent = false;
    eachEvent(child.stdout, (e) => {
      if (!sent && e.type === 'tool.call' && e.command === `sleep ${marker}`) {
        sent = true;
        for (const signal of signals) process.kill(child.pid as number, signal);
      }
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    return { code, err, sent, out, marker };
  }

  it('Ctrl-C during setup: the run is interrupted during setup, not during an agent that never started, in the stream and in results.json', async () => {
    const marker = `${40 + Math.floor(Math.random() * 50)}.${Math.floor(Math.random() * 900) + 100}`;
    const task = join(work, 'slow-setup.yaml');
    writeFileSync(task, `name: slow-setup\ngoal: Wait a while.\ndocs:\n  path:\n    - https://docs.greeter.test/install.html\nsetup:\n  - sleep ${marker}\nreplay:\n  - echo ok\nsuccess:\n  script: test -d /\n`);
    const out = join(work, 'slow-setup-out');
    const child = spawn(process.execPath, [QS, 'run', task, '--out', out, ...MAP], { cwd: work, env: env(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    let sent = false;
    eachEvent(child.stdout, (e) => {
      if (!sent && e.type === 'setup.started') {
        sent = true;
        process.kill(-(child.pid as number), 'SIGINT');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    expect(sent, err).toBe(true);
    expect(code, err).toBe(130);
    const [events] = [...saved(out).values()];
    expect(events?.find((e) => e.type === 'agent.started'), err).toBeUndefined();
    expect(events?.at(-1), err).toMatchObject({ type: 'run.interrupted', phase: 'setup' });
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { tasks: { runs: { outcome: { detail: string } }[] }[] };
    expect(results.tasks[0]?.runs[0]?.outcome.detail).toMatch(/^interrupted \(\w+\) during setup$/);
  });

  it('a closed terminal (SIGHUP) mid-sweep ends it as Ctrl-C does: the stream recorded as interrupted, its sandbox removed, results.json written, exit 130', async () => {
    const { code, err, sent, out, marker } = await signalledSweep('slow-hup', ['SIGHUP']);
    expect(sent, err).toBe(true);
    expect(code, err).toBe(130);
    const [events] = [...saved(out).values()];
    expect(events?.at(-1), err).toMatchObject({ type: 'run.interrupted' });
    expect(existsSync(events?.find((e) => e.type === 'sandbox.ready')?.root as string)).toBe(false);
    expect(JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'))).toMatchObject({ interrupted: true });
    expect(spawnSync('pgrep', ['-f', `sleep ${marker}`], { encoding: 'utf8' }).stdout.trim()).toBe('');
  });

  it('a second signal ends qs at once, and the attempt it cut short still ends its saved stream, as interrupted', async () => {
    // Two different signals, so the kernel cannot merge them into one.
    const { code, err, sent, out } = await signalledSweep('slow-twice', ['SIGINT', 'SIGTERM']);
    expect(sent, err).toBe(true);
    expect(code, err).toBe(130);
    const [events] = [...saved(out).values()];
    expect(events?.filter((e) => TERMINAL.has(e.type)), err).toHaveLength(1);
    // Whichever of the two the process took first: two signals sent at once may reach two of Node's
    // threads, and then their order is the scheduler's.
    expect(events?.at(-1), err).toMatchObject({ type: 'run.interrupted', stage: 'qs', signal: expect.stringMatching(/^SIG(INT|TERM)$/) });
  });

  it('a stage that refuses its flags in an attempt: the run fails with its message, and the sandbox qs-sandbox made is removed', async () => {
    // qs run checks every flag it passes on before anything runs (above), so the stages are given one
    // of their own here: the refusal qs run cannot foresee (a --docs-map folder removed mid-sweep).
    const io = memoryIo({ cwd: work, env: env() });
    const loaded = await loadTasks([EXAMPLE, '--no-config', '-q'], io, () => undefined);
    const told: string[] = [];
    const progress = createProgress({ stream: { write: (text: string) => told.push(text) }, colour: false, live: false, quiet: false, total: 1, now: () => 0 });
    const argvOf = { 'qs-sandbox': ['--backend', 'bwrap'], 'qs-agent': [...MAP, '--rate-limit', 'soon'], 'qs-check': [] };
    const outcome = await sweep({ tasks: loaded.tasks, repeat: 1, workers: 1, argvOf, out: null, progress, label: (slug) => slug }, io, () => 'run-refused');
    expect(outcome.usageErrors).toBe(1);
    const failed = outcome.attempts[0]?.events.at(-1) as Ev;
    expect(failed).toMatchObject({ type: 'run.failed', failed_stage: 'qs-agent' });
    expect(failed.error).toMatch(/^qs-agent refused its input or flags \(--rate-limit soon: expected SECONDS between 0 and 3600\): the pipeline ended without a verdict \(exit codes qs-sandbox 0, qs-agent 3, qs-check \d+\)$/);
    expect(told.join('')).toContain('greeter-quickstart INCONCLUSIVE qs-agent: qs-agent refused its input or flags (--rate-limit soon');
    // Its sandbox.ready never reached the stream (qs-agent refused before passing it on): qs-sandbox said where.
    const root = /ready \(bwrap\) (\/\S+)\/workspace$/m.exec(told.join(''))?.[1];
    expect(root, told.join('')).toMatch(/\/quickloop-[^/]+$/);
    expect(existsSync(root as string)).toBe(false);
  });

  it('--strict-inconclusive turns a sweep with an inconclusive run from 0 into 2; --keep-sandbox keeps each workspace', async () => {
    const plain = await qs(['run', EXAMPLE, pipeline('setup-failed.yaml'), '--workers', '2', ...MAP]);
    expect(plain.code, plain.err).toBe(0);
    const strict = await qs(['run', EXAMPLE, pipeline('setup-failed.yaml'), '--workers', '2', '--strict-inconclusive', '--keep-sandbox', ...MAP]);
    expect(strict.code, strict.err).toBe(2);
    const kept = lines(strict.out)
      .filter((e) => e.type === 'run.completed')
      .map((e) => e.workspace_kept as string | null);
    expect(kept).toHaveLength(2);
    for (const w of kept) {
      // workspace_kept names the sandbox's layout root (workspace, home and tmp beside each other).
      expect(w).toMatch(/^\/.+\/quickloop-[^/]+$/);
      expect(existsSync(join(w as string, 'workspace'))).toBe(true);
      rmSync(w as string, { recursive: true, force: true });
    }
  });

  it("names the sweep's agent for a run whose setup failed before its agent started: in results.json (quickstarted's readers take a string), JUnit and the summary", async () => {
    const out = join(work, 'setup-agent');
    const r = await qs(['run', pipeline('setup-failed.yaml'), '--out', out, '--junit', join(work, 'setup-agent.xml'), '--summary', join(work, 'setup-agent.md'), ...MAP]);
    expect(r.code, r.err).toBe(2);
    const task = (JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { tasks: Array<{ agent: unknown; agents: unknown; runs: Array<{ agent: unknown; classification: string }> }> }).tasks[0]!;
    expect(task.runs.map((x) => [x.classification, x.agent])).toEqual([['harness_error', 'replay']]);
    expect([task.agent, task.agents]).toEqual(['replay', ['replay']]);
    expect(readFileSync(join(work, 'setup-agent.xml'), 'utf8')).toContain('name="replay attempt 1"');
    expect(readFileSync(join(work, 'setup-agent.md'), 'utf8')).toMatch(/^\| greeter-setup-failed \| replay \| no evidence/m);
    // Its trace.jsonl too: quickstarted's show prints run_start's agent as it is, and a line per setup event.
    const trace = readFileSync(join(out, 'greeter-setup-failed', '1', 'trace.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; agent?: unknown });
    expect(trace[0]).toMatchObject({ type: 'run_start', agent: 'replay' });
    expect(trace.filter((e) => e.type === 'setup')).toHaveLength(1);
    // qs results rebuilds the same document from the folder alone (its plan names the agent).
    const rebuilt = await qs(['results', out]);
    expect(rebuilt.out).toBe(readFileSync(join(out, 'results.json'), 'utf8'));
  });

  it("runs a task named in another team's words (spaces, a slash, letters beyond ASCII): its folder a safe form of the name, its results the name as written", async () => {
    const task = join(work, 'unicode-name.yaml');
    writeFileSync(task, 'name: "Démarrage rapide — greeter / npm"\ngoal: Make the folder.\ndocs: {path: [https://docs.greeter.test/install.html]}\nreplay: [mkdir -p greeter]\nsuccess:\n  script: test -d greeter || qs_fail "no greeter"\n');
    const out = join(work, 'unicode-out');
    const r = await qs(['run', task, '--out', out, ...MAP]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/warning .*unicode-name.yaml:1:7: name 'Démarrage rapide — greeter \/ npm' is not safe as a directory name; .*\[QS120\]/);
    expect(readdirSync(out).sort()).toEqual(['d-marrage-rapide-greeter-npm', 'plan.ndjson', 'results.json']);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { tasks: Array<{ task: string; passes: number; runs: Array<{ stream: string }> }> };
    expect(results.tasks.map((t) => [t.task, t.passes, t.runs[0]?.stream])).toEqual([['Démarrage rapide — greeter / npm', 1, 'd-marrage-rapide-greeter-npm/1/events.ndjson']]);
  });

  it('shows a 2000-character task name cut short on every log line of every stage, and keeps it whole in results.json', async () => {
    const name = `quickstart-${'x'.repeat(1989)}`;
    const task = join(work, 'long-name.yaml');
    writeFileSync(task, `name: ${name}\ngoal: Make the folder.\ndocs: {path: [https://docs.greeter.test/install.html]}\nreplay: [mkdir -p greeter]\nsuccess:\n  script: test -d greeter || qs_fail "no greeter"\n`);
    const out = join(work, 'long-name-out');
    const r = await qs(['run', task, '--out', out, ...MAP]);
    expect(r.code, r.err).toBe(0);
    const logged = r.err.split('\n').filter((l) => l.includes('quickstart-x'));
    // qs-validate's ok line, qs-sandbox's ready, qs-agent's completed, the sweep's own lines
    expect(logged.length, r.err).toBeGreaterThanOrEqual(4);
    for (const l of logged) expect(l.length, l).toBeLessThan(400);
    expect(r.err).toContain(`(${name.slice(0, 79)}…, replay+agent)`);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { tasks: Array<{ task: string; passes: number }> };
    expect(results.tasks.map((t) => [t.task, t.passes])).toEqual([[name, 1]]);
  });

  it("keeps the end of a check's output whole characters in results.json and JUnit (quickstarted's report cannot write half an emoji)", async () => {
    const task = join(work, 'emoji-check.yaml');
    // 2 000 and 1 000 UTF-16 units back from the end of this output both fall inside an emoji.
    writeFileSync(task, `name: emoji-check\ngoal: Print the globe.\ndocs: {path: [https://docs.greeter.test/install.html]}\nreplay: [mkdir -p greeter]\nsuccess:\n  script: |\n    for i in $(seq 1 1500); do printf '\\360\\237\\214\\215'; done\n    echo\n    qs_fail "the globe is not enough"\n`);
    const out = join(work, 'emoji-out');
    const r = await qs(['run', task, '--out', out, '--junit', join(work, 'emoji.xml'), ...MAP]);
    expect(r.code, r.err).toBe(1);
    const text = readFileSync(join(out, 'results.json'), 'utf8');
    const check = (JSON.parse(text) as { tasks: Array<{ runs: Array<{ success_check: { output: string } }> }> }).tasks[0]!.runs[0]!.success_check.output;
    expect(check.endsWith('🌍\ncheck failed: the globe is not enough\n')).toBe(true);
    expect(check.isWellFormed(), JSON.stringify(check.slice(0, 8))).toBe(true);
    expect(text).not.toMatch(/\\ud[89a-f][0-9a-f]{2}/i);
    expect(readFileSync(join(work, 'emoji.xml'), 'utf8')).not.toContain('\uFFFD');
  });

  it('refuses two tasks of one name before anything runs (results.json and qs diff know a task by its name), exit 3', async () => {
    const out = join(work, 'same-name');
    mkdirSync(join(work, 'copy'), { recursive: true });
    writeFileSync(join(work, 'copy', 'greeter.yaml'), readFileSync(EXAMPLE));
    const r = await qs(['run', EXAMPLE, join(work, 'copy', 'greeter.yaml'), '--out', out, ...MAP]);
    expect(r.code, r.err).toBe(3);
    expect(r.err).toMatch(/^qs run: two tasks are named "greeter-quickstart" \(\S+, \S+\); results\.json and qs diff know a task by its name, so rename one$/m);
    expect(existsSync(out)).toBe(false);
  });

  it("--max-memory and --max-processes reach every attempt's sandbox (its sandbox.ready lists them)", async () => {
    const r = await qs(['run', EXAMPLE, '--max-memory', '3G', '--max-processes', '512', ...MAP]);
    expect(r.code, r.err).toBe(0);
    const ready = lines(r.out).find((e) => e.type === 'sandbox.ready') as { limits?: Array<{ name: string; value: number }> } | undefined;
    expect(ready?.limits?.filter((l) => l.name === 'memory' || l.name === 'processes').map((l) => [l.name, l.value])).toEqual([
      ['processes', 512],
      ['memory', 3 * 1024 ** 3],
    ]);
  });

  it('runs the valid tasks beside an invalid file, then exits 3', async () => {
    const out = join(work, 'mixed');
    const r = await qs(['run', pipeline('skipped.yaml'), join(ROOT, 'fixtures', 'tasks', 'invalid', 'blank-name.yaml'), '--out', out, ...MAP]);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/^INVALID/m);
    expect([...saved(out).keys()]).toEqual(['greeter-agent-only/1']);
    expect(lines(r.out).some((e) => e.type === 'diagnostic' && e.severity === 'error')).toBe(true);
  });

  it.each([
    [['--repeat', '0'], /--repeat must be a whole number from 1 to 1000 \(got 0\)/],
    [['--repeat', '1e1'], /--repeat must be a whole number from 1 to 1000 \(got 1e1\)/],
    [['--workers', 'two'], /--workers must be a whole number from 1 to 64 \(got two\)/],
    [['--repeat', '1.5'], /--repeat must be a whole number/],
    // Followed by --docs-map: yargs alone would run the default agent, once.
    [['--agent'], /--agent needs a value/],
    [['--repeat'], /--repeat needs a value/],
    [['--out', '@FILE'], /is a file, not a folder/],
    [['--out', '@FULL'], /the folder is not empty/],
    [['--out', '@FILE/sub'], /--out .*a-file\/sub: cannot write there \(ENOTDIR\)/],
    // Under a filesystem that makes no folders (Node's own recursive mkdir spins forever there).
    [['--out', '/proc/quickloop-out/x'], /--out \/proc\/quickloop-out\/x: cannot write there \(ENOENT\)/],
    [['--install-cache', '/proc/quickloop-cache'], /--install-cache \/proc\/quickloop-cache: not a folder that can be written \(ENOENT\)/],
    [['--junit', '/nonexistent-qs-folder/junit.xml'], /--junit \/nonexistent-qs-folder\/junit\.xml: its folder does not exist/],
    [['--summary', '@FULL'], /--summary .*: name a file/],
    [['--max-memory', '1M'], /^qs run: --max-memory 1M: not a size of at least 64M/m],
    [['--max-processes', '0'], /^qs run: --max-processes 0: not a whole number of at least 16/m],
    [['--max-tmp', '2G', '--queue', 'redis://127.0.0.1:1/0'], /^qs run: --max-processes, --max-memory, --max-tmp and --max-shm are a machine's own/m],
    // The docs reader's flags, refused once here rather than by qs-agent in every attempt.
    [['--docs-map', 'nonsense'], /^qs: --docs-map nonsense: expected URL_PREFIX=DIR$/m],
    [['--docs-map', 'https://docs.other.test/=/nonexistent-qs-docs'], /^qs: --docs-map https:\/\/docs\.other\.test\/=\/nonexistent-qs-docs: \/nonexistent-qs-docs is not a folder$/m],
    [['--rate-limit', 'soon'], /^qs: --rate-limit soon: expected SECONDS between 0 and 3600$/m],
    [['--offline', '--refresh'], /^qs: --offline and --refresh contradict each other/m],
    [['--cache-dir', '/proc/quickloop-docs-cache'], /^qs: --cache-dir \/proc\/quickloop-docs-cache: not a folder that can be written \(ENOENT\)$/m],
  ])('refuses %j with exit 3 before running anything', async (flags, message) => {
    const file = join(work, 'a-file');
    writeFileSync(file, 'x');
    const full = join(work, 'full');
    mkdirSync(full, { recursive: true });
    writeFileSync(join(full, 'keep.txt'), 'x');
    const r = await qs(['run', EXAMPLE, ...flags.map((f) => f.replace(/^@FILE/, file).replace(/^@FULL/, full)), ...MAP]);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(message);
    expect(r.out).toBe('');
    expect(readdirSync(full)).toEqual(['keep.txt']);
  });

  it.each([
    ['a terminal', { TERM: 'xterm', NO_COLOR: '' }, true],
    ['a terminal with NO_COLOR', { TERM: 'xterm', NO_COLOR: '1' }, false],
  ])('on %s: one status line redrawn in place, colour only without NO_COLOR', (_name, extra, colour) => {
    // script(1) gives qs a real pseudo-terminal for stderr; stdout (the events) goes to a file.
    const events = join(work, `tty-${String(colour)}.ndjson`);
    const inner = [process.execPath, QS, 'run', pipeline('skipped.yaml'), '--repeat', '2', ...MAP].map((a) => `'${a}'`).join(' ');
    const r = spawnSync('script', ['-qec', `${inner} > '${events}'`, '/dev/null'], { cwd: work, env: env(extra), encoding: 'utf8' });
    // Only skipped runs: no evidence.
    expect(r.status, r.stdout).toBe(2);
    expect(r.stdout).toContain('\r\x1b[K');
    expect(r.stdout).toMatch(/\[ +\d+s\] 2\/2 done · 0 pass · 0 fail · 0 inconclusive · 2 skip/);
    // Attempts are not announced as lines on a terminal: the status line says what runs.
    expect(r.stdout).not.toMatch(/#1 started/);
    expect(/\x1b\[\d+m/.test(r.stdout)).toBe(colour);
    expect(lines(readFileSync(events, 'utf8')).filter((e) => e.type === 'run.completed')).toHaveLength(2);
  });

  it('exits 3 when no task is valid', async () => {
    const r = await qs(['run', join(ROOT, 'fixtures', 'tasks', 'invalid', 'blank-name.yaml'), ...MAP]);
    expect(r.code).toBe(3);
    expect(r.err).toContain('qs run: no valid task to run');
  });
});
