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
 * Writes it into the sandbox's root folder, beside the marker, under an unguessable name,
 * exclusively, after every agent process is gone. Under the enforced backend that folder is
 * read-only inside, so nothing the check starts (a `serve` command is the agent's own program) can
 * replace it; the workspace and tmp, which the sandbox user owns, are exactly where a fake could be
 * left.
 */
export function writeSessionLog(root: string, text: string): string {
  const file = join(root, `.qs-session-${randomBytes(8).toString('hex')}.log`);
  writeFileSync(file, text, { mode: 0o644, flag: 'wx' });
  return file;
}
