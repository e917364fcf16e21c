// A command's output through real pipes (FIFOs), and what happens where none can be had.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const processJs = new URL('../dist/process.js', import.meta.url).pathname;

/** Runs a module script in a Node of its own (a pool of its own, limits of its own), its last line JSON. */
function inOwnNode(script: string, shellPrefix = '', env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' }): unknown {
  const out = execFileSync('/bin/bash', ['-c', `${shellPrefix}exec "$0" --input-type=module -e "$1"`, process.execPath, script], { encoding: 'utf8', env, timeout: 60_000 });
  return JSON.parse(out.trim().split('\n').pop() as string);
}

describe('runProcess output pipes', () => {
  it('gives many commands in a row and at once real pipes, and leaves no descriptor behind', () => {
    const script = `import { readdirSync } from 'node:fs';
import { runProcess } from ${JSON.stringify(processJs)};
const fds = () => readdirSync('/proc/self/fd').length;
const run = (cmd) => runProcess({ file: 'bash', args: ['-c', cmd], env: { PATH: process.env.PATH }, cwd: '/' });
await run('true');
const base = fds();
const many = await Promise.all(Array.from({ length: 20 }, (_, i) => run('echo ' + i + ' > /dev/stdout; echo e' + i + ' > /dev/stderr')));
// stdout and stderr are two pipes: which is read first when both have data is the scheduler's.
console.log(JSON.stringify({ ok: many.every((r, i) => r.exitCode === 0 && r.output.split('\\n').filter(Boolean).sort().join(' ') === i + ' e' + i), grew: fds() - base > 16 }));`;
    expect(inOwnNode(script)).toEqual({ ok: true, grew: false });
  });

  it("falls back to Node's own pipes where mkfifo is missing: the output is whole, only /dev/stdout cannot be opened", () => {
    const script = `import { runProcess } from ${JSON.stringify(processJs)};
const r = await runProcess({ file: '/bin/sh', args: ['-c', 'echo out; echo err >&2; { echo x > /dev/stdout; } 2>/dev/null || echo refused'], env: {}, cwd: '/' });
console.log(JSON.stringify([r.exitCode, r.output.split('\\n').sort()]));`;
    // Two sockets: the order of stdout and stderr lines is not kept, their content is.
    expect(inOwnNode(script, '', { PATH: '/nonexistent' })).toEqual([0, ['', 'err', 'out', 'refused']]);
  });

  it('gives a result, never a rejection or a crash, when descriptors run out', () => {
    // Each round fills the descriptor table, frees a few, and runs a command: through a FIFO, Node's pipes, or not at all.
    const script = `import { openSync, closeSync } from 'node:fs';
import { runProcess } from ${JSON.stringify(processJs)};
const seen = [];
for (let spare = 0; spare <= 12; spare++) {
  const fds = [];
  try { for (;;) fds.push(openSync('/dev/null', 'r')); } catch {}
  for (let i = 0; i < spare; i++) closeSync(fds.pop());
  const r = await runProcess({ file: '/bin/echo', args: ['hi'], env: {}, cwd: '/' }).catch((e) => ({ rejected: String(e) }));
  for (const fd of fds) closeSync(fd);
  seen.push(r.rejected ?? (r.exitCode === 0 ? r.output : r.exitCode));
}
console.log(JSON.stringify(seen));`;
    const seen = inOwnNode(script, 'ulimit -n 256 && ') as unknown[];
    expect(seen.every((s) => s === 'hi\n' || s === 127), JSON.stringify(seen)).toBe(true);
    expect(seen).toContain('hi\n');
  });
});
