// runArgv: a check's or context command's run, reported as a shell would, with its output bounded.
import { describe, expect, it } from 'vitest';
import { CHECK_OUTPUT_BYTES, runArgv } from './exec.js';

describe('runArgv', () => {
  it('reports exit codes as a shell does: the code, 124 on timeout, 127 when it cannot start', async () => {
    const cwd = process.cwd();
    expect((await runArgv(['bash', '-c', 'echo hi; exit 4'], { cwd, timeoutMs: 10_000 })).exitCode).toBe(4);
    expect((await runArgv(['sleep', '30'], { cwd, timeoutMs: 100, killGraceMs: 0 })).exitCode).toBe(124);
    expect((await runArgv(['/nonexistent/quickloop-check'], { cwd, timeoutMs: 10_000 })).exitCode).toBe(127);
  });

  it('keeps only the tail of a flood of output, and the check still ends with its own exit code', async () => {
    // More than the bound, then a last line: memory stays bounded and the verdict is the check's.
    const r = await runArgv(['bash', '-c', `head -c ${CHECK_OUTPUT_BYTES + 4 * 1024 * 1024} /dev/zero | tr '\\0' x; echo; echo last line; exit 3`], { cwd: process.cwd(), timeoutMs: 60_000 });
    expect(r.exitCode).toBe(3);
    expect(r.stdout.length).toBeLessThanOrEqual(CHECK_OUTPUT_BYTES);
    expect(r.stdout.endsWith('last line\n')).toBe(true);
  });

  it('finds a contains text anywhere in stdout, before the kept tail too, and across the chunks it arrives in', async () => {
    const cwd = process.cwd();
    // The marker first, then more than the bound: the tail has lost it, the search has not.
    const early = await runArgv(['bash', '-c', `echo 'ünïcode OK ✓'; head -c ${CHECK_OUTPUT_BYTES + 1024 * 1024} /dev/zero | tr '\\0' x`], { cwd, timeoutMs: 60_000, contains: 'ünïcode OK ✓' });
    expect(early.stdout.includes('ünïcode OK ✓')).toBe(false);
    expect(early.containsSeen).toBe(true);
    // A marker written in two pieces, one write each, then the flood: the search has to join two chunks.
    const flood = `process.stdout.write('x'.repeat(${CHECK_OUTPUT_BYTES + 1024 * 1024}))`;
    const split = await runArgv([process.execPath, '-e', `process.stdout.write('ALL TE', () => setImmediate(() => process.stdout.write('STS OK', () => ${flood})))`], { cwd, timeoutMs: 60_000, contains: 'ALL TESTS OK' });
    expect(split.containsSeen).toBe(true);
    const absent = await runArgv(['bash', '-c', 'echo ALL TESTS FAILED'], { cwd, timeoutMs: 60_000, contains: 'ALL TESTS OK' });
    expect(absent.containsSeen).toBe(false);
    expect((await runArgv(['bash', '-c', 'echo hi'], { cwd, timeoutMs: 60_000 })).containsSeen).toBeUndefined();
  });

  it("reads output with universal newlines, as Looper's runner does: CRLF and a lone CR are each one LF", async () => {
    const cwd = process.cwd();
    const r = await runArgv(['bash', '-c', "printf 'one\\r\\ntwo\\rthree\\n'; printf 'err\\r\\n' >&2"], { cwd, timeoutMs: 10_000 });
    expect(r.stdout).toBe('one\ntwo\nthree\n');
    expect(r.stderr).toBe('err\n');
    // stdout_contains sees those lines too, with the CRLF split across two writes and past the kept tail.
    const flood = `process.stdout.write('x'.repeat(${CHECK_OUTPUT_BYTES + 1024 * 1024}))`;
    const split = await runArgv([process.execPath, '-e', `process.stdout.write('ok\\r', () => setImmediate(() => process.stdout.write('\\ndone', () => ${flood})))`], { cwd, timeoutMs: 60_000, contains: 'ok\ndone' });
    expect(split.stdout.includes('ok\ndone')).toBe(false);
    expect(split.containsSeen).toBe(true);
    // A CR as the very last byte is a line end too.
    expect((await runArgv(['bash', '-c', "printf 'last\\r'"], { cwd, timeoutMs: 10_000, contains: 'last\n' })).containsSeen).toBe(true);
    // A check printing CRLF never holds the two-byte sequence a needle could ask for.
    expect((await runArgv(['bash', '-c', "printf 'a\\r\\nb'"], { cwd, timeoutMs: 10_000, contains: 'a\r\nb' })).containsSeen).toBe(false);
  });
});
