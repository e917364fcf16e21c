// What a run may use under the enforced backend: processes and memory (cgroups, else rlimits) and the size of its private tmpfs.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Payload } from '@quickloop/events';
import type { Counter, LimitCounters } from './limit-hits.js';
import { UsageError } from '@quickloop/cli-kit';
import { hasCommand } from './rootfs.js';

export interface SandboxLimits {
  /** Processes (and threads) alive at once in the whole sandbox. */
  processes: number;
  /** Memory of the whole sandbox (its tmpfs pages included) in bytes. */
  memoryBytes: number;
  /** Size of the private /tmp and of /var/tmp, each, in bytes. */
  tmpBytes: number;
  /** Size of /dev/shm in bytes. */
  shmBytes: number;
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/**
 * Enough for a real framework install (npm spawns a few dozen processes and peaks under 2 GiB for a
 * large tree), small enough that a fork bomb or a runaway build stops long before the host suffers.
 */
export const DEFAULT_LIMITS: SandboxLimits = { processes: 1024, memoryBytes: 4 * GiB, tmpBytes: 1 * GiB, shmBytes: 256 * MiB };

/** One limit as sandbox.ready lists it. */
export type LimitInForce = Payload<'sandbox.ready'>['limits'] extends Array<infer L> | undefined ? L : never;

const SIZE_UNITS: Record<string, number> = { '': 1, k: 1024, m: MiB, g: GiB, t: 1024 * GiB };

/** A size flag's value: bytes, or a number with K, M, G or T (powers of 1024; `KiB`, `MB` read alike), at least `min` bytes. */
export function parseSize(value: string, flag: string, min: number): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(value);
  const bytes = m ? Math.floor(Number(m[1]) * (SIZE_UNITS[(m[2] as string).toLowerCase()] as number)) : NaN;
  const least = min >= GiB ? `${min / GiB}G` : `${Math.round(min / MiB)}M`;
  if (!Number.isSafeInteger(bytes) || bytes < min) throw new UsageError(`${flag} ${value}: not a size of at least ${least} (a number of bytes, or with K, M, G or T: 500M, 5G)`);
  return bytes;
}

/** The command-line flags that set a sandbox limit, as qs-sandbox and qs run take them. */
export const LIMIT_FLAGS = { processes: 'max-processes', memoryBytes: 'max-memory', tmpBytes: 'max-tmp', shmBytes: 'max-shm' } as const satisfies Record<keyof SandboxLimits, string>;

/**
 * The limits given by `--max-processes N`, `--max-memory SIZE`, `--max-tmp SIZE`, `--max-shm SIZE`
 * (undefined for a flag not given). Each is a usage error naming its flag when it is no number, or too
 * small for a shell and an installer to start (16 processes, 64M of memory, 1M of /tmp or /dev/shm).
 */
export function limitsFromFlags(args: object, prefix = ''): Partial<SandboxLimits> {
  const out: Partial<SandboxLimits> = {};
  const given = (flag: string): string | undefined => {
    const v = (args as Record<string, unknown>)[flag];
    return v === undefined ? undefined : String(v);
  };
  const processes = given(LIMIT_FLAGS.processes);
  if (processes !== undefined) {
    if (!/^\s*\d+\s*$/.test(processes) || Number(processes) < 16 || !Number.isSafeInteger(Number(processes))) throw new UsageError(`${prefix}--${LIMIT_FLAGS.processes} ${processes}: not a whole number of at least 16`);
    out.processes = Number(processes);
  }
  for (const [key, min] of [['memoryBytes', 64 * MiB], ['tmpBytes', MiB], ['shmBytes', MiB]] as const) {
    const v = given(LIMIT_FLAGS[key]);
    if (v !== undefined) out[key] = parseSize(v, `${prefix}--${LIMIT_FLAGS[key]}`, min);
  }
  return out;
}

/** The flags that give `limits` again, for a stage started with them. */
export function limitFlagsOf(limits: Partial<SandboxLimits>): string[] {
  return (Object.keys(LIMIT_FLAGS) as Array<keyof SandboxLimits>).flatMap((k) => (limits[k] === undefined ? [] : [`--${LIMIT_FLAGS[k]}`, String(limits[k])]));
}

/** The limits asked for, each checked: a positive integer, or the default. */
export function resolveLimits(asked: Partial<SandboxLimits> = {}): SandboxLimits {
  const out = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as Array<keyof SandboxLimits>) {
    const v = asked[key];
    if (v !== undefined && Number.isSafeInteger(v) && v > 0) out[key] = v;
  }
  return out;
}

/** The limit a sandbox.ready or sandbox.limit_hit names (`processes`, `memory`, `/tmp`, `/var/tmp`, `/dev/shm`), as a SandboxLimits key. */
export function limitKeyOf(name: string): keyof SandboxLimits | undefined {
  if (name === 'processes') return 'processes';
  if (name === 'memory') return 'memoryBytes';
  if (name === '/tmp' || name === '/var/tmp') return 'tmpBytes';
  return name === '/dev/shm' ? 'shmBytes' : undefined;
}

