// The host's npm, pip, git, wget and shell start-up config as a real bwrap sandbox shows it: a token in any of them is not readable inside, the rest is (a login shell still reads its profile to the end), and the original cannot be got back.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapUnavailable } from './backends/bwrap.js';
import { MAX_PROFILE_FILES, REMOVED_NOTE, WITHHELD_NOTE } from './config-files.js';
import { bundleLibraryInto } from './test-helpers.js';

/**
 * The harness, run as root in a mount namespace of its own where the host's config files are
 * replaced by the test's (the host's real /etc and /usr are never changed: other tests and sessions
 * share them): it opens a sandbox through the package's public API and runs each command in it.
 */
const PROBE = `
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { openSandbox } from './sandbox.mjs';
const [base, commands] = [process.argv[2], JSON.parse(process.argv[3])];
const policy = { explicit: [], docs_hosts: [], registries: [], registries_source: 'default' };
const sb = await openSandbox({ policy, backend: 'bwrap', baseDir: base });
const results = [];
for (const c of commands) {
  if (c !== '@lift-userns-cap') {
    results.push(await sb.exec(c, { timeoutMs: 60000 }));
    continue;
  }
  // The network layer (this process's one child, bash) caps user namespaces at the two the sandbox
  // needs; lifted, a command can make one of its own, and only the kernel's lock on the mounts it
  // inherits is left between it and the file under the copy.
  const layer = readdirSync('/proc').filter((p) => /^\\d+$/.test(p)).find((p) => {
    try {
      return readFileSync('/proc/' + p + '/stat', 'utf8').replace(/^.*\\) /s, '').split(' ')[1] === String(process.pid) && readFileSync('/proc/' + p + '/comm', 'utf8').trim() === 'bash';
    } catch {
      return false;
    }
  });
  execFileSync('nsenter', ['--target', layer, '--user', '--', 'sh', '-c', 'echo 16 > /proc/sys/user/max_user_namespaces']);
  results.push({ exitCode: 0, output: 'lifted ' + layer });
}
await sb.close();
console.log(JSON.stringify(results));
`;

const TOKEN = `qs-e2e-secret-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;

/** npm's global config file here (`npm config get globalconfig`, asked at run time: /usr/etc/npmrc for a /usr npm). */
let npmrc = '';
let registry = '';
/** Why the test cannot run on this machine, if it cannot. */
let skip: string | undefined;
let dir: string;

beforeAll(async () => {
  const problem = bwrapUnavailable();
  if (problem) throw new Error(`the enforced backend cannot run here: ${problem}`);
  if (process.getuid?.() !== 0) {
    skip = 'needs root: the host config files are replaced in a private mount namespace (unshare --mount)';
    return;
  }
  // Never a host name written in the repo: the registry is whatever npm is configured with.
  registry = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim();
  npmrc = execFileSync('npm', ['config', 'get', 'globalconfig'], { encoding: 'utf8' }).trim();
  dir = mkdtempSync(join(tmpdir(), 'qs-config-files-'));
  await bundleLibraryInto(dir);
  writeFileSync(join(dir, 'probe.mjs'), PROBE);
});
afterAll(() => {
  if (skip) console.warn(`skipped: ${skip}`);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Why a test cannot mount its files here: a host path it needs is missing (the test creates nothing in /etc or /usr). */
function unmountable(paths: string[]): string | undefined {
  const missing = paths.filter((p) => !existsSync(p));
  return missing.length > 0 ? `nothing to mount the test's files over (the host has no ${missing.join(', ')}, and the test creates nothing in /etc or /usr)` : undefined;
}

let fakes = 0;

/**
 * Runs the probe in a private mount namespace where each host path is the test's file (a string) or
 * folder (its files by name); resolves with each command's result.
 */
function probeWith(files: Record<string, string | Record<string, string>>, commands: string[]): Promise<Array<{ exitCode: number; output: string }>> {
  const binds = Object.entries(files).map(([target, content]) => {
    const fake = join(dir, `fake-${fakes++}`);
    if (typeof content === 'string') writeFileSync(fake, content, { mode: 0o644 });
    else {
      mkdirSync(fake, { mode: 0o755 });
      for (const [name, text] of Object.entries(content)) writeFileSync(join(fake, name), text, { mode: 0o644 });
    }
    return `mount --bind '${fake}' '${target}'`;
  });
  const script = `${binds.join(' && ')} && exec node probe.mjs "$1" "$2"`;
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['--mount', '--propagation', 'private', '--', 'sh', '-c', script, 'qs-config-probe', dir, JSON.stringify(commands)], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`the probe exited ${code}: ${err.trim()}`))));
  });
}

