// What every backend provides: a way to run `bash -c` inside, the proxy URL commands see, and a close that kills all.
import type { DenialRules } from '../denials.js';
import type { LimitCounters, LimitWitness } from '../limit-hits.js';
import type { ProcInfo } from '../leftovers.js';
import type { BackendName } from '../types.js';

export interface BackendSession {
  readonly name: BackendName;
  readonly enforced: boolean;
  /** The HTTP proxy URL as seen from inside the sandbox. */
  readonly proxyUrl: string;
  /** Where a refused filesystem access can come from; only a backend that enforces the filesystem has them. */
  readonly denialRules?: DenialRules;
  /** The limits in force, the layout's folders and how full each tmpfs is; only a backend that enforces limits has them. */
  readonly limitWitness?: LimitWitness;
  /** The sandbox's own limit counters now (its cgroups'), read before and after each command; empty without cgroups. */
  limitCounters?(): LimitCounters;
  /**
   * The argv that runs `bash -c command` in the workspace inside the sandbox; `fd3`, a file the
   * process gets open read-only as fd 3 (under bwrap, the seccomp program its bwrap reads).
   */
  argv(command: string): { file: string; args: string[]; fd3?: string };
  /** True once the sandbox cannot run commands any more (a command killed its holder); a backend that cannot end has none. */
  ended?(): boolean;
  /** Remembers a command's process group so close() can kill what it left behind. */
  adopt(pgid: number): void;
  /** Kills every process started in the sandbox; resolves, when none is left, with the ones that had outlived their command. */
  close(): Promise<ProcInfo[]>;
}
