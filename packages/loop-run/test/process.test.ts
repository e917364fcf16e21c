// The real built bin: a workspace escape refused with nothing written, and kill -9 mid-gate then a resume.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, makeLoop, type Loop } from './helpers.js';

const loops: Loop[] = [];
const pids: number[] = [];
afterEach(() => {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  for (const l of loops.splice(0)) l.cleanup();
});

const events = (stdout: string) =>
  stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);

/** Resolves once `path` exists, by watching the directory (no sleeps, no timed assertion). */
async function waitForFile(path: string, child: ReturnType<typeof spawn>): Promise<void> {
  while (!existsSync(path)) {
    if (child.exitCode !== null) throw new Error(`loop-run exited (${child.exitCode}) before ${path} appeared`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('loop-run (spawned)', () => {
  it('refuses a workspace escape before writing anything (exit 2)', () => {
    const loop = makeLoop({ tweak: (s) => (s.workspace.dir = '../escaped-workspace') });
    loops.push(loop);
    const before = readdirSync(join(loop.dir, '..')).filter((f) => f === 'escaped-workspace');
    const r = spawnSync(process.execPath, [BIN, 'loop.resolved.json'], { cwd: loop.dir, input: '', encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('escapes the loop directory');
    expect(before).toEqual([]);
    expect(existsSync(join(loop.dir, '..', 'escaped-workspace'))).toBe(false);
    expect(existsSync(join(loop.dir, 'loop-workspace'))).toBe(false);
    // No state.json can exist, so the stream's terminal event carries the status and failure.
    const last = events(r.stdout).at(-1);
    expect(last).toMatchObject({ type: 'loop.failed', status: 'failed', exit_code: 2 });
    expect(last?.failure).toContain('escapes the loop directory');
    expect(loop.calls('host')).toBe(0);
  });

  it('survives kill -9 in the middle of a gate: the resume keeps the revision count and the wall clock', async () => {
    // Round 1 revises, the host revises, round 2 hangs in the judge; after the kill the judge passes.
    const loop = makeLoop({ judge: ['--verdicts', 'revise,hang,pass,pass'], tweak: (s) => (s.gates.plan_gate.max_revisions = 1) });
    loops.push(loop);
    const child = spawn(process.execPath, [BIN, loop.specPath], { cwd: loop.dir, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end();
    pids.push(child.pid!);
    await waitForFile(join(loop.capture, 'judge.hang'), child);
    const judgePid = Number(readFileSync(join(loop.capture, 'judge.hang'), 'utf8'));
    pids.push(judgePid);
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGKILL');
    await exited;
    process.kill(judgePid, 'SIGKILL');

    const killed = loop.state();
    expect(killed.status).toBe('plan_gate_revision_1');
    expect(killed.gate_progress).toEqual({ gate: 'plan_gate', iteration: 0, revision: 1, saved_at: killed.updated_at });
    expect(existsSync(loop.ws('.loop-run.lock'))).toBe(true); // left behind by the dead runner

    const r = spawnSync(process.execPath, [BIN, 'loop.resolved.json'], { cwd: loop.dir, input: '', encoding: 'utf8' });
    expect(r.status).toBe(0);
    const state = loop.state();
    expect(state.status).toBe('passed');
    expect(state.failure).toBeUndefined();
    expect(state.wall_clock_used_sec).toBeGreaterThan(killed.wall_clock_used_sec);
    const ev = events(r.stdout);
    expect(ev[0]).toMatchObject({ type: 'loop.started', resumed: true, status: 'plan_gate_revision_1', wall_clock_used_sec: killed.wall_clock_used_sec });
    // The plan gate resumed at revision 1 of 1 in a new round; a revise there would have failed the gate.
    expect(ev.find((e) => e.type === 'gate.started')).toMatchObject({ gate: 'plan_gate', revision: 1, round: 3 });
    expect(loop.calls('host')).toBe(3); // plan, the revision before the kill, delivery; plan.md was kept
    expect(existsSync(loop.ws('.loop-run.lock'))).toBe(false);
    expect(ev.at(-1)?.type).toBe('loop.completed');
  });

  it('keeps running when the reader goes away (| head): the exit code and state still tell the truth', () => {
    const loop = makeLoop({ judge: ['--verdicts', 'revise,pass,pass'] });
    loops.push(loop);
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" loop.resolved.json < /dev/null 2>/dev/null | head -n 1; echo "exit=\${PIPESTATUS[0]}"`], { cwd: loop.dir, encoding: 'utf8' });
    const [first, exit] = r.stdout.trim().split('\n');
    expect(JSON.parse(first!).type).toBe('loop.started');
    expect(exit).toBe('exit=0');
    expect(loop.state().status).toBe('passed');
    expect(loop.calls('judge')).toBe(3);
  });

  it('exits 1 through a closed pipe when the loop fails', () => {
    const loop = makeLoop({ judge: ['--unique'] });
    loops.push(loop);
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" loop.resolved.json < /dev/null 2>/dev/null | head -n 1 > /dev/null; echo "exit=\${PIPESTATUS[0]}"`], { cwd: loop.dir, encoding: 'utf8' });
    expect(r.stdout.trim()).toBe('exit=1');
    expect(loop.state()).toMatchObject({ status: 'failed', failure: 'plan_gate_max_revisions_reached' });
  });
});
