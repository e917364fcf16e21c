// The denial parser over error lines real tools printed inside the enforced backend, and what it must not take for one.
import { describe, expect, it } from 'vitest';
import { classify, DenialScanner, MAX_DENIALS, parseDenialLine, type DenialRules } from './denials.js';

/** The host these lines are read against: what it has, whatever machine the test runs on. */
const HOST = new Set(['/root', '/root/.bashrc', '/home', '/run', '/var/run', '/etc', '/etc/shadow', '/usr', '/srv', '/srv/qs']);
const rules: DenialRules = {
  writable: ['/srv/qs/workspace', '/srv/qs/home', '/srv/qs/tmp', '/tmp', '/var/tmp', '/dev/shm'],
  visible: ['/usr', '/etc/ssl'],
  own: ['/srv/qs/workspace', '/srv/qs/home', '/srv/qs/tmp', '/srv/qs'],
  exists: (p) => HOST.has(p),
};

const denial = (line: string): ReturnType<typeof classify> => {
  const claim = parseDenialLine(line);
  return claim && classify(claim, rules);
};

// Captured from commands run in a bwrap sandbox (bash 5, coreutils 9, git, node 20, python 3).
const REAL: Array<[string, string, 'write' | 'read', 'read_only' | 'hidden']> = [
  ['bash: line 1: /etc/qsx: Read-only file system', '/etc/qsx', 'write', 'read_only'],
  ["touch: cannot touch '/etc/qsx': Read-only file system", '/etc/qsx', 'write', 'read_only'],
  ['mkdir: cannot create directory ‘/usr/local/qsd’: Read-only file system', '/usr/local/qsd', 'write', 'read_only'],
  ["mkdir: cannot create directory '/usr/local/a b': Read-only file system", '/usr/local/a b', 'write', 'read_only'],
  ["cp: cannot create regular file '/usr/qsc': Read-only file system", '/usr/qsc', 'write', 'read_only'],
  ["mv: cannot move '/etc/hostname' to '/usr/qsm': Read-only file system", '/usr/qsm', 'write', 'read_only'],
  ["rm: cannot remove '/etc/hostname': Read-only file system", '/etc/hostname', 'write', 'read_only'],
  ["ln: failed to create symbolic link '/etc/qsl': Read-only file system", '/etc/qsl', 'write', 'read_only'],
  ['tee: /etc/qst: Read-only file system', '/etc/qst', 'write', 'read_only'],
  ["chmod: changing permissions of '/etc/hostname': Read-only file system", '/etc/hostname', 'write', 'read_only'],
  ['sed: couldn\'t open temporary file /etc/sedFlHx5X: Read-only file system', '/etc/sedFlHx5X', 'write', 'read_only'],
  ['fatal: cannot mkdir /etc/qsg: Read-only file system', '/etc/qsg', 'write', 'read_only'],
  ['error: could not lock config file /etc/qsgc: Read-only file system', '/etc/qsgc', 'write', 'read_only'],
  ["Error: EROFS: read-only file system, open '/etc/qsn'", '/etc/qsn', 'write', 'read_only'],
  ["Error: EROFS: read-only file system, mkdir '/usr/qsn'", '/usr/qsn', 'write', 'read_only'],
  ["npm error rofs EROFS: read-only file system, mkdir '/usr/lib/node_modules/left-pad'", '/usr/lib/node_modules/left-pad', 'write', 'read_only'],
  ["npm error rofs EROFS: read-only file system, symlink '../../../srv/qs/workspace/pkg' -> '/usr/lib/node_modules/pkg'", '/usr/lib/node_modules/pkg', 'write', 'read_only'],
  ["OSError: [Errno 30] Read-only file system: '/etc/qsp'", '/etc/qsp', 'write', 'read_only'],
  ["ERROR: Could not install packages due to an OSError: [Errno 30] Read-only file system: '/usr/lib/python3/dist-packages/six.py'", '/usr/lib/python3/dist-packages/six.py', 'write', 'read_only'],
  ['cat: /root/.bashrc: No such file or directory', '/root/.bashrc', 'read', 'hidden'],
  ["ls: cannot access '/home/nobody/x': No such file or directory", '/home/nobody/x', 'read', 'hidden'],
  ["head: cannot open '/root/x' for reading: No such file or directory", '/root/x', 'read', 'hidden'],
  ["touch: cannot touch '/root/nope/x': No such file or directory", '/root/nope/x', 'write', 'hidden'],
  ["FileNotFoundError: [Errno 2] No such file or directory: '/root/.qsp'", '/root/.qsp', 'read', 'hidden'],
  ["Error: ENOENT: no such file or directory, open '/root/.npmrc'", '/root/.npmrc', 'read', 'hidden'],
  ["Error: ENOENT: no such file or directory, mkdir '/run/user/0/x'", '/run/user/0/x', 'write', 'hidden'],
  ['cat: /var/run/docker.sock: No such file or directory', '/var/run/docker.sock', 'read', 'hidden'],
  ['cat: /etc/shadow: No such file or directory', '/etc/shadow', 'read', 'hidden'],
  ["cat: '/srv/other/x': No such file or directory", '/srv/other/x', 'read', 'hidden'],
  ['cat: ../../../root/.npmrc: No such file or directory', '/root/.npmrc', 'read', 'hidden'],
];

