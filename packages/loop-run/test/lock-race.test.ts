// The run lock under contention: runs started together, on a free lock or on a stale one, never hold it at once.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const STATE = fileURLToPath(new URL('../dist/state.js', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

// Each taker waits for the go file, tries the lock, and while it holds it, claims a marker no one
// else may hold (an exclusive create): a second holder at the same time finds the marker and says so.
const TAKER = `
import { appendFileSync, existsSync, unlinkSync, writeFileSync } from 'node:fs';
const { acquireLock } = await import(process.argv[1]);
const [, , lock, go, log, marker] = process.argv;
while (!existsSync(go)) {}
let release;
try {
  release = acquireLock(lock);
} catch (error) {
  appendFileSync(log, 'refused ' + error.message.split(' (')[0] + '\\n');
  process.exit(0);
}
try {
  writeFileSync(marker, String(process.pid), { flag: 'wx' });
} catch {
  appendFileSync(log, 'OVERLAP\\n');
  process.exit(0);
}
appendFileSync(log, 'held\\n');
const until = Date.now() + 150;
while (Date.now() < until) {}
unlinkSync(marker);
release();
`;

async function contend(lockText: string | undefined, takers: number): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'loop-run-lock-'));
  dirs.push(dir);
  const [lock, go, log, marker] = ['.loop-run.lock', 'go', 'log', 'holding'].map((f) => join(dir, f)) as [string, string, string, string];
  if (lockText !== undefined) writeFileSync(lock, lockText);
  writeFileSync(log, '');
  const children = Array.from({ length: takers }, () => spawn(process.execPath, ['--input-type=module', '-e', TAKER, STATE, lock, go, log, marker], { stdio: ['ignore', 'ignore', 'inherit'] }));
  const exited = children.map((c) => new Promise<number | null>((r) => c.on('exit', r)));
  // Every taker started and spinning on the go file, then all at once.
  await new Promise((r) => setTimeout(r, 400));
  writeFileSync(go, '');
  expect(await Promise.all(exited)).toEqual(Array(takers).fill(0));
  expect(existsSync(lock)).toBe(false);
  return readFileSync(log, 'utf8').trim().split('\n');
}

describe('the run lock, taken by several runs at once', () => {
  it('on a stale lock (its holder died): one run takes it over at a time, never two together', async () => {
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('exit', r));
    for (let round = 0; round < 3; round += 1) {
      const lines = await contend(`${dead.pid}\n`, 6);
      expect(lines).not.toContain('OVERLAP');
      expect(lines.filter((l) => l === 'held').length).toBeGreaterThanOrEqual(1);
      for (const l of lines.filter((x) => x !== 'held')) expect(l).toBe('refused another loop-run');
    }
  });

  it('on a free lock: the runs started together never find it empty and take it for a stale one', async () => {
    for (let round = 0; round < 3; round += 1) {
      const lines = await contend(undefined, 6);
      expect(lines).not.toContain('OVERLAP');
      expect(lines.filter((l) => l === 'held').length).toBeGreaterThanOrEqual(1);
    }
  });
});
