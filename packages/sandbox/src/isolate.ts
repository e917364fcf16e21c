// The isolate wrapper: a program of a few instructions, written here byte for byte as an ELF file, that puts what it runs in a Landlock domain of its own.

/**
 * A check's verdict is its shell's exit code, decided on what its tools (`grep`, `curl`) exit with,
 * and the check serves the agent's own program beside them (`success.serve`), as the same user. The
 * seccomp filter and the read-only /proc keep that program from tracing the tools or writing their
 * memory, but the kernel still let it kill them (so `! grep -q ERROR` passed) and open their pipes
 * through /proc/PID/fd (so `producer | grep -q READY` found what it wrote). A Landlock domain ends
 * both, for the program and everything it starts, and for nothing else: a process in a domain may
 * not signal a process outside it (LANDLOCK_SCOPE_SIGNAL, Landlock ABI 6, Linux 6.12), nor pass the
 * kernel's ptrace access check on one (every Landlock ABI), which opening another process's fds,
 * memory or environment through /proc needs. The check's shell, outside, still signals and waits for
 * what it served.
 *
 * The wrapper asks for a domain that handles only the making of block devices (which an
 * unprivileged user cannot do anyway; a domain must handle something) and, where the kernel knows
 * it, scopes signals; a kernel before ABI 6 refuses that larger request, and gets the smaller one.
 * Without Landlock at all, or if the domain cannot be entered, it runs the program as it is (the
 * sandbox is then what it was without the wrapper). Then it execs argv[1] (a path: no PATH search)
 * with argv[1..] and the environment as given; 127 when that exec fails.
 */
export const ISOLATE_INSIDE = '/opt/quickloop/libexec/isolate';

/**
 * x86_64 code, loaded at ISOLATE_BASE + CODE_OFFSET (as `as --64` assembled it):
 *
 *   lea rdi,[rip+0x65]; mov esi,24; xor edx,edx; mov eax,444; syscall  landlock_create_ruleset(&attr, 24, 0)
 *   test eax,eax; jns have
 *   lea rdi,[rip+0x4c]; mov esi,8; xor edx,edx; mov eax,444; syscall   the same, handled_access_fs only
 *   test eax,eax; js run
 * have:
 *   mov ebx,eax; mov edi,ebx; xor esi,esi; mov eax,446; syscall        landlock_restrict_self(fd, 0)
 *   mov edi,ebx; mov eax,3; syscall                                    close(fd)
 * run:
 *   mov rcx,[rsp]; lea rsi,[rsp+16]; mov rdi,[rsi]; lea rdx,[rsp+rcx*8+16]; mov eax,59; syscall
 *                                                                      execve(argv[1], argv+1, envp)
 *   mov edi,127; mov eax,231; syscall                                  exit_group(127)
 * attr: struct landlock_ruleset_attr { handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_BLOCK (1 << 11),
 *   handled_access_net = 0, scoped = LANDLOCK_SCOPE_SIGNAL (1 << 1) }
 */
const X86_64_CODE =
  '488d3d65000000be1800000031d2b8bc0100000f0585c07919488d3d4c000000be0800000031d2b8bc0100000f0585c07816' +
  '89c389df31f6b8be0100000f0589dfb8030000000f05' +
  '488b0c24488d742410488b3e488d54cc10b83b0000000f05bf7f000000b8e70000000f05' +
  '000800000000000000000000000000000200000000000000';

const ISOLATE_BASE = 0x400000;
const ELF_HEADER = 64;
const PROGRAM_HEADER = 56;
const CODE_OFFSET = ELF_HEADER + PROGRAM_HEADER;
const EM_X86_64 = 0x3e;

/**
 * The wrapper for this host as a static ELF executable, or undefined where it has no code here
 * (arm64 and others: a served program then runs without a domain of its own).
 */
export function isolateProgram(arch: NodeJS.Architecture = process.arch): Buffer | undefined {
  if (arch !== 'x64') return undefined;
  const code = Buffer.from(X86_64_CODE, 'hex');
  const size = CODE_OFFSET + code.length;
  const elf = Buffer.alloc(size);
  // e_ident: ELF, 64-bit, little-endian, version 1, System V.
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]).copy(elf, 0);
  elf.writeUInt16LE(2, 16); // e_type: ET_EXEC
  elf.writeUInt16LE(EM_X86_64, 18);
  elf.writeUInt32LE(1, 20); // e_version
  elf.writeBigUInt64LE(BigInt(ISOLATE_BASE + CODE_OFFSET), 24); // e_entry
  elf.writeBigUInt64LE(BigInt(ELF_HEADER), 32); // e_phoff
  elf.writeUInt16LE(ELF_HEADER, 52); // e_ehsize
  elf.writeUInt16LE(PROGRAM_HEADER, 54); // e_phentsize
  elf.writeUInt16LE(1, 56); // e_phnum
  // One PT_LOAD of the whole file, readable and executable.
  const ph = ELF_HEADER;
  elf.writeUInt32LE(1, ph); // p_type: PT_LOAD
  elf.writeUInt32LE(5, ph + 4); // p_flags: PF_R | PF_X
  elf.writeBigUInt64LE(0n, ph + 8); // p_offset
  elf.writeBigUInt64LE(BigInt(ISOLATE_BASE), ph + 16); // p_vaddr
  elf.writeBigUInt64LE(BigInt(ISOLATE_BASE), ph + 24); // p_paddr
  elf.writeBigUInt64LE(BigInt(size), ph + 32); // p_filesz
  elf.writeBigUInt64LE(BigInt(size), ph + 40); // p_memsz
  elf.writeBigUInt64LE(0x1000n, ph + 48); // p_align
  code.copy(elf, CODE_OFFSET);
  return elf;
}
