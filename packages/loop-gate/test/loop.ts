// A throwaway loop directory for loop-gate tests: a resolved spec, an artifact and fake model CLIs.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FAKE = fileURLToPath(new URL('./fakes/fake-model.mjs', import.meta.url));
export const BIN = fileURLToPath(new URL('../bin/loop-gate.js', import.meta.url));

export function gateLoop(judge: string[], tweak?: (s: Record<string, any>) => void) {
  const dir = mkdtempSync(join(tmpdir(), 'loop-gate-'));
  const capture = join(dir, '.capture');
  mkdirSync(capture);
  mkdirSync(join(dir, 'loop-workspace'));
  writeFileSync(join(dir, 'loop-workspace', 'delivery-2.md'), '# A haiku\nround and round\n');
  const criteria = [
    { id: 'names-it', type: 'programmatic', check: [process.execPath, '-e', 'process.stdout.write(process.argv.slice(1).join(" "))', '{artifact}', '{n}'], expect: 'stdout_contains', contains: 'loop-workspace/delivery-2.md 2', timeout_sec: 60 },
    { id: 'quality', type: 'judge', rubric: 'A haiku.' },
  ];
  const council = [
    { id: 'judge-1', role: 'judge', cli: 'fake', invoke: [process.execPath, FAKE, '--name', 'judge', '--capture', capture, ...judge], timeout_sec: 60, local: false },
    { id: 'reviewer-1', role: 'reviewer', cli: 'fake', invoke: [process.execPath, FAKE, '--name', 'reviewer-1', '--capture', capture], timeout_sec: 60, local: true },
  ];
  const gate = { members: ['reviewer-1', 'judge-1'], verdict_policy: 'revise_until_clean', verdict_source: 'judge-1', criteria: ['names-it', 'quality'], max_revisions: 1 };
  const spec: Record<string, any> = {
    version: 1,
    goal: { statement: 'Write a haiku.', definition_of_done: 'Three lines.', context_sources: [], verification: criteria },
    host: { cli: 'fake', invoke: [process.execPath, FAKE, '--name', 'host', '--capture', capture], timeout_sec: 60 },
    council,
    gates: { plan_gate: { ...gate, criteria: ['quality'] }, delivery_gate: gate },
    loop_control: { max_iterations: 2, budget: { wall_clock_min: 30 }, no_progress: { max_stalled_iterations: 2, signals: [], action: 'stop' } },
    observability: { state_file: 'state.json', run_log: 'run-log.md', checkpoint_granularity: 'gate' },
    privacy: { egress: [] },
    workspace: { dir: './loop-workspace', layout: [] },
    criteria_by_id: Object.fromEntries(criteria.map((c) => [c.id, c])),
    council_by_id: Object.fromEntries(council.map((m) => [m.id, m])),
  };
  tweak?.(spec);
  writeFileSync(join(dir, 'loop.resolved.json'), `${JSON.stringify(spec, null, 2)}\n`);
  return {
    dir,
    capture,
    calls: (name: string) => (existsSync(join(capture, `${name}.count`)) ? Number(readFileSync(join(capture, `${name}.count`), 'utf8')) : 0),
    prompt: (name: string, k: number) => readFileSync(join(capture, `${name}-${k}.txt`), 'utf8'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
