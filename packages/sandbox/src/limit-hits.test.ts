// Commands that ran into the sandbox's own limits: the lines that say so, and the real bwrap backend's counters.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLimitLine } from './limit-hits.js';
import { openSandbox } from './open.js';
import { removeLayout } from './layout.js';
import type { Sandbox } from './types.js';

const MiB = 1024 ** 2;
const policy = { explicit: [], docs_hosts: [], registries: [], registries_source: 'default' as const };

describe('parseLimitLine (the text fallback)', () => {
  it.each([
    ['bash: fork: retry: Resource temporarily unavailable', 'processes'],
    ['bash: fork: Resource temporarily unavailable', 'processes'],
    ['sh: 1: Cannot fork', 'processes'],
    ['BlockingIOError: [Errno 11] Resource temporarily unavailable', 'processes'],
    ['Error: spawn EAGAIN', 'processes'],
    ['clone: Resource temporarily unavailable', 'processes'],
    ['runtime: failed to create new OS thread (have 8 already; errno=11)', 'processes'],
    ['java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or process/resource limits reached', 'processes'],
    ['  #  Assertion failed: (0) == (uv_thread_create(t.get(), start_thread, this))', 'processes'],
    ['MemoryError', 'memory'],
    ['numpy.core._exceptions._ArrayMemoryError: Unable to allocate 8.00 GiB for an array', 'memory'],
    ['bash: fork: Cannot allocate memory', 'memory'],
    ['OSError: [Errno 12] Cannot allocate memory', 'memory'],
    ['FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory', 'memory'],
    ["terminate called after throwing an instance of 'std::bad_alloc'", 'memory'],
    ['fatal error: runtime: out of memory', 'memory'],
    ['memory allocation of 68719476736 bytes failed', 'memory'],
    ["OSError: [Errno 28] No space left on device: '/tmp/x'", 'space'],
    ["ENOSPC: no space left on device, open '/dev/shm/y'", 'space'],
    ["head: error writing 'standard output': No space left on device", 'space'],
  ])('%s → %s', (line, limit) => {
    expect(parseLimitLine(line)?.kind).toBe(limit);
  });

  it('names the path an ENOSPC line gives, and reads no other line as a hit', () => {
    expect(parseLimitLine("OSError: [Errno 28] No space left on device: '/tmp/x'")?.path).toBe('/tmp/x');
    expect(parseLimitLine("cp: error writing '/var/tmp/big': No space left on device")?.path).toBe('/var/tmp/big');
    expect(parseLimitLine("head: error writing 'standard output': No space left on device")?.path).toBeUndefined();
    for (const line of ['flock: failed to get lock: Resource temporarily unavailable', 'read: Resource temporarily unavailable', 'memory: 12 MiB used', 'npm test', 'Killed', '']) {
      expect(parseLimitLine(line), line).toBeUndefined();
    }
  });
});

