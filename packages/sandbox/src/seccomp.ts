// The seccomp program every process of the enforced sandbox runs under: no process may reach into
// another's memory, registers or descriptors. Classic BPF, written here byte for byte (bwrap reads
// the compiled program from an fd), so no native addon or compiler is needed at run time.

/**
 * Without Yama, any process of the sandbox user may trace any other that runs a readable binary.
 * A check's verdict is its shell's exit code, and the shell decides on what its tools (`grep`, `curl`)
 * exit with; the agent's programs the check runs (its server, its scripts) run beside those tools as
 * the same user, and one that attached to the check's `grep` made a failing check pass. Refused:
 * tracing (ptrace: attach, seize, PTRACE_TRACEME alike), reading or writing another process's memory
 * (process_vm_readv/writev) and taking another process's descriptors (pidfd_getfd: a pipe or socket
 * of the check's tools). Allowed, because they only observe or only signal, which the sandbox user
 * may do anyway: kcmp (compares two processes' kernel objects), perf_event_open (samples; the
 * profiler `perf` needs it), kill.
 *
 * Refused too: the kernel's key calls (add_key, request_key, keyctl). A session keyring is the
 * process tree's, not a namespace's: every process inherits its parent's through fork, exec,
 * setuid and every namespace, so a command possessed the harness's own (a login session's, a CI
 * runner's), read the secrets kept in it and planted keys in it, and two sandboxes of one harness
 * shared it. request_key would also have the kernel start the host's request-key helper, as root.
 */
export const DENIED_SYSCALLS = ['ptrace', 'process_vm_readv', 'process_vm_writev', 'pidfd_getfd', 'add_key', 'request_key', 'keyctl'] as const;

/**
 * prlimit64 on any process but the caller's own (pid 0, which is what setrlimit, getrlimit and
 * `ulimit` pass): the kernel asks only whether the two are the same user, so the agent's server set
 * RLIMIT_CPU 0 on the check's grep, which the kernel then killed, and `! grep -q ERROR log` passed.
 */
export const OWN_ONLY_SYSCALLS = ['prlimit64'] as const;

type Denied = (typeof DENIED_SYSCALLS)[number] | (typeof OWN_ONLY_SYSCALLS)[number];

interface Abi {
  /** seccomp_data.arch: AUDIT_ARCH_*, which says how the number is to be read. */
  arch: number;
  numbers: Record<Denied, number>;
  /** x86_64's x32 ABI: the same arch, numbers with bit 30 set. */
  x32?: boolean;
}

// A syscall's number means nothing without its ABI: 26 is ptrace for i386 and ARM, but
// chdir on aarch64. Each ABI the host's kernel can run is checked with its own table.
const X86_64: Abi = { arch: 0xc000003e, numbers: { ptrace: 101, process_vm_readv: 310, process_vm_writev: 311, pidfd_getfd: 438, add_key: 248, request_key: 249, keyctl: 250, prlimit64: 302 }, x32: true };
const I386: Abi = { arch: 0x40000003, numbers: { ptrace: 26, process_vm_readv: 347, process_vm_writev: 348, pidfd_getfd: 438, add_key: 286, request_key: 287, keyctl: 288, prlimit64: 340 } };
const AARCH64: Abi = { arch: 0xc00000b7, numbers: { ptrace: 117, process_vm_readv: 270, process_vm_writev: 271, pidfd_getfd: 438, add_key: 217, request_key: 218, keyctl: 219, prlimit64: 261 } };
const ARM: Abi = { arch: 0x40000028, numbers: { ptrace: 26, process_vm_readv: 376, process_vm_writev: 377, pidfd_getfd: 438, add_key: 309, request_key: 310, keyctl: 311, prlimit64: 369 } };

/** The ABIs a host's kernel runs programs with, by Node's name for its architecture: the native one and its 32-bit compat. */
const HOST_ABIS: Partial<Record<NodeJS.Architecture, readonly Abi[]>> = { x64: [X86_64, I386], arm64: [AARCH64, ARM] };

const X32_SYSCALL_BIT = 0x40000000;
const EPERM = 1;

// struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
/** args[0], little-endian: its low and high 32 bits. */
const ARG0_LO_OFFSET = 16;
const ARG0_HI_OFFSET = 20;

