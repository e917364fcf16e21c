// `loop run` and `loop gate` are thin delegations to loop-run and loop-gate: same events and exit codes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { memoryIo } from '@quickloop/cli-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { makeLoop, type Loop } from '../../loop-run/test/helpers.js';
import { cli } from './cli.js';

const loops: Loop[] = [];
afterEach(() => {
  for (const l of loops.splice(0)) l.cleanup();
});

describe('loop run / loop gate', () => {
  it('loop run runs the loop to a pass (exit 0, loop.completed last)', async () => {
    const loop = makeLoop();
    loops.push(loop);
    const io = memoryIo({ stdin: '' });
    expect(await cli(['run', loop.specPath, '--retries', '0'], io)).toBe(0);
    expect(loop.state().status).toBe('passed');
    expect(io.out().trim().split('\n').map((l) => JSON.parse(l).type).at(-1)).toBe('loop.completed');
  });

  it('loop gate gives one round: exit 1 on revise', async () => {
    const loop = makeLoop({ judge: ['--verdicts', 'revise'] });
    loops.push(loop);
    writeFileSync(join(loop.dir, 'draft.md'), 'a haiku\n');
    const io = memoryIo({ stdin: '' });
    expect(await cli(['gate', loop.specPath, 'plan', join(loop.dir, 'draft.md')], io)).toBe(1);
    expect(io.out()).toContain('"type":"gate.verdict"');
  });

  it('a repeated --consent keeps every member it names, as loop-run and loop-gate do', async () => {
    // Two non-local members, no pre-granted egress: each needs its own consent and stdin is closed.
    const fakeReviewer = (s: Record<string, any>) => {
      const judge = s.council[0];
      s.council.push({ ...judge, id: 'rev-1', role: 'reviewer', invoke: judge.invoke.map((a: string) => (a === 'judge' ? 'reviewer' : a)) });
      s.gates.plan_gate.members.push('rev-1');
      s.privacy.egress = [];
    };
    const loop = makeLoop({ tweak: fakeReviewer });
    loops.push(loop);
    const io = memoryIo({ stdin: '' });
    expect(await cli(['run', loop.specPath, '--retries', '0', '--consent', 'judge-1', '--consent', 'rev-1'], io)).toBe(0);
    expect(io.err()).not.toContain("Type 'yes' to consent");
    expect(Object.keys(loop.state().consent).sort()).toEqual(['judge-1', 'rev-1']);

    writeFileSync(join(loop.dir, 'draft.md'), 'a haiku\n');
    const gateIo = memoryIo({ stdin: '' });
    expect(await cli(['gate', loop.specPath, 'plan', join(loop.dir, 'draft.md'), '--consent', 'judge-1', '--consent', 'rev-1'], gateIo)).toBe(0);
    expect(gateIo.err()).not.toContain("Type 'yes' to consent");
  });

  it.each([
    ['run', '--retries', 'x'],
    ['run', '--retry-delay-ms', '-5'],
    ['gate', '--round', '0'],
    ['gate', '--revision', 'two'],
  ])('loop %s %s %s is a usage error (exit 2) and no model is called', async (command, flag, value) => {
    const loop = makeLoop();
    loops.push(loop);
    writeFileSync(join(loop.dir, 'draft.md'), 'a haiku\n');
    const args = command === 'run' ? [loop.specPath] : [loop.specPath, 'plan', join(loop.dir, 'draft.md')];
    const io = memoryIo({ stdin: '' });
    expect(await cli([command, ...args, flag, value], io)).toBe(2);
    expect(io.err()).toContain(`${flag} must be an integer`);
    expect(loop.calls('host') + loop.calls('judge')).toBe(0);
  });

  it('reports a bad spec as loop: error: with exit 2', async () => {
    const io = memoryIo({ stdin: '' });
    expect(await cli(['run', '/nonexistent/loop.resolved.json'], io)).toBe(2);
    expect(io.err()).toMatch(/^loop: error: Could not read/m);
  });
});