describe('host config files inside the enforced sandbox', () => {
  it('shows npm, pip, git and wget config without their credentials, the rest as it was, and the original cannot be got back', async (ctx) => {
    if (skip) ctx.skip(skip);
    const cannot = unmountable([npmrc, '/etc/pip.conf', '/etc/gitconfig', '/etc/wgetrc']);
    if (cannot) ctx.skip(cannot);
    const host = new URL(registry).host;
    const files = {
      [npmrc]: `; the registry this machine uses\nregistry=${registry}\n@qs-e2e:registry=${registry}\n//${host}/:_authToken=${TOKEN}\n_auth=${TOKEN}\nhttps-proxy=http://qs:${TOKEN}@proxy.example.test:3128/\n`,
      '/etc/pip.conf': `[global]\nindex-url = https://qs:${TOKEN}@index.example.test/simple\nextra-index-url =\n    https://mirror.example.test/simple\n    https://qs:${TOKEN}@other.example.test/simple\ntimeout = 60\n`,
      '/etc/gitconfig': `[user]\n\tname = quickloop e2e\n[http]\n\textraheader = AUTHORIZATION: bearer ${TOKEN}\n\tsslVerify = true\n[credential "https://git.example.test"]\n\thelper = store\n\tusername = ${TOKEN}\n[url "https://${TOKEN}@git.example.test/"]\n\tinsteadOf = https://git.example.test/\n`,
      '/etc/wgetrc': `passive_ftp = on\nhttp_password = ${TOKEN}\nheader = Authorization: Bearer ${TOKEN}\n`,
    };
    const [npmFile, npmGet, npmScoped, pip, git, gitList, wget, grep, umount, capped, lifted, nested] = await probeWith(files, [
      `cat '${npmrc}'`,
      'npm config get registry',
      'npm config get @qs-e2e:registry',
      'cat /etc/pip.conf',
      'cat /etc/gitconfig',
      'git config --system --list',
      'cat /etc/wgetrc',
      `grep -rlsF '${TOKEN}' /etc '${npmrc}'; echo grep=$?`,
      `umount '${npmrc}'; echo umount=$?; cat '${npmrc}'`,
      'unshare -Urm true; echo unshare=$?',
      '@lift-userns-cap',
      // /proc is read-only, so no uid map can be written for it: the namespace keeps its capabilities without one.
      `unshare -Um --keep-caps sh -c "grep -c ' ${npmrc} ' /proc/self/mountinfo; umount '${npmrc}'; echo umount=\\$?; umount -l '${npmrc}'; echo lazy=\\$?; cat '${npmrc}'"; echo unshare=$?`,
    ]);
    const all = [npmFile, npmGet, npmScoped, pip, git, gitList, wget, grep, umount, capped, lifted, nested];
    for (const r of all) expect(r?.output).not.toContain(TOKEN);
    expect(npmFile?.output).toBe(`; the registry this machine uses\nregistry=${registry}\n@qs-e2e:registry=${registry}\n${REMOVED_NOTE}\n${REMOVED_NOTE}\n${REMOVED_NOTE}\n`);
    expect(npmGet).toMatchObject({ exitCode: 0, output: `${registry}\n` });
    expect(npmScoped).toMatchObject({ exitCode: 0, output: `${registry}\n` });
    expect(pip?.output).toBe(`[global]\n${REMOVED_NOTE}\nextra-index-url =\n    https://mirror.example.test/simple\n    ${REMOVED_NOTE}\ntimeout = 60\n`);
    expect(git?.output).toContain('[user]\n\tname = quickloop e2e\n[http]\n');
    expect(gitList?.output).toBe('user.name=quickloop e2e\nhttp.sslverify=true\n');
    expect(wget?.output).toBe(`passive_ftp = on\n${REMOVED_NOTE}\n${REMOVED_NOTE}\n`);
    // No file named: 1 (nothing found) or 2 (some file of /etc unreadable to the sandbox user).
    expect(grep?.output).toMatch(/^grep=[12]\n$/);
    // The copy is mounted over the file: the sandbox user cannot unmount it, nor make a namespace of
    // its own to unmount it in (user namespaces are capped)…
    expect(umount?.output).toMatch(/umount=[1-9]\d*\n/);
    expect(umount?.output).toContain(`registry=${registry}\n`);
    expect(capped?.output).toMatch(/unshare=[1-9]\d*\n$/);
    // …and with the cap lifted, in a namespace of its own with every capability, the kernel keeps
    // the mounts it inherited locked together: the copy is mounted there (mountinfo), and cannot be
    // unmounted (EINVAL, which umount calls "not mounted").
    expect(lifted?.output).toMatch(/^lifted \d+$/);
    expect(nested?.output).toMatch(/^[1-9]\d*\n/);
    expect(nested?.output).toMatch(/umount=[1-9]\d*\n/);
    expect(nested?.output).toMatch(/lazy=[1-9]\d*\n/);
    expect(nested?.output).toContain(`registry=${registry}\n`);
    expect(nested?.output).toMatch(/\nunshare=0\n$/);
  });
  it('shows /etc/environment and /etc/profile.d without their tokens, and a login shell inside (bash, dash) still reads its profile to the end', async (ctx) => {
    if (skip) ctx.skip(skip);
    const cannot = unmountable(['/etc/environment', '/etc/profile', '/etc/profile.d']) ?? (statSync('/etc/profile.d').isDirectory() ? undefined : '/etc/profile.d is no folder');
    if (cannot) ctx.skip(cannot);
    const files = {
      '/etc/environment': `LANG=C.UTF-8\nGITHUB_TOKEN="${TOKEN}"\nPIP_INDEX_URL=https://qs:${TOKEN}@index.example.test/simple\n`,
      '/etc/profile.d': {
        'lang.sh': 'export LANG=C.UTF-8\n',
        'zz-secret.sh': [
          'export QS_E2E_PROFILE=loaded',
          `export NPM_TOKEN=${TOKEN}`,
          `export AWS_SECRET_ACCESS_KEY="${TOKEN}`,
          `${TOKEN}"`,
          'if [ -z "$GITHUB_TOKEN" ]; then',
          `  export GITHUB_TOKEN=${TOKEN}`,
          'fi',
          `if true; then export X_TOKEN=${TOKEN}`,
          'fi; export QS_E2E_AFTER=reached',
          '[ -n "$NPM_TOKEN" ] || export QS_E2E_NPM=unset',
          '',
        ].join('\n'),
        'zz-secret.csh': `setenv GITHUB_TOKEN ${TOKEN}\n`,
      },
    };
    const report = 'echo "lang=$LANG profile=$QS_E2E_PROFILE npm=\${QS_E2E_NPM-set} after=$QS_E2E_AFTER"; env';
    const [environment, snippet, csh, clean, login, dashLogin, grep] = await probeWith(files, [
      'cat /etc/environment',
      'cat /etc/profile.d/zz-secret.sh',
      'cat /etc/profile.d/zz-secret.csh',
      'cat /etc/profile.d/lang.sh',
      `bash -lc '${report}' 2>&1`,
      `sh -lc '${report}' 2>&1`,
      `grep -rlsF '${TOKEN}' /etc; echo grep=$?`,
    ]);
    for (const r of [environment, snippet, csh, clean, login, dashLogin, grep]) expect(r?.output).not.toContain(TOKEN);
    expect(environment?.output).toBe('LANG=C.UTF-8\nGITHUB_TOKEN=\nPIP_INDEX_URL=\n');
    expect(snippet?.output).toBe(
      [
        'export QS_E2E_PROFILE=loaded',
        `export NPM_TOKEN= ${REMOVED_NOTE}`,
        'export AWS_SECRET_ACCESS_KEY=\\',
        ` ${REMOVED_NOTE}`,
        'if [ -z "$GITHUB_TOKEN" ]; then',
        `  export GITHUB_TOKEN= ${REMOVED_NOTE}`,
        'fi',
        `if true; then export X_TOKEN= ${REMOVED_NOTE}`,
        'fi; export QS_E2E_AFTER=reached',
        '[ -n "$NPM_TOKEN" ] || export QS_E2E_NPM=unset',
        '',
      ].join('\n'),
    );
    expect(csh?.output).toBe(`${WITHHELD_NOTE}\n`);
    expect(clean?.output).toBe('export LANG=C.UTF-8\n');
    // The profile parses and runs to its end in both shells: the snippet's kept lines took effect, its tokens did not.
    for (const shell of [login, dashLogin]) {
      expect(shell).toMatchObject({ exitCode: 0 });
      expect(shell?.output).toMatch(/^lang=C\.UTF-8 profile=loaded npm=unset after=reached\n/);
      expect(shell?.output).not.toMatch(/syntax error|unexpected/i);
    }
    expect(grep?.output).toMatch(/^grep=[12]\n$/);
  });
  it('shows a /etc/profile.d of too many files as a folder holding only a note, and a login shell still starts', async (ctx) => {
    if (skip) ctx.skip(skip);
    const cannot = unmountable(['/etc/profile', '/etc/profile.d']) ?? (statSync('/etc/profile.d').isDirectory() ? undefined : '/etc/profile.d is no folder');
    if (cannot) ctx.skip(cannot);
    const crowded = Object.fromEntries(Array.from({ length: MAX_PROFILE_FILES + 1 }, (_, i) => [`f${i}.sh`, `export NPM_TOKEN=${TOKEN}\n`]));
    const [list, login, grep] = await probeWith({ '/etc/profile.d': crowded }, ['ls -A /etc/profile.d', `bash -lc 'echo "npm=\${NPM_TOKEN-unset}"' 2>&1`, `grep -rlsF '${TOKEN}' /etc; echo grep=$?`]);
    for (const r of [list, login, grep]) expect(r?.output).not.toContain(TOKEN);
    expect(list?.output).toBe('README\n');
    expect(login).toMatchObject({ exitCode: 0, output: 'npm=unset\n' });
    expect(grep?.output).toMatch(/^grep=[12]\n$/);
  });
});
