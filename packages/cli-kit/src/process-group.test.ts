// Ending a real process tree: the leader, a child that ignores SIGTERM, and the signal table.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { describe, expect, it } from 'vitest';
import { endGroup, endGroups, exitCodeOf, groupRunning, signalNumber } from './process-group.js';

/** A detached shell whose child traps TERM and lives on; resolves once both are running. */
async function stubbornTree(): Promise<number> {
  const child = spawn('bash', ['-c', "bash -c 'trap \"\" TERM; echo up; while :; do sleep 0.05; done' & wait"], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.unref();
  return child.pid as number;
}

describe('signals', () => {
  it('come from the kernel table', () => {
    expect(signalNumber('SIGTERM')).toBe(constants.signals.SIGTERM);
    expect(signalNumber('SIGALRM')).toBe(constants.signals.SIGALRM);
    expect(signalNumber('SIGNOPE')).toBe(0);
  });
  it('give a shell-style exit code', () => {
    expect(exitCodeOf(3, null)).toBe(3);
    expect(exitCodeOf(0, 'SIGKILL')).toBe(0);
    expect(exitCodeOf(null, 'SIGKILL')).toBe(128 + constants.signals.SIGKILL);
    expect(exitCodeOf(null, 'SIGUSR2')).toBe(128 + constants.signals.SIGUSR2);
    expect(exitCodeOf(null, null, 7)).toBe(7);
  });
});

describe('endGroup', () => {
  it('ends a tree whose child ignores SIGTERM (SIGKILL after the grace), and only then resolves', async () => {
    const pgid = await stubbornTree();
    expect(groupRunning(pgid)).toBe(true);
    await endGroup(pgid, 50);
    expect(groupRunning(pgid)).toBe(false);
  });

  it('with no grace, kills at once; several groups at a time; a group already gone is fine', async () => {
    const groups = [await stubbornTree(), await stubbornTree()];
    await endGroups(groups, 0);
    expect(groups.map(groupRunning)).toEqual([false, false]);
    await endGroups(groups, 10);
    expect(groups.map(groupRunning)).toEqual([false, false]);
  });

  it('a tree that honours SIGTERM ends within the grace, without SIGKILL', async () => {
    const child = spawn('bash', ['-c', "trap 'echo term; exit 0' TERM; echo up; while :; do sleep 0.05; done"], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    await new Promise<void>((resolve) => child.stdout.on('data', (c: Buffer) => { out += c.toString(); if (out.includes('up')) resolve(); }));
    const exited = new Promise<string | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    await endGroup(child.pid as number, 10_000);
    expect(await exited).toBe(null);
    expect(out).toContain('term');
  });
});
