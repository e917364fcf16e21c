// The config-file sanitizer: every credential line of npm's, pip's, wget's, git's, uv's and gem's config taken out, everything else kept byte for byte.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { coverConfigs, hasCredentialUrl, MAX_CONFIG_BYTES, REMOVED_NOTE, sanitizeConfig, type ConfigFormat } from './config-files.js';
import type { RootPlan } from './rootfs.js';

/**
 * `text` with the lines at `indices` (0-based) as the sanitizer writes a removed line: the note at
 * the line's own indentation, with the line's own ending.
 */
function removedAt(text: string, ...indices: number[]): string {
  const parts = text.split(/(?<=\n)/);
  return parts
    .map((p, i) => {
      if (!indices.includes(i)) return p;
      const end = p.endsWith('\r\n') ? '\r\n' : p.endsWith('\n') ? '\n' : '';
      return `${/^[ \t]*/.exec(p)?.[0] ?? ''}${REMOVED_NOTE}${end}`;
    })
    .join('');
}

/** Each line alone: kept as it is. */
function keepsEach(format: ConfigFormat, lines: string[]): void {
  for (const line of lines) expect(sanitizeConfig(`${line}\n`, format), line).toBe(`${line}\n`);
}

/** Each line alone: removed. */
function removesEach(format: ConfigFormat, lines: string[]): void {
  for (const line of lines) expect(sanitizeConfig(`${line}\n`, format), line).toBe(removedAt(`${line}\n`, 0));
}

describe('sanitizeConfig: npmrc', () => {
  it('keeps the registries, the CA settings, comments and everything else that is no credential', () => {
    const text = [
      '; the registry this machine uses',
      '# the token lives with the harness, not here',
      'registry=https://registry.example.test/',
      '@scope:registry = https://registry.example.test/npm/scope/',
      'cafile=/etc/ssl/certs/ca-certificates.crt',
      'strict-ssl=false',
      'always-auth=false',
      'fund=false',
      'registry=${REGISTRY_URL}',
      '[section]',
      '',
    ].join('\n');
    expect(sanitizeConfig(text, 'npmrc')).toBe(text);
  });

  it('removes every nerf-darted line and every credential key, after a scope too, in any case and spacing', () => {
    removesEach('npmrc', [
      '//registry.example.test/:_authToken=npm_abcdefghijklmnop',
      '//registry.example.test/npm/:_password=cGFzc3dvcmQ=',
      '//registry.example.test/:username=bob',
      '//registry.example.test/:always-auth=true',
      '//registry.example.test/:_authToken',
      '"//registry.example.test/:_authToken"=npm_quoted',
      '_auth=Ym9iOnNlY3JldA==',
      '_authToken=npm_plain',
      '_password=c2VjcmV0',
      'username=bob',
      'password=hunter2',
      'email=bob@example.test',
      'cert="-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----"',
      'key="-----BEGIN PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----"',
      'certfile=/home/bob/client.crt',
      'keyfile=/home/bob/client.key',
      'otp=123456',
      '@scope:_authToken=npm_scoped',
      '_AUTHTOKEN=npm_upper',
      'Password = hunter2',
      '   _authToken   =   npm_spaced   ',
      '\t//registry.example.test/:_authToken = npm_tabbed',
      '//registry.example.test/:_authToken=${NPM_TOKEN}',
      '${NPM_CREDENTIAL_KEY}=npm_by_env',
      'tokenHelper=/usr/local/bin/token',
    ]);
  });

  it('removes a URL that carries a user, a password, a query or a key in its path', () => {
    removesEach('npmrc', [
      'registry=https://bob:hunter2@registry.example.test/',
      'registry=https://npm_abcdef@registry.example.test/',
      '@scope:registry=https://${NPM_USER}:${NPM_PASS}@registry.example.test/',
      'proxy=http://bob:hunter2@proxy.example.test:3128/',
      'https-proxy = http://bob@proxy.example.test:3128',
      'registry=https://registry.example.test/npm/AbCdEfGhIj0123456789KlMn/',
      'registry=https://registry.example.test/npm/?token=abc',
      'registry=https:bob:hunter2@registry.example.test/',
    ]);
  });

  it('removes a credential commented out, but keeps prose that mentions one', () => {
    removesEach('npmrc', ['; //registry.example.test/:_authToken=npm_old', '#_authToken=npm_old', '# _auth = Ym9iOnNlY3JldA==', ';@scope:_password=c2VjcmV0', '# registry=https://bob:pw@registry.example.test/']);
    keepsEach('npmrc', ['; set _authToken in the user npmrc', '# password: ask the team', '; email=bob@example.test', '; username=bob', '; certfile=/etc/ssl/client.crt']);
  });

  it('replaces only the credential lines of a file, at their indentation, the rest byte for byte', () => {
    const text = 'registry=https://registry.example.test/\n//registry.example.test/:_authToken=npm_secret\ncafile=/etc/ssl/ca.crt\n  _auth = Ym9i\nstrict-ssl=true\n';
    const out = sanitizeConfig(text, 'npmrc');
    expect(out).toBe(removedAt(text, 1, 3));
    expect(out).toBe(`registry=https://registry.example.test/\n${REMOVED_NOTE}\ncafile=/etc/ssl/ca.crt\n  ${REMOVED_NOTE}\nstrict-ssl=true\n`);
    expect(out).not.toContain('npm_secret');
  });
});

