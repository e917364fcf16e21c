// What a start of a built bin loads: the bin runs under a preload that writes, at exit, every
// builtin Node loaded, so a test can say a start did (or did not) pay for a module.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RecordedStart {
  status: number | null;
  stdout: string;
  stderr: string;
  /** process.moduleLoadList at exit (`NativeModule child_process`, …). */
  builtins: string[];
}

/** Runs `node BIN ARGS…` in `cwd` with stdin empty and QUICKLOOP_DEBUG=1 (the code cache says whether it was used). */
export function startRecorded(bin: string, args: string[], cwd: string): RecordedStart {
  const dir = mkdtempSync(join(tmpdir(), 'quickloop-startup-'));
  try {
    const hook = join(dir, 'record.cjs');
    const list = join(dir, 'builtins.txt');
    writeFileSync(hook, `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')));\n`);
    const r = spawnSync(process.execPath, ['--require', hook, bin, ...args], { cwd, input: '', encoding: 'utf8', env: { ...process.env, QUICKLOOP_DEBUG: '1' } });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, builtins: readFileSync(list, 'utf8').split('\n') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