describe('parseDenialLine and classify', () => {
  it.each(REAL)('%s', (line, path, operation, reason) => {
    expect(denial(line)).toEqual({ path, operation, reason });
  });

  it('takes a relative path of a read-only failure as printed', () => {
    expect(denial('bash: line 1: x.conf: Read-only file system')).toEqual({ path: 'x.conf', operation: 'write', reason: 'read_only' });
  });

  const NOT: Array<[string, string]> = [
    ['a missing file in the workspace', 'cat: missing.txt: No such file or directory'],
    ['a missing absolute file in the workspace', "ls: cannot access '/srv/qs/workspace/dist': No such file or directory"],
    ['a missing file the host does not have either, in a folder the sandbox shows', 'cat: /etc/nothing-here: No such file or directory'],
    ['a missing file under a system folder', 'cat: /usr/lib/nothing: No such file or directory'],
    ['a missing top-level folder the host does not have', 'cat: /nothing/x: No such file or directory'],
    ['a relative missing file that resolves into the workspace', 'cat: src/x.ts: No such file or directory'],
    ['a missing file in the private /tmp', "Error: ENOENT: no such file or directory, open '/tmp/lock'"],
    ['a read-only claim about a writable folder (it can only be a mention)', '/srv/qs/workspace/x: Read-only file system'],
    ['a read-only claim about the private /tmp', "touch: cannot touch '/tmp/x': Read-only file system"],
    ['a permission error from a file mode', 'bash: line 1: ./run.sh: Permission denied'],
    ['a permission error on an ordinary host file', 'cat: /var/log/btmp: Permission denied'],
    ['a permission error on a secret file (it is absent inside, not masked)', 'cat: /etc/shadow: Permission denied'],
    ['a line that only contains the words', 'hint: mount it writable if you see "Read-only file system" errors'],
    ['an ordinary line', 'added 1 package in 2s'],
  ];
  it.each(NOT)('records nothing for %s', (_why, line) => {
    expect(denial(line)).toBeUndefined();
  });
});

describe('DenialScanner', () => {
  it('reads lines split across chunks and streams, once per path and operation, in order', () => {
    const s = new DenialScanner(rules);
    s.push('stderr', Buffer.from('touch: cannot touch '));
    s.push('stdout', Buffer.from('progress 50%\n'));
    s.push('stderr', Buffer.from("'/etc/a': Read-only file system\ncat: /root/k: No such file"));
    s.push('stderr', Buffer.from(' or directory\nbash: line 2: /etc/a: Read-only file system\n'));
    s.push('stdout', Buffer.from("Error: EROFS: read-only file system, open '/usr/b'"));
    expect(s.end()).toEqual([
      { path: '/etc/a', operation: 'write', reason: 'read_only', detected_from: 'stderr', line: "touch: cannot touch '/etc/a': Read-only file system" },
      { path: '/root/k', operation: 'read', reason: 'hidden', detected_from: 'stderr', line: 'cat: /root/k: No such file or directory' },
      { path: '/usr/b', operation: 'write', reason: 'read_only', detected_from: 'stdout', line: "Error: EROFS: read-only file system, open '/usr/b'" },
    ]);
  });

  it('keeps a multi-byte character split between chunks intact', () => {
    const s = new DenialScanner(rules);
    const line = Buffer.from('mkdir: cannot create directory ‘/usr/é’: Read-only file system\n');
    s.push('stderr', line.subarray(0, 33));
    s.push('stderr', line.subarray(33));
    expect(s.end().map((d) => d.path)).toEqual(['/usr/é']);
  });

  it(`stops at ${MAX_DENIALS} denials per command`, () => {
    const s = new DenialScanner(rules);
    for (let i = 0; i < 100; i++) s.push('stderr', Buffer.from(`cp: cannot create regular file '/usr/f${i}': Read-only file system\n`));
    expect(s.end()).toHaveLength(MAX_DENIALS);
  });
});