describe('sanitizeConfig: pip.conf', () => {
  it('keeps indexes without credentials, the CA bundle, options and comments', () => {
    const text = [
      '# this machine\'s index',
      '[global]',
      'index-url = https://index.example.test/simple',
      'extra-index-url = https://other.example.test/simple/',
      'cert = /etc/ssl/certs/ca-certificates.crt',
      'timeout: 60',
      'trusted-host = index.example.test:8080',
      '[install]',
      'user = yes',
      '',
    ].join('\n');
    expect(sanitizeConfig(text, 'pip')).toBe(text);
  });

  it('removes an index or proxy URL with a user, a password, a query or a key-like path segment, in any case', () => {
    removesEach('pip', [
      'index-url = https://bob:hunter2@index.example.test/simple',
      'extra-index-url=https://__token__:pypi-AgEIcHlwaQ@index.example.test/simple/',
      'INDEX-URL = https://bob@index.example.test/simple',
      'index-url: https://index.example.test/AbCdEfGh0123456789IjKl/simple',
      'index-url = https://index.example.test/simple?key=abc',
      'proxy = http://bob:hunter2@proxy.example.test:3128',
      'find-links = https://${PIP_USER}:${PIP_PASS}@files.example.test/',
      '# index-url = https://bob:hunter2@index.example.test/simple',
      'password = hunter2',
    ]);
  });

  it('judges continuation lines one by one, and a removed option takes its continuation lines with it', () => {
    const text = [
      '[global]',
      'extra-index-url =',
      '    https://one.example.test/simple',
      '    https://bob:hunter2@two.example.test/simple',
      '',
      '    https://three.example.test/simple',
      'index-url = https://bob:pw@index.example.test/simple',
      '    https://four.example.test/simple',
      '    # a comment inside the value',
      '    https://five.example.test/simple',
      'timeout = 30',
      '  indented-option = https://six.example.test/simple',
      '  https://seven.example.test/simple',
      '[install]',
      '    https://eight.example.test/simple',
      '',
    ].join('\n');
    // The comment inside a removed value is no part of it, and stays.
    expect(sanitizeConfig(text, 'pip')).toBe(removedAt(text, 3, 6, 7, 9));
  });
});

