// Test helpers: find host processes by a marker in their argv, and a policy builder. Not exported by the package.
import { readdirSync, readFileSync } from 'node:fs';
import type { EgressPolicy } from './types.js';

/** Host pids whose command line contains `marker`: what survives is seen from outside every namespace. */
export function pidsWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1];
      if (cmdline.includes(marker) && state !== 'Z') found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

export function policy(p: Partial<EgressPolicy> = {}): EgressPolicy {
  return { explicit: [], docs_hosts: [], registries: [], registries_source: 'default', ...p };
}

/** A marker unique to one test run, so parallel test files never see each other's processes. */
export function marker(label: string): string {
  return `qs-${label}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}
