// What the tests of qs-agent against each vendor's API share: the vendors, qs-check's binary, and the
// removal after each test of the sandboxes and mock servers it made.
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import { removeLayout } from '@quickloop/sandbox';

export type Vendor = 'anthropic' | 'openai' | 'openai-chat' | 'gemini';
export const VENDORS: Vendor[] = ['anthropic', 'openai', 'openai-chat', 'gemini'];

export const QS_CHECK = fileURLToPath(new URL('../../../qs-check/bin/qs-check.js', import.meta.url));

/** Registers the afterEach that removes what a test made: the sandboxes its events name, and its servers. */
export function cleanedAfterEach(): { sandboxesOf: (events: Array<Record<string, unknown>>) => void; closeLater: (close: () => Promise<void>) => void } {
  const made: string[] = [];
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const root of made.splice(0)) removeLayout({ root });
    for (const c of closers.splice(0)) await c();
  });
  return {
    sandboxesOf: (events) => {
      for (const e of events) if (e.type === 'sandbox.ready') made.push(String(e.root));
    },
    closeLater: (close) => {
      closers.push(close);
    },
  };
}
