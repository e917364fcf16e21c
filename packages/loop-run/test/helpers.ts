// Test loops: a temp loop directory with a resolved spec in Looper's exact shape and fake model CLIs.
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { memoryIo } from '@quickloop/cli-kit';
import { run } from '../src/run.js';

export const FAKE = fileURLToPath(new URL('../../loop-gate/test/fakes/fake-model.mjs', import.meta.url));
export const BIN = fileURLToPath(new URL('../bin/loop-run.js', import.meta.url));

export interface Loop {
  dir: string;
  capture: string;
  specPath: string;
  spec: Record<string, any>;
  write(): void;
  state(): Record<string, any>;
  calls(name: string): number;
  prompts(name: string): string[];
  log(): string;
  ws(file: string): string;
  cleanup(): void;
}

const DEFAULT_REDACT = ['.env', '.env.*', 'secrets/**', '**/*.key'];

/** Builds a loop with a host and a judge-1; `judge` and `host` are extra fake-model flags. */
export function makeLoop(o: { judge?: string[]; host?: string[]; tweak?: (spec: Record<string, any>) => void } = {}): Loop {
  const dir = mkdtempSync(join(tmpdir(), 'loop-run-'));
  const capture = join(dir, '.capture');
  mkdirSync(capture);
  const fake = (name: string, extra: string[] = []) => [process.execPath, FAKE, '--name', name, '--capture', capture, ...extra];
  const criteria = [
    { id: 'has-haiku', type: 'programmatic', check: [process.execPath, '-e', "process.exit(require('fs').readFileSync(process.argv[1],'utf8').includes('haiku')?0:1)", '{artifact}'], expect: 'exit_zero', timeout_sec: 60 },
    { id: 'quality', type: 'judge', rubric: 'Three lines, about loops.' },
  ];
  const council = [{ id: 'judge-1', role: 'judge', cli: 'fakejudge', invoke: fake('judge', o.judge ?? ['--verdicts', 'pass']), timeout_sec: 60, scope: ['plan', 'delivery'], local: false }];
  const spec: Record<string, any> = {
    $schema: 'https://github.com/ksimback/looper/schema/loop.resolved.v1.json',
    compiled_at: '2026-07-05T06:02:07+00:00',
    source: join(dir, 'loop.yaml'),
    version: 1,
    meta: { name: 'fixture-loop' },
    goal: {
      statement: 'Write a haiku about loops.',
      definition_of_done: 'Three lines that mention a gate.',
      context_sources: [{ file: 'notes.md' }],
      verification: criteria,
    },
    host: { cli: 'fakehost', invoke: fake('host', o.host ?? []), timeout_sec: 60 },
    council,
    gates: {
      plan_gate: { when: 'after plan', members: ['judge-1'], verdict_policy: 'revise_until_clean', verdict_source: 'judge-1', criteria: ['quality'], max_revisions: 2 },
      delivery_gate: { when: 'after delivery', members: ['judge-1'], verdict_policy: 'revise_until_clean', verdict_source: 'judge-1', criteria: ['has-haiku', 'quality'], max_revisions: 2 },
    },
    loop_control: {
      max_iterations: 2,
      budget: { wall_clock_min: 30 },
      no_progress: { max_stalled_iterations: 2, signals: ['same blocking issue repeats'], action: 'stop' },
    },
    execution: { mode: 'external_runner', isolation: 'current_workspace', side_effects: { requires_approval: true, duplicate_action_check: true } },
    observability: { state_file: 'state.json', run_log: 'run-log.md', checkpoint_granularity: 'gate' },
    privacy: { egress: [{ to: 'judge-1', sends: ['plan.md', 'delivery artifacts'], redact: DEFAULT_REDACT, consent: 'granted' }] },
    workspace: { dir: './loop-workspace', layout: ['plan.md', 'delivery-{n}.md', 'review-{n}.md', 'state.json', 'run-log.md'] },
  };
  o.tweak?.(spec);
  writeFileSync(join(dir, 'notes.md'), 'Loops go round.\n');
  const specPath = join(dir, 'loop.resolved.json');
  const loop: Loop = {
    dir,
    capture,
    specPath,
    spec,
    write() {
      spec.criteria_by_id = Object.fromEntries((spec.goal.verification ?? []).map((c: any) => [c.id, c]));
      spec.council_by_id = Object.fromEntries((spec.council ?? []).map((m: any) => [m.id, m]));
      writeFileSync(specPath, `${JSON.stringify(sortKeys(spec), null, 2)}\n`);
    },
    state: () => JSON.parse(readFileSync(join(dir, 'loop-workspace', 'state.json'), 'utf8')),
    calls: (name) => (existsSync(join(capture, `${name}.count`)) ? Number(readFileSync(join(capture, `${name}.count`), 'utf8')) : 0),
    prompts: (name) =>
      readdirSync(capture)
        .filter((f) => f.startsWith(`${name}-`) && f.endsWith('.txt'))
        .sort((a, b) => Number(a.slice(name.length + 1, -4)) - Number(b.slice(name.length + 1, -4)))
        .map((f) => readFileSync(join(capture, f), 'utf8')),
    log: () => readFileSync(join(dir, 'loop-workspace', 'run-log.md'), 'utf8'),
    ws: (file) => join(dir, 'loop-workspace', file),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
  loop.write();
  return loop;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as any)[k])]));
  return v;
}

/** Runs loop-run in-process; returns the exit code, the events and stderr. */
export async function runLoopIn(loop: Loop, o: { stdin?: string; now?: () => Date; consent?: string[]; env?: Record<string, string> } = {}) {
  const io = memoryIo({ stdin: o.stdin ?? '', env: { ...process.env, NO_COLOR: '1', ...(o.env ?? {}) } });
  if (o.now) io.now = o.now;
  const code = await run({ spec: loop.specPath, retries: 2, retryDelayMs: 0, consent: o.consent ?? [], level: 'normal' }, io);
  const events = io
    .out()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);
  return { code, events, err: io.err() };
}
