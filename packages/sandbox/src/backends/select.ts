// Picks the backend: what was asked for, or for `auto` the best one this machine can run, with the reason.
import { UsageError } from '@quickloop/cli-kit';
import type { BackendChoice, BackendName } from '../types.js';
import { bwrapUnavailable, bwrapVersion } from './bwrap.js';

export interface Selection {
  backend: BackendName;
  reason: string;
}

/** The probe makes a real namespace (~10 ms); its answer holds for the life of the process. */
let probed: string | undefined | null = null;
function bwrapProblem(): string | undefined {
  if (probed === null) probed = bwrapUnavailable();
  return probed;
}

/** Throws a UsageError for a request that cannot be honoured; never falls back silently to `local`. */
export function selectBackend(choice: BackendChoice, allowUnenforced: boolean): Selection {
  if (choice === 'local') {
    if (!allowUnenforced) throw new UsageError('the local backend enforces nothing (no filesystem, network or process limits); pass --allow-unenforced to use it');
    return { backend: 'local', reason: 'asked for local (--allow-unenforced): nothing is enforced' };
  }
  const problem = bwrapProblem();
  if (choice === 'bwrap') {
    if (problem) throw new UsageError(`--backend bwrap: ${problem}`);
    return { backend: 'bwrap', reason: `asked for bwrap (${bwrapVersion()})` };
  }
  if (!problem) return { backend: 'bwrap', reason: `auto: ${bwrapVersion()} can make namespaces here` };
  if (allowUnenforced) return { backend: 'local', reason: `auto: bwrap unavailable (${problem}); local allowed by --allow-unenforced, nothing is enforced` };
  throw new UsageError(`no enforced backend is available: ${problem}. Install it, or pass --allow-unenforced to run with the local backend`);
}
