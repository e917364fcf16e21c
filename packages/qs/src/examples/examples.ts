// The bundled examples: tasks with their docs site, written to a temporary folder to run offline.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '@quickloop/cli-kit';
import { EXAMPLES } from './examples.generated.js';

export interface BundledExample {
  name: string;
  summary: string;
  /** The task's file name. */
  file: string;
  /** The task file's text. */
  task: string;
  /** Its docs route, in order. */
  route: string[];
  mode: 'replay+agent' | 'agent-only';
  /** The URL prefix its docs are served under (with --docs-map). */
  docsPrefix: string;
  /** Docs files by name, relative to the prefix. */
  docs: Record<string, string>;
}

export { EXAMPLES };

export function findExample(name: string): BundledExample {
  const found = EXAMPLES.find((e) => e.name === name);
  if (!found) throw new UsageError(`no example named '${name}'; available: ${EXAMPLES.map((e) => e.name).join(', ')}`);
  return found;
}

export interface Materialised {
  taskPath: string;
  /** The --docs-map argument that serves its docs. */
  docsMap: string;
  dir: string;
  remove(): void;
}

/** Writes the example's task and docs to a private temporary folder. */
export function materialise(example: BundledExample, base = tmpdir()): Materialised {
  const dir = mkdtempSync(join(base, `qs-example-${example.name}-`));
  const docsDir = join(dir, 'docs');
  mkdirSync(docsDir);
  for (const [file, text] of Object.entries(example.docs)) writeFileSync(join(docsDir, file), text);
  const taskPath = join(dir, example.file);
  writeFileSync(taskPath, example.task);
  return { taskPath, docsMap: `${example.docsPrefix}=${docsDir}`, dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
