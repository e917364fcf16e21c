// Test helpers for qs-sandbox: fixture streams, parsed output, and removal of the workspaces a test made.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { removeLayout } from '@quickloop/sandbox';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const STREAMS = `${REPO}fixtures/streams/qs-sandbox/`;

export const stream = (name: string): string => readFileSync(`${STREAMS}${name}`, 'utf8');

export type OutEvent = Record<string, unknown> & { type: string; run_id: string };

export const parseOut = (text: string): OutEvent[] =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as OutEvent);

/** Removes every workspace a stage announced in `events`. */
export function cleanup(events: OutEvent[]): void {
  for (const e of events) if (e.type === 'sandbox.ready') removeLayout({ root: String(e.root) });
}

/** A task.loaded line with its fields changed by `edit` (fixtures stay the source of the shape). */
export function editedTask(edit: (task: Record<string, any>) => void, name = 'setup.ndjson'): string {
  const event = JSON.parse(stream(name).split('\n')[0] ?? '') as Record<string, any>;
  edit(event);
  return `${JSON.stringify(event)}\n`;
}

/** Host pids whose command line contains (or starts with) `marker`, zombies aside: what survives a stage, seen from outside. */
export function pidsWith(marker: string, atStart = false): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1];
      if ((atStart ? cmdline.startsWith(marker) : cmdline.includes(marker)) && state !== 'Z' && Number(entry) !== process.pid) found.push(Number(entry));
    } catch {
      // It ended while we looked.
    }
  }
  return found;
}