/** Reads the limits a sandbox.ready listed, so a later stage re-opens the sandbox under the same ones. */
export function limitsFrom(listed: readonly LimitInForce[] | undefined): Partial<SandboxLimits> {
  const out: Partial<SandboxLimits> = {};
  for (const l of listed ?? []) {
    const key = limitKeyOf(l.name);
    if (key !== undefined) out[key] = l.value;
  }
  return out;
}

interface Hierarchy {
  version: 'v1' | 'v2';
  /** The folder of this process's own cgroup in the hierarchy. */
  dir: string;
}

function mounts(): Array<{ point: string; fstype: string; options: string }> {
  try {
    return readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter(Boolean).map((line) => {
      const [pre = '', post = ''] = line.split(' - ');
      const f = pre.split(' ');
      const g = post.split(' ');
      return { point: (f[4] ?? '').replace(/\\040/g, ' '), fstype: g[0] ?? '', options: g[2] ?? '' };
    });
  } catch {
    return [];
  }
}

/** Where this process's cgroup is for a controller: the v2 unified hierarchy when it has the controller, else v1's. */
function hierarchyFor(controller: 'pids' | 'memory'): Hierarchy | undefined {
  let own: string[] = [];
  try {
    own = readFileSync('/proc/self/cgroup', 'utf8').split('\n').filter(Boolean);
  } catch {
    return undefined;
  }
  const all = mounts();
  const v2 = all.find((m) => m.fstype === 'cgroup2');
  const v2Path = own.find((l) => l.startsWith('0::'))?.slice(3);
  if (v2 && v2Path !== undefined) {
    const dir = join(v2.point, v2Path);
    try {
      if (readFileSync(join(dir, 'cgroup.controllers'), 'utf8').split(/\s+/).includes(controller)) return { version: 'v2', dir };
    } catch {
      // not readable: try v1
    }
  }
  const v1 = all.find((m) => m.fstype === 'cgroup' && m.options.split(',').includes(controller));
  const line = own.find((l) => l.split(':')[1]?.split(',').includes(controller));
  if (v1 && line) return { version: 'v1', dir: join(v1.point, line.split(':').slice(2).join(':')) };
  return undefined;
}

/** The cgroups of one sandbox, made for it and removed at close. */
export interface Cgroups {
  /** `cgroup.procs` files a process writes its pid into to join (one per hierarchy). */
  procs: string[];
  inForce: LimitInForce[];
  /** The sandbox's own refusal and kill counters now (limit-hits.ts reads them around each command). */
  counters(): LimitCounters;
  /** Removes the folders once their processes are gone (bounded wait). */
  remove(): Promise<void>;
}

