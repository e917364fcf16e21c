// The bundled docs-fix loop (fixtures/loops/docs-fix) through the real bin: its only gate is the real quickstart pipeline.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lintSpecText } from '@quickloop/loop-spec';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BIN } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURE = join(ROOT, 'fixtures/loops/docs-fix');
// qs-validate, qs-agent and qs-check are this package's dev dependencies: their bins live here.
const BINS = fileURLToPath(new URL('../node_modules/.bin', import.meta.url));
const PAGE = 'workspace/docs/quickstart.html';
const CHECK = ['quickstart/check.sh', 'workspace/quickstart.yaml', 'https://docs.greeter.test/=workspace/docs'];

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A temp copy of the fixture: the loop edits its docs and writes its workspace there. */
function copyFixture(): string {
  const root = mkdtempSync(join(tmpdir(), 'docs-fix-'));
  dirs.push(root);
  const dir = join(root, 'docs-fix');
  cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

/** Runs argv in dir with stdin closed; resolves with its exit code and output once it has exited. */
function exec(argv: string[], dir: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: dir,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, PATH: `${BINS}${delimiter}${process.env.PATH ?? ''}`, NO_COLOR: '1', ...env },
  });
  children.push(child);
  child.stdin!.end();
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const events = (stdout: string) =>
  stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);
const state = (dir: string) => JSON.parse(readFileSync(join(dir, 'workspace', 'state.json'), 'utf8')) as Record<string, any>;
/** The quickstart report (the criterion's stdout) a failed round kept in its review file. */
function reviewReport(dir: string, round: number): { returncode: number; stdout: string } {
  const review = readFileSync(join(dir, 'workspace', `review-delivery_gate-${round}.md`), 'utf8');
  return JSON.parse(/```json\n([\s\S]*?)\n```/.exec(review)![1]!);
}