const LD_W_ABS = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const RET_K = 0x06; // BPF_RET | BPF_K

export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;

interface Insn {
  code: number;
  k: number;
  /** Jump targets by label, for the jumps; resolved to the u8 offsets from the next instruction. */
  jt?: string;
  jf?: string;
  label?: string;
}

/**
 * The program for this host, as bwrap's `--seccomp FD` reads it (struct sock_filter, 8 bytes each,
 * the host's byte order: little-endian on both architectures here), or undefined when the host's
 * architecture has no table here. A syscall made with an ABI the program does not know kills its
 * process: with numbers it cannot read, the program cannot say the call is harmless (fail closed).
 */
export function seccompProgram(arch: NodeJS.Architecture = process.arch): Buffer | undefined {
  const abis = HOST_ABIS[arch];
  if (abis === undefined) return undefined;
  return encode(assemble(abis));
}

/** Why the enforced sandbox cannot refuse ptrace on this host, or undefined when it can. */
export function seccompUnavailable(arch: NodeJS.Architecture = process.arch): string | undefined {
  if (HOST_ABIS[arch] !== undefined) return undefined;
  return `the sandbox's seccomp filter (no ptrace between its processes) has no syscall table for ${arch}; it has them for ${Object.keys(HOST_ABIS).join(', ')}`;
}

function assemble(abis: readonly Abi[]): Insn[] {
  const out: Insn[] = [{ code: LD_W_ABS, k: ARCH_OFFSET }];
  abis.forEach((abi, i) => out.push({ code: JEQ_K, k: abi.arch, jt: `abi${i}`, jf: 'next' }));
  out.push({ code: RET_K, k: SECCOMP_RET_KILL_PROCESS });
  abis.forEach((abi, i) => {
    out.push({ code: LD_W_ABS, k: NR_OFFSET, label: `abi${i}` });
    // Every x32 call, not only x32's own numbers for these: the kernel runs them as x86_64 calls.
    if (abi.x32) out.push({ code: JGE_K, k: X32_SYSCALL_BIT, jt: 'deny', jf: 'next' });
    for (const name of DENIED_SYSCALLS) out.push({ code: JEQ_K, k: abi.numbers[name], jt: 'deny', jf: 'next' });
    for (const name of OWN_ONLY_SYSCALLS) out.push({ code: JEQ_K, k: abi.numbers[name], jt: 'own', jf: 'next' });
    out.push({ code: RET_K, k: SECCOMP_RET_ALLOW });
  });
  // The target pid is args[0]: allowed only when all 64 bits are 0 (a 32-bit ABI's are zero-extended).
  out.push({ code: LD_W_ABS, k: ARG0_LO_OFFSET, label: 'own' });
  out.push({ code: JEQ_K, k: 0, jt: 'next', jf: 'deny' });
  out.push({ code: LD_W_ABS, k: ARG0_HI_OFFSET });
  out.push({ code: JEQ_K, k: 0, jt: 'allow', jf: 'deny' });
  out.push({ code: RET_K, k: SECCOMP_RET_ALLOW, label: 'allow' });
  out.push({ code: RET_K, k: SECCOMP_RET_ERRNO | EPERM, label: 'deny' });
  return out;
}

function encode(program: readonly Insn[]): Buffer {
  const at = new Map(program.flatMap((insn, i) => (insn.label === undefined ? [] : [[insn.label, i] as const])));
  const offset = (from: number, label: string | undefined): number => {
    if (label === undefined || label === 'next') return 0;
    const to = at.get(label);
    const jump = to === undefined ? -1 : to - from - 1;
    // Classic BPF jumps only forwards, at most 255 instructions.
    if (jump < 0 || jump > 255) throw new Error(`seccomp program: no forward jump from ${from} to ${label}`);
    return jump;
  };
  const buf = Buffer.alloc(program.length * 8);
  program.forEach((insn, i) => {
    buf.writeUInt16LE(insn.code, i * 8);
    buf.writeUInt8(offset(i, insn.jt), i * 8 + 2);
    buf.writeUInt8(offset(i, insn.jf), i * 8 + 3);
    buf.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
  });
  return buf;
}