/** `key N` lines (pids.events, memory.events, memory.oom_control): the value of one key, or undefined. */
function keyed(file: string, key: string): number | undefined {
  try {
    const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(readFileSync(file, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The counters that say a limit refused or killed something, per sandbox (its own cgroup). Not
 * memory.events `max` nor v1's memory.failcnt: those count every time usage touched the limit,
 * which reclaiming page cache does all through a large install that never fails.
 */
function countersOf(pids: { h: Hierarchy; dir: string } | undefined, mem: { h: Hierarchy; dir: string } | undefined): LimitCounters {
  const out: LimitCounters = {};
  if (pids) {
    // v1 and v2 alike: `max N`, the forks and clones pids.max refused.
    const value = keyed(join(pids.dir, 'pids.events'), 'max');
    if (value !== undefined) out.processes = { counter: 'pids.events max', value };
  }
  if (mem) {
    let c: Counter | undefined;
    if (mem.h.version === 'v2') {
      // `oom`: usage reached memory.max and an allocation was about to fail (a kill follows, or the allocation fails).
      const value = keyed(join(mem.dir, 'memory.events'), 'oom');
      if (value !== undefined) c = { counter: 'memory.events oom', value };
    } else {
      // v1 has no such count but the kills (kernel 4.13 and later); under_oom is a state, and the OOM killer is never turned off here.
      const value = keyed(join(mem.dir, 'memory.oom_control'), 'oom_kill');
      if (value !== undefined) c = { counter: 'memory.oom_control oom_kill', value };
    }
    if (c) out.memory = c;
  }
  return out;
}

function tryMake(controller: 'pids' | 'memory', name: string, value: number): { h: Hierarchy; dir: string } | undefined {
  const h = hierarchyFor(controller);
  if (!h) return undefined;
  const dir = join(h.dir, name);
  try {
    if (!existsSync(dir)) mkdirSync(dir);
    if (h.version === 'v2') {
      const file = controller === 'pids' ? 'pids.max' : 'memory.max';
      if (!existsSync(join(dir, file))) {
        rmdirSync(dir);
        return undefined;
      }
      writeFileSync(join(dir, file), String(value));
      if (controller === 'memory' && existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
    } else {
      writeFileSync(join(dir, controller === 'pids' ? 'pids.max' : 'memory.limit_in_bytes'), String(value));
    }
    return { h, dir };
  } catch {
    try {
      rmdirSync(dir);
    } catch {
      // never made, or not ours to remove
    }
    return undefined;
  }
}

/**
 * Makes the sandbox's cgroups where the harness may (root, or a delegated v2 subtree); a limit no
 * cgroup can hold falls back to an rlimit set on every process the sandbox starts (the rlimit is per
 * process for memory and per user for processes, and says so).
 */
export function makeLimits(limits: SandboxLimits): { cgroups: Cgroups; rlimits: string[] } {
  const name = `quickloop-${randomBytes(6).toString('hex')}`;
  const made: Array<{ h: Hierarchy; dir: string }> = [];
  const inForce: LimitInForce[] = [];
  const rlimits: string[] = [];
  const prlimit = hasCommand('prlimit');
  const pids = tryMake('pids', name, limits.processes);
  if (pids) {
    made.push(pids);
    inForce.push({ name: 'processes', value: limits.processes, unit: 'count', enforced_by: pids.h.version === 'v2' ? 'cgroup_v2' : 'cgroup_v1', scope: 'sandbox' });
  } else if (prlimit) {
    rlimits.push(`--nproc=${limits.processes}:${limits.processes}`);
    inForce.push({ name: 'processes', value: limits.processes, unit: 'count', enforced_by: 'rlimit', scope: 'user' });
  } else inForce.push({ name: 'processes', value: limits.processes, unit: 'count', enforced_by: 'none', scope: 'sandbox' });
  const mem = tryMake('memory', name, limits.memoryBytes);
  if (mem) {
    // One hierarchy may carry both controllers (v2, or v1 with them co-mounted): join it once.
    if (!made.some((m) => m.dir === mem.dir)) made.push(mem);
    inForce.push({ name: 'memory', value: limits.memoryBytes, unit: 'bytes', enforced_by: mem.h.version === 'v2' ? 'cgroup_v2' : 'cgroup_v1', scope: 'sandbox' });
  } else if (prlimit) {
    // RLIMIT_DATA, not RLIMIT_AS: V8 and WebAssembly reserve far more address space than they use.
    rlimits.push(`--data=${limits.memoryBytes}:${limits.memoryBytes}`);
    inForce.push({ name: 'memory', value: limits.memoryBytes, unit: 'bytes', enforced_by: 'rlimit', scope: 'process' });
  } else inForce.push({ name: 'memory', value: limits.memoryBytes, unit: 'bytes', enforced_by: 'none', scope: 'sandbox' });
  // No core dump leaves the sandbox: a core_pattern that pipes to a host program (a crash reporter) runs
  // it in the host's namespaces, as root, fed the sandboxed process's memory. A limit of 1 is the one
  // the kernel honours for a pipe too (it skips the dump), and no command can raise it again.
  if (prlimit) rlimits.push('--core=1:1');
  inForce.push({ name: '/tmp', value: limits.tmpBytes, unit: 'bytes', enforced_by: 'tmpfs', scope: 'sandbox' });
  inForce.push({ name: '/var/tmp', value: limits.tmpBytes, unit: 'bytes', enforced_by: 'tmpfs', scope: 'sandbox' });
  inForce.push({ name: '/dev/shm', value: limits.shmBytes, unit: 'bytes', enforced_by: 'tmpfs', scope: 'sandbox' });
  const dirs = [...new Set([pids?.dir, mem?.dir].filter((d): d is string => d !== undefined))];
  return {
    rlimits,
    cgroups: {
      procs: made.map((m) => join(m.dir, 'cgroup.procs')),
      inForce,
      counters: () => countersOf(pids, mem),
      remove: async () => {
        for (const dir of dirs) {
          // A killed process leaves its cgroup only once reaped; rmdir says EBUSY until then.
          for (let i = 0; i < 200; i++) {
            try {
              rmdirSync(dir);
              break;
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code === 'ENOENT') break;
              await new Promise((r) => setTimeout(r, 10));
            }
          }
        }
      },
    },
  };
}

/**
 * The argv prefix that puts a process into the sandbox's cgroups and under its rlimits before it runs
 * anything: it joins while it is still this tiny shell, so nothing it starts is ever outside.
 */
export function confine(cgroups: Cgroups, rlimits: readonly string[]): string[] {
  const out: string[] = [];
  if (cgroups.procs.length > 0) {
    out.push('sh', '-c', 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"', 'quickloop-confine', String(cgroups.procs.length), ...cgroups.procs);
  }
  if (rlimits.length > 0) out.push('prlimit', ...rlimits, '--');
  return out;
}
