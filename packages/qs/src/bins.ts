// Finds the stage binaries `qs run` pipes together: the workspace's own, else the ones on PATH.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const STAGES = ['qs-validate', 'qs-sandbox', 'qs-agent', 'qs-check'] as const;
export type StageName = (typeof STAGES)[number];

/** argv to start a stage: `node <its bin file>` when installed beside qs, else the bare name. */
export function stageCommand(name: StageName): { file: string; args: string[] } {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const bin = join(dir, 'node_modules', '@quickloop', name, 'bin', `${name}.js`);
    if (existsSync(bin)) return { file: process.execPath, args: [bin] };
    const up = dirname(dir);
    if (up === dir) return { file: name, args: [] };
    dir = up;
  }
}

/** argv to start one attempt of a sweep (bin/attempt.js beside qs's own bin: src/attempt.ts). */
export function attemptCommand(): { file: string; args: string[] } {
  return { file: process.execPath, args: [fileURLToPath(new URL('../bin/attempt.js', import.meta.url))] };
}