describe('the docs-fix loop (fixtures/loops/docs-fix)', () => {
  it('is valid under the seed schema and lints clean, strict', () => {
    const text = readFileSync(join(FIXTURE, 'loop.yaml'), 'utf8');
    const schema = JSON.parse(readFileSync(join(ROOT, 'schemas/loop.schema.json'), 'utf8')) as object;
    const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
    const ok = validate(parse(text));
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
    expect(lintSpecText(text, { path: join(FIXTURE, 'loop.yaml') }).findings).toEqual([]);
  });

  it('fails the first delivery on the quickstart (docs_gap), lets the host fix the page, then passes (exit 0)', async () => {
    const dir = copyFixture();
    const original = readFileSync(join(dir, PAGE), 'utf8');
    const r = await exec([process.execPath, BIN, 'loop.yaml'], dir);
    expect(r.code, r.stderr).toBe(0);

    const s = state(dir);
    expect(s.status).toBe('passed');
    expect(s.failure).toBeUndefined();
    expect(s.iteration).toBe(2);
    expect(s.final_delivery).toBe(join(dir, 'workspace', 'delivery-2.md'));

    // Round 1: the real pipeline ran the page's commands and qs-check classified the failure as a docs gap.
    const first = reviewReport(dir, 1);
    expect(first.returncode).toBe(1);
    expect(first.stdout).toMatch(/^quickstart: FAIL docs_gap \(docs-fix-quickstart, check exit 1, /);
    expect(first.stdout).toContain('failed command: node greeter/greeter.js Ada');
    expect(first.stdout).toContain("Error: Cannot find module '");
    expect(first.stdout).toContain(`suspect page: https://docs.greeter.test/quickstart.html -> workspace/docs/quickstart.html`);
    expect(existsSync(join(dir, 'workspace', 'review-delivery_gate-2.md'))).toBe(false);

    // The host read that report in delivery 2's prompt and changed the one wrong command in the page.
    const fixed = readFileSync(join(dir, PAGE), 'utf8');
    expect(fixed).toBe(original.replace('node greeter/greeter.js Ada', 'node greeter/greet.js Ada'));
    expect(fixed).not.toBe(original);
    const delivery2 = readFileSync(join(dir, 'workspace', 'delivery-2.md'), 'utf8');
    expect(delivery2).toContain('failed command: node greeter/greeter.js Ada');
    expect(delivery2).toContain('The command now reads `node greeter/greet.js Ada`');
    expect(readFileSync(join(dir, 'workspace', 'delivery-1.md'), 'utf8')).toContain('No quickstart report yet');

    // The gate's decisions, from the stream: the programmatic check's exit codes are the pipeline's.
    const ev = events(r.stdout);
    const checks = ev.filter((e) => e.type === 'gate.check');
    expect(checks.map((e) => [e.gate, e.criterion, e.passed, e.exit_code])).toEqual([
      ['delivery_gate', 'quickstart-passes', false, 1],
      ['delivery_gate', 'quickstart-passes', true, 0],
    ]);
    expect(ev.filter((e) => e.type === 'gate.verdict').map((e) => [e.gate, e.verdict])).toEqual([
      ['plan_gate', 'pass'],
      ['delivery_gate', 'revise'],
      ['delivery_gate', 'pass'],
    ]);
    expect(ev.at(-1)).toMatchObject({ type: 'loop.completed' });

    // The same criterion, run again by hand on the fixed copy, is qs-check's PASS (nothing in the loop decides it).
    const again = await exec(['bash', ...CHECK], dir);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^quickstart: PASS passed \(docs-fix-quickstart, check exit 0, /);
  }, 180_000);

  it('stops at its iteration cap with exit 1 when the host never fixes the page', async () => {
    const dir = copyFixture();
    const original = readFileSync(join(dir, PAGE), 'utf8');
    const r = await exec([process.execPath, BIN, 'loop.yaml'], dir, { DOCS_FIX_HOST: 'stubborn' });
    expect(r.code, r.stderr).toBe(1);

    const s = state(dir);
    expect(s.status).toBe('failed');
    expect(s.failure).toBe('max_iterations_reached');
    expect(s.iteration).toBe(3);
    expect(readFileSync(join(dir, PAGE), 'utf8')).toBe(original);
    for (const round of [1, 2, 3]) {
      const report = reviewReport(dir, round);
      expect(report.returncode).toBe(1);
      expect(report.stdout).toMatch(/^quickstart: FAIL docs_gap /);
    }
    const ev = events(r.stdout);
    expect(ev.filter((e) => e.type === 'gate.check').map((e) => e.passed)).toEqual([false, false, false]);
    expect(ev.at(-1)).toMatchObject({ type: 'loop.failed', status: 'failed', failure: 'max_iterations_reached', exit_code: 1 });
  }, 180_000);

  it('refuses a task that brings its own replay: the commands must come from the docs', async () => {
    const dir = copyFixture();
    const task = join(dir, 'workspace', 'quickstart.yaml');
    appendFileSync(task, 'replay:\n  - node greeter/greet.js Ada\n');
    const r = await exec(['bash', ...CHECK], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('replay-from-docs: workspace/quickstart.yaml: replay must be left out; it is read from the docs');
  });

  it('runs as `pnpm example:loop` (scripts/example-loop.sh): PASS, the docs diff shown, its temp copy removed', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'docs-fix-example-'));
    dirs.push(tmp);
    const r = await exec(['bash', 'scripts/example-loop.sh'], ROOT, { TMPDIR: tmp });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('-<pre><code class="language-sh">node greeter/greeter.js Ada</code></pre>');
    expect(r.stdout).toContain('+<pre><code class="language-sh">node greeter/greet.js Ada</code></pre>');
    expect(r.stdout).toContain('quickstart: FAIL docs_gap');
    expect(r.stdout).toContain('status passed, iteration 2');
    expect(r.stderr).toContain('loop passed: workspace/delivery-2.md');
    // The loop's copy, the criterion's derived task and every sandbox the pipeline made are gone.
    expect(readdirSync(tmp)).toEqual([]);
  }, 180_000);
});