describe('limit hits on the bwrap backend', () => {
  // The layout on a disk of 4 MiB, as a small CI runner's is: only root can mount one.
  it.runIf(process.getuid?.() === 0)('sees the host disk that holds the workspace run full, whatever the tool says', async () => {
    const disk = mkdtempSync(join(tmpdir(), 'qs-small-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=755', 'tmpfs', disk]);
    let small: Sandbox | undefined;
    try {
      small = await openSandbox({ policy, backend: 'bwrap', installHosts: false, baseDir: disk });
      const fine = await small.exec('head -c 1M /dev/zero > ok.bin');
      expect(fine.limitHits).toEqual([]);
      // head names no file ("error writing 'standard output'"), and bash's echo nothing at all.
      const r = await small.exec('head -c 8M /dev/zero > big.bin; echo more >> big.bin');
      expect(r.exitCode).not.toBe(0);
      expect(r.output).toMatch(/No space left on device/);
      expect(r.limitHits).toEqual([expect.objectContaining({ limit: 'disk', value: 4 * MiB, unit: 'bytes', enforced_by: 'none', detected_from: 'statfs', exit_code: 1 })]);
      await small.close();
      removeLayout(small.describe());
    } finally {
      await small?.close();
      execFileSync('umount', [disk]);
      rmSync(disk, { recursive: true, force: true });
    }
  });

  const small = { processes: 48, memoryBytes: 256 * MiB, tmpBytes: 8 * MiB, shmBytes: 4 * MiB };
  let sb: Sandbox;
  // Each test opens its own: a fork bomb's sleepers hold the process limit until the sandbox closes.
  const open = async (): Promise<Sandbox> => (sb = await openSandbox({ policy, backend: 'bwrap', installHosts: false, limits: small }));
  const close = async (): Promise<void> => {
    await sb.close();
    removeLayout(sb.describe());
  };
  it('sees a fork bomb stopped at the process limit: the limit, its value, what enforces it, the line', async () => {
    await open();
    try {
      // Forks until the kernel says no (EAGAIN), and dies of it: far more are asked for than the limit allows.
      const bomb = 'import os, time\nfor n in range(1000):\n    if os.fork() == 0:\n        os.closerange(0, 3)\n        time.sleep(60)\n        os._exit(0)\n';
      const r = await sb.exec(`python3 -c "${bomb}"`, { timeoutMs: 20_000 });
      expect(r.exitCode, r.output).not.toBe(0);
      const processes = sb.describe().limits.find((l) => l.name === 'processes');
      const hit = r.limitHits.find((h) => h.limit === 'processes');
      expect(hit, JSON.stringify(r.limitHits)).toMatchObject({ limit: 'processes', value: 48, unit: 'count', enforced_by: processes?.enforced_by, exit_code: r.exitCode });
      expect(hit?.line).toContain('Resource temporarily unavailable');
      // With a cgroup the sandbox's own counter says it, not the text.
      if (processes?.enforced_by.startsWith('cgroup')) expect(hit).toMatchObject({ detected_from: 'counter', counter: 'pids.events max' });
      expect(hit?.count ?? 1).toBeGreaterThan(0);
      // The next command is a command of its own: its counters start from where the last one left them.
      const next = await sb.exec('echo alive');
      expect(next.output).toBe('alive\n');
      expect(next.limitHits).toEqual([]);
    } finally {
      await close();
    }
  });

  it('sees a memory balloon killed at the memory limit', async () => {
    await open();
    try {
      const r = await sb.exec(`python3 -c 'a = bytearray(1024 ** 3); print("survived")'`, { timeoutMs: 20_000 });
      expect(r.output).not.toContain('survived');
      const memory = sb.describe().limits.find((l) => l.name === 'memory');
      const hit = r.limitHits.find((h) => h.limit === 'memory');
      expect(hit, `${r.exitCode} ${r.output} ${JSON.stringify(r.limitHits)}`).toMatchObject({ limit: 'memory', value: 256 * MiB, unit: 'bytes', enforced_by: memory?.enforced_by, exit_code: r.exitCode });
      if (memory?.enforced_by.startsWith('cgroup')) expect(hit?.detected_from).toBe('counter');
    } finally {
      await close();
    }
  });

  it('reads an allocation no machine gives from the failed command\'s output, and nothing from one that got past it', async () => {
    await open();
    try {
      const r = await sb.exec(`python3 -c 'a = bytearray(64 * 1024 ** 3)'`, { timeoutMs: 20_000 });
      expect(r.exitCode).toBe(1);
      expect(r.limitHits).toEqual([expect.objectContaining({ limit: 'memory', value: 256 * MiB, detected_from: 'stderr', line: 'MemoryError', exit_code: 1 })]);
      const shrugged = await sb.exec(`python3 -c 'a = bytearray(64 * 1024 ** 3)' || echo fell back`, { timeoutMs: 20_000 });
      expect(shrugged.exitCode).toBe(0);
      expect(shrugged.limitHits).toEqual([]);
    } finally {
      await close();
    }
  });

  it('tells a full private tmpfs from the workspace disk', async () => {
    await open();
    try {
      const r = await sb.exec('head -c 32M /dev/zero > /tmp/fill', { timeoutMs: 20_000 });
      expect(r.exitCode).not.toBe(0);
      expect(r.limitHits).toEqual([expect.objectContaining({ limit: '/tmp', value: 8 * MiB, unit: 'bytes', enforced_by: 'tmpfs' })]);
      // A tmpfs an earlier command left full would be named too (the line says no more than ENOSPC): empty it first.
      await sb.exec('rm /tmp/fill');
      const shm = await sb.exec("python3 -c 'open(\"/dev/shm/fill\", \"wb\").write(bytes(32 << 20))'", { timeoutMs: 20_000 });
      expect(shm.limitHits).toEqual([expect.objectContaining({ limit: '/dev/shm', value: 4 * MiB, enforced_by: 'tmpfs', exit_code: 1 })]);
      // The workspace is the host's disk, not a tmpfs: an ENOSPC naming it is the host's disk running
      // out (no limit of the sandbox's, and no more the docs' doing than a full tmpfs is).
      const ws = await sb.exec(`echo "cp: error writing '${sb.describe().workspace}/x': No space left on device" >&2; exit 1`);
      expect(ws.limitHits).toEqual([expect.objectContaining({ limit: 'disk', unit: 'bytes', enforced_by: 'none', detected_from: 'stderr', exit_code: 1 })]);
      expect(ws.limitHits[0]?.value).toBeGreaterThan(0);
    } finally {
      await close();
    }
  });
});
