// The seccomp program, run here by a classic-BPF interpreter of its own over each ABI's numbers: the
// live probes (escape.test.ts) can only make the calls of the ABI the test itself runs under.
import { describe, expect, it } from 'vitest';
import { SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO, SECCOMP_RET_KILL_PROCESS, seccompProgram, seccompUnavailable } from './seccomp.js';

const ARCH = { x86_64: 0xc000003e, i386: 0x40000003, aarch64: 0xc00000b7, arm: 0x40000028, riscv64: 0xc00000f3 } as const;
const DENY = SECCOMP_RET_ERRNO | 1;

/** What the kernel would return for a syscall: loads of nr, arch and arguments, jumps on constants, returns. */
function run(program: Buffer, arch: number, nr: number, args: readonly bigint[] = []): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(nr | 0, 0);
  data.writeUInt32LE(arch, 4);
  args.forEach((a, i) => data.writeBigUInt64LE(BigInt.asUintN(64, a), 16 + i * 8));
  let acc = 0;
  for (let pc = 0, steps = 0; pc * 8 < program.length && steps < 4096; steps++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    pc += 1;
    if (code === 0x20) acc = data.readUInt32LE(k);
    else if (code === 0x05) pc += k;
    else if (code === 0x15) pc += acc === k ? jt : jf;
    else if (code === 0x35) pc += acc >= k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unexpected instruction ${code.toString(16)}`);
  }
  throw new Error('the program ran off its end');
}

describe('seccompProgram', () => {
  it('on x86_64 refuses ptrace, process_vm_readv/writev and pidfd_getfd with EPERM, for the 64-bit and the i386 ABI, and allows the rest', () => {
    const p = seccompProgram('x64') as Buffer;
    for (const nr of [101, 310, 311, 438]) expect(run(p, ARCH.x86_64, nr)).toBe(DENY);
    for (const nr of [26, 347, 348, 438]) expect(run(p, ARCH.i386, nr)).toBe(DENY);
    // read, write, kill, kcmp, perf_event_open, clone3; i386's chdir, read and ioperm (101, x86_64's ptrace).
    for (const nr of [0, 1, 62, 312, 298, 435]) expect(run(p, ARCH.x86_64, nr)).toBe(SECCOMP_RET_ALLOW);
    for (const nr of [12, 3, 101]) expect(run(p, ARCH.i386, nr)).toBe(SECCOMP_RET_ALLOW);
  });

  it("refuses the kernel's key calls (add_key, request_key, keyctl) for every ABI: a session keyring is inherited from the harness", () => {
    const cases = [['x64', ARCH.x86_64, [248, 249, 250]], ['x64', ARCH.i386, [286, 287, 288]], ['arm64', ARCH.aarch64, [217, 218, 219]], ['arm64', ARCH.arm, [309, 310, 311]]] as const;
    for (const [host, arch, numbers] of cases) {
      for (const nr of numbers) expect(run(seccompProgram(host) as Buffer, arch, nr), `${host} ${arch} ${nr}`).toBe(DENY);
    }
  });

  it('on x86_64 refuses every x32 call (bit 30), whose ptrace would otherwise be 0x40000209', () => {
    const p = seccompProgram('x64') as Buffer;
    for (const nr of [0x40000000, 0x40000000 + 521, 0x40000000 + 539, 0x40000000 + 540, 0x40000000 + 438, 0xffffffff]) expect(run(p, ARCH.x86_64, nr)).toBe(DENY);
  });

  it('on aarch64 refuses the same calls by the generic numbers, and by ARM compat numbers for 32-bit programs', () => {
    const p = seccompProgram('arm64') as Buffer;
    for (const nr of [117, 270, 271, 438]) expect(run(p, ARCH.aarch64, nr)).toBe(DENY);
    for (const nr of [26, 376, 377, 438]) expect(run(p, ARCH.arm, nr)).toBe(DENY);
    // aarch64's 26 is inotify_init1 and 101 nanosleep: numbers mean what their ABI says.
    for (const nr of [26, 101, 63, 64, 129, 272, 241]) expect(run(p, ARCH.aarch64, nr)).toBe(SECCOMP_RET_ALLOW);
    expect(run(p, ARCH.arm, 3)).toBe(SECCOMP_RET_ALLOW);
  });

  it("refuses prlimit64 on any process but the caller's own (pid 0), for every ABI: another's limits are another's", () => {
    // A limit set on the check's grep (RLIMIT_CPU 0) kills it, and `! grep -q ERROR` then passes.
    const cases = [['x64', ARCH.x86_64, 302], ['x64', ARCH.i386, 340], ['arm64', ARCH.aarch64, 261], ['arm64', ARCH.arm, 369]] as const;
    for (const [host, arch, nr] of cases) {
      const p = seccompProgram(host) as Buffer;
      expect(run(p, arch, nr, [0n, 0n]), `${host} ${arch} own`).toBe(SECCOMP_RET_ALLOW);
      for (const pid of [1n, 4242n, -1n, 1n << 32n]) expect(run(p, arch, nr, [pid]), `${host} ${arch} pid ${pid}`).toBe(DENY);
    }
  });

  it('kills a process that makes a call with an ABI whose numbers it does not know (fail closed)', () => {
    expect(run(seccompProgram('x64') as Buffer, ARCH.aarch64, 117)).toBe(SECCOMP_RET_KILL_PROCESS);
    expect(run(seccompProgram('x64') as Buffer, ARCH.riscv64, 0)).toBe(SECCOMP_RET_KILL_PROCESS);
    expect(run(seccompProgram('arm64') as Buffer, ARCH.x86_64, 0)).toBe(SECCOMP_RET_KILL_PROCESS);
  });

  it('is whole sock_filter records bwrap can read, and has none for a host architecture without a table (the enforced backend then says why)', () => {
    const p = seccompProgram('x64') as Buffer;
    expect(p.length % 8).toBe(0);
    expect(p.length / 8).toBeLessThan(64);
    expect(seccompProgram('riscv64')).toBeUndefined();
    expect(seccompUnavailable('riscv64')).toMatch(/no syscall table for riscv64/);
    expect(seccompUnavailable('x64')).toBeUndefined();
    expect(seccompUnavailable('arm64')).toBeUndefined();
  });
});
