// What loop-run accepts: loop.yaml compiled in memory, and a resolved spec missing a required field refused up front.
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { compileSpec } from '@quickloop/loop-spec';
import { join } from 'node:path';
import { memoryIo } from '@quickloop/cli-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../src/run.js';
import { FAKE, makeLoop, type Loop } from './helpers.js';

const DEMO = fileURLToPath(new URL('../../../fixtures/loops/demo-haiku', import.meta.url));
const loops: Loop[] = [];
afterEach(() => {
  for (const l of loops.splice(0)) l.cleanup();
});

describe('loop-run spec input', () => {
  it('runs loop.yaml directly, compiling it in memory (no loop.resolved.json written)', async () => {
    const loop = makeLoop();
    loops.push(loop);
    const fake = (name: string, extra: string[] = []) => JSON.stringify([process.execPath, FAKE, '--name', name, '--capture', loop.capture, ...extra]);
    writeFileSync(
      join(loop.dir, 'loop.yaml'),
      `version: 1
meta:
  name: yaml-loop
goal:
  statement: Write a haiku about loops.
  definition_of_done: Three lines.
  context_sources:
    - file: notes.md
  verification:
    - id: quality
      type: judge
      rubric: A haiku.
host:
  cli: fakehost
  invoke: ${fake('host')}
council:
  - id: judge-1
    role: judge
    cli: fakejudge
    invoke: ${fake('judge', ['--verdicts', 'pass'])}
gates:
  plan_gate: { when: after plan, members: [judge-1], verdict_policy: revise_until_clean, verdict_source: judge-1, criteria: [quality], max_revisions: 1 }
  delivery_gate: { when: after delivery, members: [judge-1], verdict_policy: revise_until_clean, verdict_source: judge-1, criteria: [quality], max_revisions: 1 }
loop_control:
  max_iterations: 1
privacy:
  egress:
    - { to: judge-1, sends: [artifacts], consent: granted }
workspace:
  dir: ./yaml-workspace
`,
    );
    const io = memoryIo({ stdin: '' });
    const code = await run({ spec: join(loop.dir, 'loop.yaml'), retries: 0, retryDelayMs: 0, consent: [], level: 'normal' }, io);
    expect(io.err()).not.toContain('error');
    expect(code).toBe(0);
    expect(existsSync(join(loop.dir, 'yaml-workspace', 'delivery-1.md'))).toBe(true);
    expect(readdirSync(loop.dir).filter((f) => f.endsWith('.json'))).toEqual(['loop.resolved.json']); // the helper's, untouched
    expect(loop.calls('judge')).toBe(2);
  });

  it('refuses a resolved spec without gates before any model is called (exit 2, nothing written)', async () => {
    const loop = makeLoop({ tweak: (s) => delete s.gates });
    loops.push(loop);
    const io = memoryIo({ stdin: '' });
    await expect(run({ spec: loop.specPath, retries: 0, retryDelayMs: 0, consent: [], level: 'normal' }, io)).rejects.toThrow('loop.resolved.json is missing required field: gates.plan_gate');
    expect(loop.calls('host')).toBe(0);
    expect(existsSync(loop.ws('state.json'))).toBe(false);
    expect(io.out()).toContain('"type":"loop.failed"');
  });

  it('runs a loop.resolved.json as Looper-compatible compilation writes it (sorted keys, source path, no max_revisions default)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loop-run-compiled-'));
    try {
      cpSync(DEMO, dir, { recursive: true });
      const text = readFileSync(join(dir, 'loop.yaml'), 'utf8');
      writeFileSync(join(dir, 'loop.resolved.json'), compileSpec(text, { path: join(dir, 'loop.yaml'), now: new Date('2026-01-01T00:00:00Z') }).json);
      const io = memoryIo({ stdin: '' });
      const code = await run({ spec: join(dir, 'loop.resolved.json'), retries: 0, retryDelayMs: 0, consent: [], level: 'normal' }, io);
      expect(code).toBe(0);
      const state = JSON.parse(readFileSync(join(dir, 'loop-workspace', 'state.json'), 'utf8'));
      expect(state.status).toBe('passed');
      expect(state.failure).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
