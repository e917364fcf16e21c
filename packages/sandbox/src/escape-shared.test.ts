// The third red-team battery: what a sandbox shares, by the kernel's own bookkeeping, with the
// harness that opened it and with the other sandboxes running beside it (qs run --workers N): state
// the kernel keeps per process tree or per user rather than per namespace. Each outcome is judged
// from the host (what the harness's keyring holds afterwards, what another sandbox could still do).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapUnavailable } from './backends/bwrap.js';
import { bundleLibraryInto } from './test-helpers.js';

const LIMITS = { processes: 128, memoryBytes: 512 * 1024 * 1024, tmpBytes: 16 * 1024 * 1024, shmBytes: 16 * 1024 * 1024 };

/** Runs a python program given as text (no shell quoting to get wrong). */
const python = (program: string): string => `python3 - <<'PY'\n${program}\nPY`;

beforeAll(() => {
  const problem = bwrapUnavailable();
  if (problem) throw new Error(`the enforced backend cannot run here: ${problem}`);
});

/** A harness of its own: opens a sandbox, runs each command, prints one JSON line of outputs. */
const HARNESS = `
import { openSandbox, removeLayout } from './sandbox.mjs';
const commands = JSON.parse(process.argv[2]);
const policy = { explicit: [], docs_hosts: [], registries: [], registries_source: 'default' };
const sb = await openSandbox({ policy, backend: 'bwrap', installHosts: false, limits: ${JSON.stringify(LIMITS)} });
const outputs = [];
for (const c of commands) outputs.push((await sb.exec(c, { timeoutMs: 30000 })).output);
await sb.close();
removeLayout(sb.describe());
console.log(JSON.stringify(outputs));
`;

/** The kernel's key calls, by number (x86_64, the ABI these tests run under). */
const KEYS = `
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(name, n, *a):
    r = libc.syscall(ctypes.c_long(n), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    if r < 0: print(name, errno.errorcode.get(ctypes.get_errno(), '?')); return None
    print(name, 'ok'); return r
SESSION = -3
# KEYCTL_SEARCH the session keyring for the harness's key, then KEYCTL_READ it.
found = call('search', 250, 10, SESSION, b'user', b'qs-harness-secret', 0)
if found is not None:
    buf = ctypes.create_string_buffer(64)
    n = libc.syscall(ctypes.c_long(250), ctypes.c_long(11), ctypes.c_long(found), buf, ctypes.c_long(64))
    print('stolen', buf.raw[:max(n, 0)].decode())
call('session_id', 250, 0, SESSION, 0)
call('add_key', 248, b'user', b'qs-planted-by-sandbox', b'x', 1, SESSION)
call('request_key', 249, b'user', b'qs-upcall', b'callout', SESSION)
call('join_session', 250, 1, b'qs-own')
`;

/**
 * On the host: gives the harness a session keyring of its own holding a secret, as a login session
 * (pam_keyinit) or a CI runner's keyring would, runs the harness in it, then says what the keyring
 * holds once it is done.
 */
const WITH_KEYRING = `
import ctypes, json, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def keyctl(*a): return libc.syscall(ctypes.c_long(250), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
assert keyctl(1, b'qs-harness-session') > 0
assert libc.syscall(ctypes.c_long(248), b'user', b'qs-harness-secret', b'harness-secret-value', ctypes.c_size_t(20), ctypes.c_long(-3)) > 0
run = subprocess.run(sys.argv[1:], capture_output=True, text=True)
planted = keyctl(10, -3, b'user', b'qs-planted-by-sandbox', 0) > 0
print(json.dumps({'code': run.returncode, 'out': run.stdout, 'err': run.stderr, 'planted': planted}))
`;

describe('what a sandbox shares with the harness that opened it', () => {
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'qs-shared-'));
    await bundleLibraryInto(dir);
    writeFileSync(join(dir, 'harness.mjs'), HARNESS);
    writeFileSync(join(dir, 'keyring.py'), WITH_KEYRING);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("the harness's session keyring is out of reach: its keys cannot be read, nor keys planted in it, nor an upcall asked for", async () => {
    const r = spawnSync('python3', [join(dir, 'keyring.py'), process.execPath, join(dir, 'harness.mjs'), JSON.stringify([python(KEYS)])], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const got = JSON.parse(r.stdout) as { code: number; out: string; err: string; planted: boolean };
    expect(got.code, got.err).toBe(0);
    const [output] = JSON.parse(got.out.trim().split('\n').at(-1) ?? '[]') as string[];
    expect(output).not.toContain('harness-secret-value');
    expect(Object.fromEntries((output ?? '').trim().split('\n').map((l) => l.split(' ') as [string, string]))).toEqual({
      search: 'EPERM',
      session_id: 'EPERM',
      add_key: 'EPERM',
      request_key: 'EPERM',
      join_session: 'EPERM',
    });
    expect(got.planted).toBe(false);
  });
});
