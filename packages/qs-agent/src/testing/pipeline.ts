// `qs-validate TASK | qs-agent ARGS | qs-check` as a person types it, the real binaries in a real
// shell, run without blocking this process (a mock model server in the test answers from it).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = (p: string) => fileURLToPath(new URL(`../../../../${p}`, import.meta.url));
export const BIN = {
  validate: root('packages/qs-validate/bin/qs-validate.js'),
  agent: root('packages/qs-agent/bin/qs-agent.js'),
  check: root('packages/qs-check/bin/qs-check.js'),
};

export function typedPipeline(task: string, agentArgs: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const cmd = `set -o pipefail; node ${q(BIN.validate)} ${q(task)} | node ${q(BIN.agent)} ${agentArgs.map(q).join(' ')} | node ${q(BIN.check)}`;
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', cmd], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
