// Resource limits of the enforced backend: what is asked for, what sandbox.ready says, and that each one really stops a runaway command.
import { describe, expect, it } from 'vitest';
import { confine, DEFAULT_LIMITS, limitsFrom, makeLimits, resolveLimits } from './limits.js';
import { openSandbox } from './open.js';
import { removeLayout } from './layout.js';
import type { Sandbox } from './types.js';

const policy = { explicit: [], docs_hosts: [], registries: [], registries_source: 'default' as const };
const MiB = 1024 ** 2;

describe('resolveLimits and limitsFrom', () => {
  it('takes positive integers and keeps the defaults for the rest', () => {
    expect(resolveLimits()).toEqual(DEFAULT_LIMITS);
    expect(resolveLimits({ processes: 10, memoryBytes: 0, tmpBytes: -1, shmBytes: 1.5 })).toEqual({ ...DEFAULT_LIMITS, processes: 10 });
  });

  it('reads back what sandbox.ready listed, so a later stage re-opens under the same limits', () => {
    const { cgroups } = makeLimits({ processes: 7, memoryBytes: 64 * MiB, tmpBytes: 8 * MiB, shmBytes: 4 * MiB });
    try {
      expect(limitsFrom(cgroups.inForce)).toEqual({ processes: 7, memoryBytes: 64 * MiB, tmpBytes: 8 * MiB, shmBytes: 4 * MiB });
      expect(limitsFrom(undefined)).toEqual({});
    } finally {
      void cgroups.remove();
    }
  });

  it('joins every cgroup before anything runs, then applies the rlimits', () => {
    expect(confine({ procs: [], inForce: [], counters: () => ({}), remove: async () => undefined }, [])).toEqual([]);
    const argv = confine({ procs: ['/cg/a/cgroup.procs', '/cg/b/cgroup.procs'], inForce: [], counters: () => ({}), remove: async () => undefined }, ['--nproc=5:5']);
    expect(argv.slice(0, 2)).toEqual(['sh', '-c']);
    expect(argv.slice(3)).toEqual(['quickloop-confine', '2', '/cg/a/cgroup.procs', '/cg/b/cgroup.procs', 'prlimit', '--nproc=5:5', '--']);
  });
});

describe('limits in the bwrap sandbox', () => {
  const small = { processes: 48, memoryBytes: 256 * MiB, tmpBytes: 8 * MiB, shmBytes: 4 * MiB };
  const open = async (): Promise<Sandbox> => openSandbox({ policy, backend: 'bwrap', installHosts: false, limits: small });
  const close = async (sb: Sandbox): Promise<void> => {
    await sb.close();
    removeLayout(sb.describe());
  };

  it('lists each limit with what enforces it', async () => {
    const sb = await open();
    try {
      const limits = sb.describe().limits;
      expect(limits.map((l) => [l.name, l.value])).toEqual([
        ['processes', 48],
        ['memory', 256 * MiB],
        ['/tmp', 8 * MiB],
        ['/var/tmp', 8 * MiB],
        ['/dev/shm', 4 * MiB],
      ]);
      for (const l of limits) expect(['cgroup_v2', 'cgroup_v1', 'rlimit', 'tmpfs']).toContain(l.enforced_by);
      // A root harness may make cgroups: then the whole sandbox is one budget, not each process.
      if (process.getuid?.() === 0) expect(limits.filter((l) => l.scope === 'sandbox')).toHaveLength(5);
    } finally {
      await close(sb);
    }
  });

  it('stops a fork bomb at the process limit, and the host and the next command are fine', async () => {
    const sb = await open();
    try {
      // Forks until the kernel says no (EAGAIN): far more are asked for than the limit allows.
      const bomb = "import os, time\nn = 0\ntry:\n    while n < 1000:\n        if os.fork() == 0:\n            os.closerange(0, 3)\n            time.sleep(60)\n            os._exit(0)\n        n += 1\n    print('never stopped')\nexcept OSError as e:\n    print('stopped after', n, 'errno', e.errno)\n";
      const r = await sb.exec(`python3 -c "${bomb.replace(/"/g, '\\"')}"`, { timeoutMs: 20_000 });
      const m = /stopped after (\d+) errno 11/.exec(r.output);
      expect(m, r.output).not.toBeNull();
      expect(Number(m?.[1])).toBeLessThan(small.processes);
      // The next command still runs, with the bomb's processes still holding their share.
      expect((await sb.exec('echo alive')).output).toBe('alive\n');
    } finally {
      await close(sb);
    }
  });

  it('kills a memory balloon at the memory limit, without taking the sandbox down', async () => {
    const sb = await open();
    try {
      const r = await sb.exec(`node -e 'const a=[]; for (let i=0;i<40;i++) a.push(Buffer.alloc(16<<20, 1)); console.log("survived")'`, { timeoutMs: 30_000 });
      expect(r.exitCode).not.toBe(0);
      expect(r.output).not.toContain('survived');
      expect((await sb.exec('echo still-here')).output).toBe('still-here\n');
    } finally {
      await close(sb);
    }
  });

  it('fills the private /tmp and /dev/shm only up to their size', async () => {
    const sb = await open();
    try {
      const r = await sb.exec('head -c 32M /dev/zero > /tmp/fill; echo tmp=$?; head -c 32M /dev/zero > /dev/shm/fill; echo shm=$?; wc -c < /tmp/fill; wc -c < /dev/shm/fill');
      expect(r.output).toMatch(/No space left on device/);
      expect(r.output).toMatch(/tmp=1\n/);
      expect(r.output).toMatch(/shm=1\n/);
      const [tmp, shm] = r.output.trim().split('\n').slice(-2).map(Number);
      expect(tmp).toBeLessThanOrEqual(8 * MiB);
      expect(shm).toBeLessThanOrEqual(4 * MiB);
    } finally {
      await close(sb);
    }
  });
});