describe('sanitizeConfig: wgetrc', () => {
  it('keeps the settings that hold no credential', () => {
    keepsEach('wgetrc', ['passive_ftp = on', 'https_proxy = http://proxy.example.test:3128/', 'check_certificate = on', 'ask_password = off', '# no password is kept here', 'useragent = quickloop']);
    // What a stock wgetrc comments out: no credential in it, so the file is left as it is.
    keepsEach('wgetrc', ['#header = From: Your Name <username@site.domain>', '#header = Accept-Language: en', '#http_proxy = http://proxy.example.test:18023/', '#http_user = bob']);
  });

  it('removes every credential command, however wget lets it be spelt, and a proxy with a user', () => {
    removesEach('wgetrc', [
      'user = bob',
      'password = hunter2',
      'http_user=bob',
      'http_password=hunter2',
      'ftp_user = bob',
      'ftp_password = hunter2',
      'proxy_user = bob',
      'proxy_password = hunter2',
      'header = Authorization: Bearer abc',
      'HTTP_PASSWORD = hunter2',
      'httpPassword = hunter2',
      'http-password = hunter2',
      '   proxy_password   =   hunter2',
      'http_proxy = http://bob:hunter2@proxy.example.test:3128/',
      '#http_password = hunter2',
      '# header = Authorization: Bearer abcdefgh12345678',
    ]);
  });
});

describe('sanitizeConfig: gitconfig', () => {
  it('keeps everything that is no credential, tabs and quoting as they were', () => {
    const text = [
      '# the system\'s git config',
      '[http]',
      '\tsslVerify = true',
      '\tsslCAInfo = /etc/ssl/certs/ca-certificates.crt',
      '[user]',
      '\tname = Quick Loop',
      '\temail = loop@example.test',
      '[url "https://mirror.example.test/"]',
      '\tinsteadOf = git://mirror.example.test/',
      '[core]',
      '\tautocrlf = input ; a comment',
      '\tpager = "less -R"',
      '',
    ].join('\n');
    expect(sanitizeConfig(text, 'gitconfig')).toBe(text);
  });

  it('removes extraheader, password and token keys, in any case, with the lines their value runs on over', () => {
    const text = [
      '[http]',
      '\textraheader = AUTHORIZATION: bearer abc123',
      '\tsslVerify = true',
      '[http "https://git.example.test/"]',
      '\tExtraHeader = AUTHORIZATION: basic Ym9iOmh1bnRlcjI=',
      '[sendemail]',
      '\tsmtpPass = hunter2',
      '[github]',
      '\ttoken = ghp_abc',
      '\tPASSWORD = hunter2',
      '[http]',
      '\textraHeader = AUTHORIZATION: \\',
      '\t\tbearer abc123',
      '\tpostBuffer = 1048576',
      '',
    ].join('\n');
    expect(sanitizeConfig(text, 'gitconfig')).toBe(removedAt(text, 1, 4, 6, 8, 9, 11, 12));
  });

  it('removes [credential] sections and sections whose header names a URL with a user, whole, and nothing after them', () => {
    const text = [
      '[credential]',
      '\thelper = store',
      '\tusername = bob',
      '',
      '[Credential "https://git.example.test"]',
      '\thelper = !f() { echo password=hunter2; }; f',
      '[credential.https://other.example.test]',
      '\tusername = bob',
      '[url "https://oauth2:abc123@git.example.test/"]',
      '\tinsteadOf = https://git.example.test/',
      '[core]',
      '\tautocrlf = input',
      '',
    ].join('\n');
    expect(sanitizeConfig(text, 'gitconfig')).toBe(removedAt(text, 0, 1, 2, 4, 5, 6, 7, 8, 9));
  });

  it('removes a URL with a credential even when its value runs over two lines, and a commented-out credential', () => {
    const text = '[remote "origin"]\n\turl = https://bob:\\\nhunter2@git.example.test/repo.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n# token = ghp_old\n';
    expect(sanitizeConfig(text, 'gitconfig')).toBe(removedAt(text, 1, 2, 4));
  });

  it('keeps a section header that has the credential key on its own line', () => {
    expect(sanitizeConfig('[http] extraheader = AUTHORIZATION: bearer abc\n\tsslVerify = false\n', 'gitconfig')).toBe(`[http] ${REMOVED_NOTE}\n\tsslVerify = false\n`);
    expect(sanitizeConfig('[credential] helper = store\n[core]\n', 'gitconfig')).toBe(`${REMOVED_NOTE}\n[core]\n`);
  });

  it('does not take a line after a comment that ends in a backslash', () => {
    const text = '[core]\n\teditor = vi # a comment \\\n\tpager = less\n';
    expect(sanitizeConfig(text, 'gitconfig')).toBe(text);
  });
});

