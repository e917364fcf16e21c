// The session output expect_output reads: built from the stream, never from a file the agent could write.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Output of every bash tool.result that exited 0, in order, each ending in a newline — no commands,
 * no failed output, no setup, no docs (the prior art's definition, kept).
 */
export function sessionOutput(outputs: readonly string[]): string {
  return outputs.map((o) => (o.endsWith('\n') ? o : `${o}\n`)).join('');
}

/**
 * Writes it into the sandbox's tmp folder (the one folder besides the workspace and home that the
 * check can see under every backend) under an unguessable name, exclusively, after every agent
 * process is gone: nothing the agent did can have written or planted it. The workspace, which
 * the prior art used, is exactly where an agent could leave a fake.
 */
export function writeSessionLog(tmp: string, text: string): string {
  const file = join(tmp, `.qs-session-${randomBytes(8).toString('hex')}.log`);
  writeFileSync(file, text, { mode: 0o644, flag: 'wx' });
  return file;
}
