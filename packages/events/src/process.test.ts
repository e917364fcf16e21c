// Real processes and real pipes: a closed downstream, a bad line mid-stream, backpressure end to end.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { execa } from 'execa';

const STAGE = fileURLToPath(new URL('../test-fixtures/forward.mjs', import.meta.url));
const PROBE = fileURLToPath(new URL('../test-fixtures/stdout-probe.mjs', import.meta.url));
const line = (n: number): string =>
  JSON.stringify({ v: 1, type: 'x.y', ts: '2026-01-01T00:00:00.000Z', run_id: 'r', stage: 't', n });

describe('a stage as a real process', () => {
  it('forwards events unchanged and in order', async () => {
    const input = Array.from({ length: 500 }, (_, i) => line(i)).join('\n') + '\n';
    const { stdout, exitCode } = await execa('node', [STAGE], { input });
    expect(exitCode).toBe(0);
    expect(stdout + '\n').toBe(input);
  });

  it('stops at a malformed line with stdin:N and exit 3, keeping every line before it', async () => {
    const input = `${line(1)}\n${line(2)}\nnot json at all\n${line(4)}\n`;
    const result = await execa('node', [STAGE], { input, reject: false });
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toBe(`${line(1)}\n${line(2)}`);
    expect(result.stderr).toMatch(/^forward: stdin:3: not JSON \(.*\): not json at all$/);
  });

  it('ends quietly with 0 when the reader downstream goes away (| head -1)', async () => {
    const result = await execa('bash', ['-c', `node ${JSON.stringify(STAGE)} --emit 200000 | head -1; echo "rc=\${PIPESTATUS[0]}" >&2`], {
      reject: false,
    });
    expect(JSON.parse(result.stdout).message).toBe('n0');
    expect(result.stderr.trim()).toBe('rc=0');
  });

  it('respects backpressure: once its stdout is full it writes nothing more until drain, and loses nothing', async () => {
    // The stage's stdout is a socket here, where Node buffers without limit for a writer that keeps
    // writing: only a write made while a 'drain' is owed shows the difference, so the probe counts those.
    const child = spawn('node', ['--import', PROBE, STAGE, '--emit', '100000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pause();
    let stderr = '';
    await new Promise<void>((resolve) => {
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString();
        if (stderr.includes('full\n')) resolve();
      });
    });
    // Nothing is read until the stage has been told to wait, so a writer that does not wait writes on.
    let count = 0;
    let rest = '';
    child.stdout.on('data', (c: Buffer) => {
      const parts = (rest + c.toString()).split('\n');
      rest = parts.pop() ?? '';
      count += parts.length;
    });
    child.stdout.resume();
    const code = await new Promise((r) => child.on('close', r));
    expect(code).toBe(0);
    expect(stderr).toContain('writes-before-drain=0\n');
    expect(count).toBe(100000);
  });
});