describe('sanitizeConfig: uv.toml', () => {
  it('keeps indexes without credentials, tables and comments', () => {
    const text = [
      '# this machine\'s index',
      'index-url = "https://index.example.test/simple"',
      'native-tls = true',
      'extra-index-url = [',
      '  "https://one.example.test/simple",',
      ']',
      '[[index]]',
      'name = "mirror"',
      'url = "https://mirror.example.test/simple"',
      '[pip]',
      "index-url = 'https://index.example.test/simple'",
      '',
    ].join('\n');
    expect(sanitizeConfig(text, 'toml')).toBe(text);
  });

  it('removes a URL with a credential, on a key line or inside an array, and a key naming a secret with all its value', () => {
    const text = [
      'index-url = "https://bob:hunter2@index.example.test/simple"',
      'extra-index-url = [',
      '  "https://one.example.test/simple",',
      '  "https://__token__:abc@two.example.test/simple",',
      ']',
      '[[index]]',
      'url = "https://index.example.test/AbCdEfGh0123456789IjKl/simple"',
      'PASSWORD = """',
      'hunter2',
      'still the password = [',
      '"""',
      '"index".token = [',
      '  "abc", # ]',
      '  "def"]',
      'native-tls = true',
      '',
    ].join('\n');
    expect(sanitizeConfig(text, 'toml')).toBe(removedAt(text, 0, 3, 6, 7, 8, 9, 10, 11, 12, 13));
  });
});

describe('sanitizeConfig: gemrc', () => {
  it('keeps sources without credentials and the other settings', () => {
    const text = '---\n:backtrace: false\n:sources:\n- https://gems.example.test/\n# where gems come from\ngem: --no-document\n';
    expect(sanitizeConfig(text, 'gemrc')).toBe(text);
  });

  it('removes a source with a user, and a key naming a secret with what is nested under it', () => {
    const text = '---\n:sources:\n- https://bob:hunter2@gems.example.test/\n- https://gems.example.test/\n:rubygems_api_key: rubygems_abc\n:api_keys:\n  :rubygems: rubygems_abc\n  :other: abc\n:verbose: true\n"secret_token": |\n  abc\n:auth_tokens:\n- tok_abc\n- tok_def\n:update_sources: true\n';
    expect(sanitizeConfig(text, 'gemrc')).toBe(removedAt(text, 2, 4, 5, 6, 7, 9, 10, 11, 12, 13));
  });
});

describe('sanitizeConfig: hostile input', () => {
  it('keeps CRLF endings, on kept and on removed lines', () => {
    const text = 'registry=https://registry.example.test/\r\n//registry.example.test/:_authToken=npm_secret\r\ncafile=/x\r\n';
    expect(sanitizeConfig(text, 'npmrc')).toBe(`registry=https://registry.example.test/\r\n${REMOVED_NOTE}\r\ncafile=/x\r\n`);
    const git = '[http]\r\n\textraheader = AUTHORIZATION: bearer x \\\r\n\t\tmore\r\n[core]\r\n';
    expect(sanitizeConfig(git, 'gitconfig')).toBe(removedAt(git, 1, 2));
  });

  it('keeps a missing last newline missing', () => {
    expect(sanitizeConfig('registry=https://registry.example.test/\n_authToken=npm_secret', 'npmrc')).toBe(`registry=https://registry.example.test/\n${REMOVED_NOTE}`);
    expect(sanitizeConfig('_authToken=npm_secret\nregistry=https://registry.example.test/', 'npmrc')).toBe(`${REMOVED_NOTE}\nregistry=https://registry.example.test/`);
    const kept = '[global]\nindex-url = https://index.example.test/simple';
    expect(sanitizeConfig(kept, 'pip')).toBe(kept);
    expect(sanitizeConfig('', 'gitconfig')).toBe('');
  });

  it('keeps a byte-order mark, and judges the line after it', () => {
    expect(sanitizeConfig('\uFEFF_authToken=npm_secret\n', 'npmrc')).toBe(`\uFEFF${REMOVED_NOTE}\n`);
    expect(sanitizeConfig('\uFEFF[http]\n\tsslVerify = true\n', 'gitconfig')).toBe('\uFEFF[http]\n\tsslVerify = true\n');
  });

  it('reads very long lines in linear time, and still finds the credential at their end', () => {
    const long = 'a'.repeat(1_000_000);
    expect(sanitizeConfig(`x=${long}\n`, 'npmrc')).toBe(`x=${long}\n`);
    const colons = `x = ${'http:'.repeat(200_000)}`;
    expect(sanitizeConfig(`${colons}\n`, 'pip')).toBe(`${colons}\n`);
    const urls = `x = ${'https://h.example.test/p '.repeat(40_000)}https://bob:pw@h.example.test/`;
    expect(sanitizeConfig(`${urls}\n`, 'wgetrc')).toBe(`${REMOVED_NOTE}\n`);
    const slashes = `x = https://h.example.test${'/abc'.repeat(250_000)}/AbCdEfGh0123456789IjKl`;
    expect(sanitizeConfig(slashes, 'toml')).toBe(REMOVED_NOTE);
  });

  it('returns the very text it was given when nothing is removed', () => {
    const text = '[global]\r\nindex-url = https://index.example.test/simple\r\n\r\n';
    expect(sanitizeConfig(text, 'pip')).toBe(text);
  });
});

describe('hasCredentialUrl', () => {
  it('finds a user, a password, a query or a key-like segment in any URL of the line, and nothing else', () => {
    for (const yes of ['https://bob@h.example.test/', 'x https://bob:pw@h.example.test:8443/path', 'git+ssh://git@h.example.test/repo', 'http:\\\\bob:pw@h.example.test', 'HTTPS://bob@h.example.test', 'https://h.example.test/a?b', '"https://h.example.test/AbCdEfGh0123456789IjKl"']) {
      expect(hasCredentialUrl(yes), yes).toBe(true);
    }
    for (const no of ['https://h.example.test/simple', 'https://h.example.test/path@x', 'bob@h.example.test', 'mailto:bob@h.example.test', 'host.example.test:8080', '//h.example.test/:_authToken', 'file:///etc/x', 'https://h.example.test/abcdefghijklmnopqrstuvwxyz', 'C:\\Users\\bob@x', 'see https: bob@x']) {
      expect(hasCredentialUrl(no), no).toBe(false);
    }
  });
});

describe('coverConfigs', () => {
  const made: string[] = [];
  afterEach(() => {
    for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** A toolchain prefix the root shows (readable by everyone, as /usr is), and a support folder. */
  function prefix(): { root: string; support: string; plan: RootPlan } {
    const root = mkdtempSync(join(tmpdir(), 'qs-cover-'));
    made.push(root);
    chmodSync(root, 0o755);
    const p = join(root, 'opt', 'tool');
    for (const d of ['etc', 'lib/node_modules/npm', 'share']) mkdirSync(join(p, d), { recursive: true, mode: 0o755 });
    const support = join(root, 'support');
    mkdirSync(support);
    return { root: p, support, plan: { args: [], visible: [p], toolchains: [{ tool: 'npm', prefix: p }] } };
  }
  const ours = (covered: Array<{ copy: string; path: string }>, root: string) => covered.filter((c) => c.path.startsWith(root));

  it('writes a sanitized copy for each shown file that held a credential, judged at its real path, and nothing for the rest', () => {
    const { root, support, plan } = prefix();
    writeFileSync(join(root, 'share', 'npmrc'), 'registry=https://registry.example.test/\n//registry.example.test/:_authToken=npm_secret\n', { mode: 0o644 });
    symlinkSync('../share/npmrc', join(root, 'etc', 'npmrc'));
    writeFileSync(join(root, 'lib/node_modules/npm/npmrc'), 'prefix=/usr/local\n', { mode: 0o644 });
    writeFileSync(join(root, 'etc', 'gitconfig'), '[http]\n\textraheader = AUTHORIZATION: bearer abc\xe9\n', { mode: 0o644 });
    const covered = ours(coverConfigs(support, plan), root);
    expect(covered.map((c) => c.path)).toEqual([join(root, 'share', 'npmrc'), join(root, 'etc', 'gitconfig')]);
    expect(readFileSync(covered[0]!.copy, 'utf8')).toBe(`registry=https://registry.example.test/\n${REMOVED_NOTE}\n`);
    expect(readFileSync(covered[1]!.copy, 'utf8')).toBe(`[http]\n\t${REMOVED_NOTE}\n`);
    for (const c of covered) expect(c.copy.startsWith(join(support, 'config'))).toBe(true);
  });

  it('keeps bytes that are not UTF-8 as they were', () => {
    const { root, support, plan } = prefix();
    writeFileSync(join(root, 'etc', 'npmrc'), Buffer.concat([Buffer.from('init-author-name=Jos'), Buffer.from([0xe9]), Buffer.from('\n_authToken=npm_secret\n')]), { mode: 0o644 });
    const [c] = ours(coverConfigs(support, plan), root);
    expect(readFileSync(c!.copy)).toEqual(Buffer.concat([Buffer.from('init-author-name=Jos'), Buffer.from([0xe9]), Buffer.from(`\n${REMOVED_NOTE}\n`)]));
  });

  it('shows a file past the size bound as a note, never as it is', () => {
    const { root, support, plan } = prefix();
    writeFileSync(join(root, 'etc', 'npmrc'), `registry=https://registry.example.test/\n${'x'.repeat(MAX_CONFIG_BYTES)}\n`, { mode: 0o644 });
    const [c] = ours(coverConfigs(support, plan), root);
    expect(readFileSync(c!.copy, 'utf8')).toMatch(/^# quickloop does not show this file inside the sandbox: it is larger than \d+ bytes/);
  });

  it('leaves alone a FIFO (without waiting on it), a link out of what the root shows, and a file the sandbox user cannot read', () => {
    const { root, support, plan } = prefix();
    execFileSync('mkfifo', [join(root, 'etc', 'gitconfig')]);
    const outside = mkdtempSync(join(tmpdir(), 'qs-cover-outside-'));
    made.push(outside);
    chmodSync(outside, 0o755);
    writeFileSync(join(outside, 'npmrc'), '_authToken=npm_secret\n', { mode: 0o644 });
    symlinkSync(join(outside, 'npmrc'), join(root, 'etc', 'npmrc'));
    const unreadable = join(root, 'lib/node_modules/npm/npmrc');
    writeFileSync(unreadable, '_authToken=npm_secret\n', { mode: 0o600 });
    if (process.getuid?.() !== 0) chmodSync(unreadable, 0o000);
    expect(coverConfigs(support, plan).filter((c) => c.path.startsWith(root) || c.path.startsWith(outside))).toEqual([]);
  });
});
