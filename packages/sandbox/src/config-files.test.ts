// The config-file sanitizer: every credential line of npm's, pip's, wget's, git's, uv's and gem's config and of the shell's start-up files taken out, everything else kept byte for byte.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configCandidates, coverConfigs, hasCredentialUrl, MAX_CONFIG_BYTES, MAX_PROFILE_FILES, profileCandidates, REMOVED_NOTE, sanitizeConfig, secretVariable, WITHHELD_NOTE, type ConfigFormat } from './config-files.js';
import type { RootPlan } from './rootfs.js';

/**
 * `text` with the lines at `indices` (0-based) as the sanitizer writes a removed line: the note at
 * the line's own indentation, with the line's own ending.
 */
function removedAt(text: string, ...indices: number[]): string {
  return replacedAt(REMOVED_NOTE, text, indices);
}

function replacedAt(note: string, text: string, indices: number[]): string {
  const parts = text.split(/(?<=\n)/);
  return parts
    .map((p, i) => {
      if (!indices.includes(i)) return p;
      const end = p.endsWith('\r\n') ? '\r\n' : p.endsWith('\n') ? '\n' : '';
      return `${/^[ \t]*/.exec(p)?.[0] ?? ''}${note}${end}`;
    })
    .join('');
}

/** Each line alone: kept as it is. */
function keepsEach(format: ConfigFormat, lines: string[]): void {
  for (const line of lines) expect(sanitizeConfig(`${line}\n`, format), line).toBe(`${line}\n`);
}

/** A shell line one of whose words lost its value: the line as it now stands, the note after it as a comment. */
const noted = (line: string): string => `${line} ${REMOVED_NOTE}`;

/** `n` backslash-newlines: what a value that spanned `n` line ends is replaced by, so the lines after it stay where they were. */
const joins = (n: number): string => '\\\n'.repeat(n);

/**
 * Each line beside a secret (shell and environment): the line kept as it is, in a file where the
 * secret's value is taken out (and, in a shell file, the note put after it).
 */
function keepsBesideSecret(format: 'shell' | 'environment', lines: string[]): void {
  for (const line of lines) {
    const text = `${line}\nexport NPM_TOKEN=npm_abc\n`;
    expect(sanitizeConfig(text, format), line).toBe(`${line}\n${format === 'shell' ? noted('export NPM_TOKEN=') : 'export NPM_TOKEN='}\n`);
  }
}

/** Each line alone, in a shell or environment file: becomes the line given beside it (noted, in a shell file, when a word of it changed). */
function changesEach(format: 'shell' | 'environment', pairs: Array<readonly [string, string]>): void {
  for (const [line, out] of pairs) expect(sanitizeConfig(`${line}\n`, format), line).toBe(`${out}\n`);
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

/** The shells a sanitized start-up file must still parse in: `-n` reads without running anything. */
const SHELLS = ['dash', 'bash'] as const;

/** The shells of SHELLS that read `text` (written to a temp file, as a login shell reads a profile) without a syntax error. */
function acceptedBy(text: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'qs-parse-'));
  try {
    const file = join(dir, 'profile.sh');
    writeFileSync(file, text);
    return SHELLS.filter((shell) => {
      try {
        execFileSync(shell, ['-n', file], { stdio: ['ignore', 'pipe', 'pipe'] });
        return true;
      } catch {
        return false;
      }
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Debian's stock /etc/profile, which must come through untouched. */
const STOCK_PROFILE = `# /etc/profile: system-wide .profile file for the Bourne shell (sh(1))
# and Bourne compatible shells (bash(1), ksh(1), ash(1), ...).

if [ "$(id -u)" -eq 0 ]; then
  PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
else
  PATH="/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games"
fi
export PATH

if [ "\${PS1-}" ]; then
  if [ "\${BASH-}" ] && [ "$BASH" != "/bin/sh" ]; then
    # The file bash.bashrc already sets the default PS1.
    # PS1='\\h:\\w\\$ '
    if [ -f /etc/bash.bashrc ]; then
      . /etc/bash.bashrc
    fi
  else
    if [ "$(id -u)" -eq 0 ]; then
      PS1='# '
    else
      PS1='$ '
    fi
  fi
fi

if [ -d /etc/profile.d ]; then
  for i in /etc/profile.d/*.sh; do
    if [ -r $i ]; then
      . $i
    fi
  done
  unset i
fi
`;

describe('secretVariable', () => {
  it('takes a name containing a secret word, in any case, with underscores or not', () => {
    for (const yes of ['NPM_TOKEN', 'GITHUB_TOKEN', 'npm_token', 'GhToken', 'HF_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'CLIENT_SECRET', 'PGPASSWORD', 'DB_PASSWD', 'GPG_PASSPHRASE', 'OPENAI_API_KEY', 'X_APIKEY', 'apiKey', 'GOOGLE_APPLICATION_CREDENTIALS', 'SSH_PRIVATE_KEY', 'AWS_ACCESS_KEY_ID', 'SECRET', 'TOKEN']) {
      expect(secretVariable(yes), yes).toBe(true);
    }
  });

  it('takes AUTH and PASS only as a whole underscore-separated word (or AUTH ending one), so AUTHOR is no secret', () => {
    for (const yes of ['AUTH', 'NPM_AUTH', 'npm_config__auth', '_AUTH', 'AUTH_TOKEN', 'AUTHTOKEN', 'NGROK_AUTHTOKEN', 'OAUTH', 'GIT_OAUTH', 'BASICAUTH', 'HTTP_AUTHORIZATION', 'AUTHN_KEY', 'DB_PASS', 'pass', 'REGISTRY_AUTHKEY']) {
      expect(secretVariable(yes), yes).toBe(true);
    }
    for (const no of ['AUTHOR', 'GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'git_author_date', 'XAUTHORITY', 'CERT_AUTHORITY', 'AUTHORS_FILE', 'PASSIVE_FTP', 'BYPASS', 'COMPASS_HOME', 'PATH', 'LANG', 'HOME', 'KEYMAP', 'SSH_KEY_PATH', 'PS1']) {
      expect(secretVariable(no), no).toBe(false);
    }
  });
});

describe('secretVariable: names a reviewer expects', () => {
  it('takes PWD as a part of a longer name, KEY as its last part, CREDS, PAT, a PASS ending a part, WEBHOOK, JWT', () => {
    for (const yes of ['MYSQL_PWD', 'DB_PWD', 'mysql_pwd', 'DBPWD', 'STRIPE_KEY', 'SENTRY_KEY', 'ENCRYPTION_KEY', 'AUTHN_KEY', 'DOCKER_CREDS', 'GCP_CRED', 'GITHUB_PAT', 'GH_PAT', 'PGPASS', 'DBPASS', 'SMTPPASS', 'SLACK_WEBHOOK', 'DISCORD_WEBHOOK_URL', 'CI_JOB_JWT', 'CI_JOB_JWT_V2', 'VAULT_JWT']) {
      expect(secretVariable(yes), yes).toBe(true);
    }
  });

  it('keeps the working folders, the keyboard, a public key, and AUTH naming where one authenticates', () => {
    for (const no of ['PWD', 'OLDPWD', 'KEYBOARD', 'KEY', 'XKB_DEFAULT_LAYOUT', 'GPG_TTY', 'SSH_AUTH_SOCK', 'OS_AUTH_URL', 'OS_AUTH_TYPE', 'SSH_PUBLIC_KEY', 'KEY_ID', 'SSH_KEY_PATH', 'PATH', 'PATCH_LEVEL', 'BYPASS', 'COMPASS_HOME', 'LOWPASS', 'CREDIT', 'PGPASSFILE']) {
      expect(secretVariable(no), no).toBe(false);
    }
  });

  it('empties MYSQL_PWD in a start-up file and keeps PWD and OLDPWD', () => {
    expect(sanitizeConfig('export MYSQL_PWD=hunter2\n', 'shell')).not.toContain('hunter2');
    const kept = 'OLDPWD=/tmp\nexport PWD\ncd "$OLDPWD"\nexport STRIPE_PUBLIC_KEY=pk_test\n';
    expect(sanitizeConfig(kept, 'shell')).toBe(kept);
  });
});

describe('sanitizeConfig: shell', () => {
  it('keeps a stock profile, PATH and locale settings, umask, tests and loops, byte for byte', () => {
    expect(sanitizeConfig(STOCK_PROFILE, 'shell')).toBe(STOCK_PROFILE);
    expect(sanitizeConfig(`${STOCK_PROFILE}export NPM_TOKEN=npm_abc\n`, 'shell')).toBe(`${STOCK_PROFILE}${noted('export NPM_TOKEN=')}\n`);
    keepsBesideSecret('shell', [
      'PATH=/usr/local/bin:$PATH',
      'export PATH="/opt/tool/bin:$PATH"',
      'export LANG=C.UTF-8',
      'umask 022',
      "PS1='${debian_chroot:+($debian_chroot)}\\u@\\h:\\w\\$ '",
      'export GIT_AUTHOR_NAME="Quick Loop"',
      'export XAUTHORITY=/tmp/.Xauthority',
      'export MANPATH=/usr/local/man:/usr/share/man',
      'alias ll="ls -l"',
      'x=$((1 << 3))',
      'export http_proxy=http://proxy.example.test:3128/',
    ]);
  });

  it('keeps a line that only reads, tests, exports, unsets, copies or names a token variable, and a comment that names one', () => {
    keepsBesideSecret('shell', [
      'echo $NPM_TOKEN',
      'echo "${GITHUB_TOKEN}"',
      '[ -n "$GITHUB_TOKEN" ] && echo set',
      '[ $NPM_TOKEN = x ] || echo unset',
      'test -z "${GITHUB_TOKEN:-}"',
      'if [[ "$NPM_TOKEN" == "" ]]; then echo none; fi',
      'export NPM_TOKEN',
      'unset NPM_TOKEN GITHUB_TOKEN',
      'export GITHUB_TOKEN=$GH_TOKEN',
      'export GITHUB_TOKEN="${GH_TOKEN}"',
      'NPM_TOKEN=""',
      'curl -H "Authorization: Bearer $API_TOKEN" https://api.example.test/',
      '# set NPM_TOKEN in your own ~/.bashrc, never here',
      '# the token lives with the harness',
    ]);
  });

  it('empties the value of a variable named like a secret, however it is assigned, and keeps the rest of its line', () => {
    changesEach('shell', [
      ['export NPM_TOKEN=npm_abc', noted('export NPM_TOKEN=')],
      ['NPM_TOKEN=npm_abc', noted('NPM_TOKEN=')],
      ["export GITHUB_TOKEN='ghp_abc'", noted('export GITHUB_TOKEN=')],
      ['declare -x NPM_TOKEN=npm_abc', noted('declare -x NPM_TOKEN=')],
      ['declare -gx NPM_TOKEN=npm_abc', noted('declare -gx NPM_TOKEN=')],
      ['readonly GITHUB_TOKEN=ghp_abc', noted('readonly GITHUB_TOKEN=')],
      ['typeset -x GITHUB_TOKEN=ghp_abc', noted('typeset -x GITHUB_TOKEN=')],
      ['local NPM_TOKEN=npm_abc', noted('local NPM_TOKEN=')],
      ['export AWS_SECRET_ACCESS_KEY=abc', noted('export AWS_SECRET_ACCESS_KEY=')],
      ['export OPENAI_API_KEY="sk-abc"', noted('export OPENAI_API_KEY=')],
      ['export PGPASSWORD=hunter2', noted('export PGPASSWORD=')],
      ['export npm_config__auth=Ym9iOnNlY3JldA==', noted('export npm_config__auth=')],
      ['export npm_config__authToken=npm_abc', noted('export npm_config__authToken=')],
      ['export DB_PASS=hunter2', noted('export DB_PASS=')],
      ['NPM_TOKEN+=abc', noted('NPM_TOKEN+=')],
      ['TOKENS[0]=abc', noted('TOKENS[0]=')],
      ['NPM_TOKEN=npm_abc npm publish', noted('NPM_TOKEN= npm publish')],
      ['env GITHUB_TOKEN=ghp_abc gh release list', noted('env GITHUB_TOKEN= gh release list')],
      ["alias pub='NPM_TOKEN=npm_abc npm publish'", noted('alias pub=')],
      ['if [ -z "$NPM_TOKEN" ]; then export NPM_TOKEN=npm_abc; fi', noted('if [ -z "$NPM_TOKEN" ]; then export NPM_TOKEN=; fi')],
      [': "${NPM_TOKEN:=npm_abc}"', noted(": ''")],
      [': ${GITHUB_TOKEN=ghp_abc}', noted(": ''")],
      ['echo ${GITHUB_TOKEN:-ghp_abc}', noted("echo ''")],
      ['export NPM_TOKEN=$(cat /run/secrets/npm)', noted('export NPM_TOKEN=')],
      ['export NPM_TOKEN=${NPM_TOKEN:-npm_abc}', noted('export NPM_TOKEN=')],
      ['export "NPM_TOKEN=npm_abc"', noted('export NPM_TOKEN=')],
      ['mysql --password=hunter2 -e "select 1"', noted(`mysql '' -e "select 1"`)],
    ]);
  });

  it("replaces a command word that holds a secret with ':', so the line still runs: bash's (( NAME=value )), a URL with a password", () => {
    changesEach('shell', [
      ['(( NPM_TOKEN=12345 ))', noted(':')],
      ['(( NPM_TOKEN = 0x1234abcd )) && echo set', noted(': && echo set')],
      ['https://bob:hunter2@git.example.test/x.git --version', noted(': --version')],
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'qs-run-'));
    try {
      const file = join(dir, 'profile.sh');
      writeFileSync(file, sanitizeConfig('(( NPM_TOKEN=12345 ))\necho "after:$?"\n', 'shell'));
      // Run, not just parsed: the blanked line is no 'command not found', and the lines after it still run.
      const run = spawnSync('bash', [file], { encoding: 'utf8' });
      expect(run.stderr).toBe('');
      expect(run.stdout).toBe('after:0\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('blanks the words a command reads a secret from: read, printf -v, a here-string, a for loop', () => {
    changesEach('shell', [
      ['read -r GITHUB_TOKEN <<< "ghp_abc"', noted("read -r GITHUB_TOKEN <<< ''")],
      ['read -r USER_NAME GITHUB_TOKEN < /dev/stdin', noted("read -r USER_NAME GITHUB_TOKEN < ''")],
      [`read ${'read '.repeat(100)}NPM_TOKEN <<< npm_abc`, noted(`read ${'read '.repeat(100)}NPM_TOKEN <<< ''`)],
      ["printf -v NPM_TOKEN '%s' npm_abc", noted("printf -v NPM_TOKEN '' ''")],
      ['echo ghp_abc | IFS= read -r GITHUB_TOKEN', noted("echo '' | IFS= read -r GITHUB_TOKEN")],
      ['for GITHUB_TOKEN in ghp_abc ghp_def; do export GITHUB_TOKEN; done', noted("for GITHUB_TOKEN in '' ''; do export GITHUB_TOKEN; done")],
    ]);
  });

  it('replaces a comment that holds a secret with the note', () => {
    changesEach('shell', [
      ['# export NPM_TOKEN=npm_old', REMOVED_NOTE],
      ['export LANG=C.UTF-8 # NPM_TOKEN=npm_old', `export LANG=C.UTF-8 ${REMOVED_NOTE}`],
      ['  # PIP_INDEX_URL=https://bob:pw@index.example.test/simple', `  ${REMOVED_NOTE}`],
    ]);
  });

  it('on a line of several assignments, empties only the secret', () => {
    changesEach('shell', [
      ['export A=1 NPM_TOKEN=npm_abc B=2', noted('export A=1 NPM_TOKEN= B=2')],
      ['export A=1 B=2 GITHUB_TOKEN=ghp_abc', noted('export A=1 B=2 GITHUB_TOKEN=')],
      ['PATH=/x:$PATH NPM_TOKEN=npm_abc', noted('PATH=/x:$PATH NPM_TOKEN=')],
    ]);
  });

  it('empties a value with a URL that carries a credential, and one with a private key; blanks such an argument', () => {
    changesEach('shell', [
      ['export PIP_INDEX_URL=https://user:pass@index.example.test/simple', noted('export PIP_INDEX_URL=')],
      ['export http_proxy=http://bob:hunter2@proxy.example.test:3128/', noted('export http_proxy=')],
      ['DATABASE_URL=postgres://bob:hunter2@db.example.test/app', noted('DATABASE_URL=')],
      ['pip config set global.index-url https://__token__:abc@index.example.test/simple', noted("pip config set global.index-url ''")],
      ['export SIGNING="-----BEGIN OPENSSH PRIVATE KEY-----"', noted('export SIGNING=')],
      ['git clone "https://bob:"hunter2@git.example.test/x.git', noted("git clone ''")],
    ]);
  });

  it("takes a credential given to a command: an Authorization header, curl's -u user:password, a --password option, Bundler's host variables", () => {
    changesEach('shell', [
      ["alias gh='curl -H \"Authorization: Bearer ghp_abcdefgh123\" https://api.example.test'", noted('alias gh=')],
      ['curl -H "Authorization: token ghp_abcdefgh123" https://api.example.test', noted("curl -H '' https://api.example.test")],
      ['curl -H "PRIVATE-TOKEN: glpat-abcdefgh123" https://git.example.test', noted("curl -H '' https://git.example.test")],
      ['curl -u bob:hunter22 https://api.example.test', noted("curl -u '' https://api.example.test")],
      ['curl --user bob:hunter22 https://api.example.test', noted("curl --user '' https://api.example.test")],
      ['curl --user=bob:hunter22 https://api.example.test', noted("curl '' https://api.example.test")],
      ['curl -ubob:hunter22 https://api.example.test', noted("curl '' https://api.example.test")],
      ["alias up='curl -u bob:hunter22 -T'", noted('alias up=')],
      ['wget --password hunter22 https://files.example.test/x', noted("wget --password '' https://files.example.test/x")],
      ['wget --http-password=hunter22 https://files.example.test/x', noted("wget '' https://files.example.test/x")],
      ['export BUNDLE_GEMS__EXAMPLE__COM=bob:hunter22', noted('export BUNDLE_GEMS__EXAMPLE__COM=')],
      ['export BUNDLE_RUBYGEMS__PKG__GITHUB__COM="bob:ghp_abc"', noted('export BUNDLE_RUBYGEMS__PKG__GITHUB__COM=')],
    ]);
    // What names a credential without holding one is kept: a reference, a uid:gid, a header with no secret, Bundler's settings.
    keepsEach('shell', [
      'curl -H "Authorization: Bearer $GH_TOKEN" https://api.example.test',
      'curl -u "$USER:$PASSWORD" https://api.example.test',
      'docker run -u 1000:1000 image',
      'sort -u names.txt',
      'curl -H "Accept: application/json" https://api.example.test',
      '# Authorization: see the team wiki',
      'export BUNDLE_PATH=vendor/bundle BUNDLE_JOBS=4 BUNDLE_WITHOUT=development:test',
    ]);
  });

  it('takes the oddly written too: spaces around =, lowercase names, tabs', () => {
    changesEach('shell', [
      ['NPM_TOKEN =npm_abc', noted('NPM_TOKEN =')],
      ['NPM_TOKEN = npm_abc', noted("NPM_TOKEN = ''")],
      ['export npm_token=npm_abc', noted('export npm_token=')],
      ['export GitHub_Token=ghp_abc', noted('export GitHub_Token=')],
      ['\texport\tGITHUB_TOKEN=ghp_abc', noted('\texport\tGITHUB_TOKEN=')],
      ['    export NPM_TOKEN=npm_abc   ', noted('    export NPM_TOKEN=   ')],
    ]);
    // `export NAME = value`: `export ''` would end a dash login shell, so the file is withheld instead.
    expect(sanitizeConfig('export  NPM_TOKEN = npm_abc\n', 'shell')).toBe(`${WITHHELD_NOTE}\n`);
  });

  it('keeps the name AUTHOR: AUTH is a secret word only alone, ending a word, or as AUTH_TOKEN/AUTHTOKEN', () => {
    keepsBesideSecret('shell', ['export GIT_AUTHOR_NAME=bob', 'export GIT_AUTHOR_EMAIL=bob@example.test', 'AUTHOR=bob', 'export CERT_AUTHORITY=/etc/ssl/ca.pem', 'export SSH_AUTH_SOCK=/run/ssh.sock']);
    changesEach('shell', ['NPM_AUTH', 'AUTH', 'NGROK_AUTHTOKEN', 'AUTH_TOKEN', 'GIT_OAUTH'].map((name) => [`export ${name}=abc`, noted(`export ${name}=`)] as const));
  });

  it('empties a quoted value that spans lines, keeping the lines after it where they were', () => {
    const text = "export LANG=C.UTF-8\nexport NPM_TOKEN=\"npm_line1\nnpm_line2\nnpm_line3\"\nexport A=1\nexport KEY='\nmore\n'\numask 022\n";
    expect(sanitizeConfig(text, 'shell')).toBe(`export LANG=C.UTF-8\nexport NPM_TOKEN=${joins(2)}${noted('')}\nexport A=1\nexport KEY='\nmore\n'\numask 022\n`);
    // A quoted value that holds the secret on one of its lines goes whole.
    const inside = 'export NOTE="start\nNPM_TOKEN=npm_abc\nend"\nexport B=2\n';
    expect(sanitizeConfig(inside, 'shell')).toBe(`export NOTE=${joins(2)}${noted('')}\nexport B=2\n`);
    // bash reads $'…' with \\' inside it, dash does not: no edit would be sure in both, so the file is withheld.
    expect(sanitizeConfig("export GITHUB_TOKEN=$'ghp\\'one\nghp_two'\nexport B=2\n", 'shell')).toBe(`${WITHHELD_NOTE}\n`);
  });

  it('empties a value made by a command substitution (a here-document inside it too) and what a \\ at a line end continues', () => {
    const heredoc = "export NPM_TOKEN=$(cat <<'EOF'\nnpm_abc\nEOF\n)\nexport A=1\n";
    expect(sanitizeConfig(heredoc, 'shell')).toBe(`export NPM_TOKEN=${joins(3)}${noted('')}\nexport A=1\n`);
    const subst = 'export GITHUB_TOKEN=$(\n  cat /run/secrets/gh\n)\necho after\n';
    expect(sanitizeConfig(subst, 'shell')).toBe(`export GITHUB_TOKEN=${joins(2)}${noted('')}\necho after\n`);
    const continued = 'export A=1 \\\n  NPM_TOKEN=npm_abc \\\n  B=2\nexport C=3\n';
    expect(sanitizeConfig(continued, 'shell')).toBe(`export A=1 \\\n  NPM_TOKEN= \\\n  ${noted('B=2')}\nexport C=3\n`);
    // A URL split by a \ at a line's end is judged as the shell joins it.
    const split = 'export PIP_INDEX_URL=https://bob:\\\nhunter2@index.example.test/simple\nexport C=3\n';
    expect(sanitizeConfig(split, 'shell')).toBe(`export PIP_INDEX_URL=${joins(1)}${noted('')}\nexport C=3\n`);
  });

  it('replaces each line of a here-document body that holds a secret, or that a command reads a secret from; keeps the rest', () => {
    const read = 'read -r GITHUB_TOKEN <<EOF\nghp_abc\nEOF\necho after\n';
    expect(sanitizeConfig(read, 'shell')).toBe(removedAt(read, 1));
    const tabs = 'if true; then\n\tread -r GITHUB_TOKEN <<-EOF\n\t\tghp_abc\n\tEOF\n\techo after\nfi\n';
    expect(sanitizeConfig(tabs, 'shell')).toBe(tabs.replace('\t\tghp_abc', REMOVED_NOTE));
    const two = 'cat <<A <<"B"; export NPM_TOKEN=npm_abc\none\nA\ntwo\nB\necho after\n';
    expect(sanitizeConfig(two, 'shell')).toBe(`cat <<A <<"B"; ${noted('export NPM_TOKEN=')}\none\nA\ntwo\nB\necho after\n`);
    const written = 'cat > "$HOME/.npmrc" <<EOF\nregistry=https://registry.example.test/\n//registry.example.test/:_authToken=npm_abc\nEOF\necho after\n';
    expect(sanitizeConfig(written, 'shell')).toBe(removedAt(written, 1, 2));
    const motd = "cat <<EOF\nit's a sandbox: \"quotes\" and \\ and $(unclosed\nEOF\nexport NPM_TOKEN=npm_abc\necho after\n";
    expect(sanitizeConfig(motd, 'shell')).toBe(motd.replace('export NPM_TOKEN=npm_abc', noted('export NPM_TOKEN=')));
    const looped = 'while read -r GITHUB_TOKEN; do echo; done <<EOF\nghp_abc\nEOF\n';
    expect(sanitizeConfig(looped, 'shell')).toBe(removedAt(looped, 1));
  });

  it('does not take the line after a comment that ends in a backslash or holds a quote', () => {
    const text = "# it's a comment \\\nexport NPM_TOKEN=npm_abc\nexport A=1\n";
    expect(sanitizeConfig(text, 'shell')).toBe(`# it's a comment \\\n${noted('export NPM_TOKEN=')}\nexport A=1\n`);
  });

  it('keeps the if, the case, the function or the loop around a secret as it was, so the file still parses', () => {
    const inIf = 'if [ -z "$GITHUB_TOKEN" ]; then\n  export GITHUB_TOKEN=ghp_abc\nfi\nexport A=1\n';
    expect(sanitizeConfig(inIf, 'shell')).toBe(`if [ -z "$GITHUB_TOKEN" ]; then\n  ${noted('export GITHUB_TOKEN=')}\nfi\nexport A=1\n`);
    const inCase = 'case "$HOSTNAME" in\n  ci) export NPM_TOKEN=npm_abc ;;\n  *) umask 022 ;;\nesac\n';
    expect(sanitizeConfig(inCase, 'shell')).toBe(`case "$HOSTNAME" in\n  ${noted('ci) export NPM_TOKEN= ;;')}\n  *) umask 022 ;;\nesac\n`);
    const oneLine = 'if true; then export NPM_TOKEN=npm_abc; fi; case x in x) GITHUB_TOKEN=ghp_abc;; esac; f() { API_TOKEN=x; }\n';
    expect(sanitizeConfig(oneLine, 'shell')).toBe(`${noted('if true; then export NPM_TOKEN=; fi; case x in x) GITHUB_TOKEN=;; esac; f() { API_TOKEN=; }')}\n`);
    const inFunction = 'login() {\n  export NPM_TOKEN="npm_abc\n  npm_more"\n}\n';
    const inLoop = 'for f in a b; do\n  read -r GITHUB_TOKEN <<EOF\nghp_abc\nEOF\ndone\n';
    for (const text of [inIf, inCase, oneLine, inFunction, inLoop, "x=1\nexport NPM_TOKEN='a\nb' && echo ok\n"]) {
      const sanitized = sanitizeConfig(text, 'shell');
      expect(sanitized).not.toBe(text);
      expect(sanitized).not.toMatch(/npm_abc|ghp_abc|npm_more/);
      expect(acceptedBy(sanitized)).toEqual(['dash', 'bash']);
    }
  });

  it('takes out nothing more than the secrets from a realistic profile.d snippet', () => {
    const text = [
      '# company defaults',
      'export LANG=C.UTF-8',
      'umask 022',
      'export NPM_TOKEN=npm_abc',
      'export PIP_INDEX_URL=https://user:pass@index.example.test/simple',
      'if [ -d "$HOME/bin" ]; then',
      '  PATH="$HOME/bin:$PATH"',
      'fi',
      '[ -n "$GITHUB_TOKEN" ] || echo "no token"',
      '',
    ].join('\n');
    const out = sanitizeConfig(text, 'shell');
    expect(out).toBe(text.replace('export NPM_TOKEN=npm_abc', noted('export NPM_TOKEN=')).replace('export PIP_INDEX_URL=https://user:pass@index.example.test/simple', noted('export PIP_INDEX_URL=')));
    expect(acceptedBy(out)).toEqual(['dash', 'bash']);
  });

  it('withholds a file whose shape the reader does not follow, when it may hold a secret; keeps it when it cannot', () => {
    const inCaseSubst = 'x=$(case a in a) echo;; esac)\nexport NPM_TOKEN=npm_abc\n';
    expect(sanitizeConfig(inCaseSubst, 'shell')).toBe(`${WITHHELD_NOTE}\n`);
    const clean = 'x=$(case a in a) echo;; esac)\nexport LANG=C.UTF-8\n';
    expect(sanitizeConfig(clean, 'shell')).toBe(clean);
    expect(acceptedBy(`${WITHHELD_NOTE}\n`)).toEqual(['dash', 'bash']);
  });
});

/**
 * Start-up files whose secret (`s3cr3t`) shares its line, or its command, with shell structure. Each
 * parses in both shells (the bash-only ones at the end in bash alone), and so must its sanitized copy.
 */
const HOSTILE_SHELL: readonly string[] = [
  'if [ -r /etc/x ]; then export GITHUB_TOKEN=ghp_s3cr3t; fi\necho after\n',
  'if true; then\n  echo hi\nfi; export TOKEN=ghp_s3cr3t\necho after\n',
  'if [ -z "$GITHUB_TOKEN" ]; then\n  export GITHUB_TOKEN=ghp_s3cr3t\nfi\n',
  'if true; then export NPM_TOKEN=ghp_s3cr3t\nelse echo no; fi\n',
  'case "$x" in a) export X_TOKEN=ghp_s3cr3t;; esac\necho after\n',
  'case "$x" in\n  a) export X_TOKEN=ghp_s3cr3t;; esac\n',
  'case "$x" in\n  *) NPM_TOKEN=ghp_s3cr3t ;;\nesac; echo after\n',
  'f() { export API_TOKEN=ghp_s3cr3t; }\nf\n',
  'f() {\n  echo\n  export API_TOKEN=ghp_s3cr3t; }\nf\n',
  'f() { export API_TOKEN=ghp_s3cr3t\n}\n',
  'f() (export NPM_TOKEN=ghp_s3cr3t)\n',
  '[ -n "$x" ] && export NPM_TOKEN=ghp_s3cr3t || echo no\n',
  'true &&\n  NPM_TOKEN=ghp_s3cr3t ||\n  echo no\n',
  'export NPM_TOKEN=ghp_s3cr3t&& echo ok\n',
  'export NPM_TOKEN=ghp_s3cr3t|cat\n',
  '(export NPM_TOKEN=ghp_s3cr3t; echo sub)\n',
  '(\n  export NPM_TOKEN=ghp_s3cr3t\n)\n',
  '{ export NPM_TOKEN=ghp_s3cr3t; }\n',
  'x=$(NPM_TOKEN=ghp_s3cr3t npm whoami)\n',
  'echo "$(export NPM_TOKEN=ghp_s3cr3t; echo x)"\n',
  'for t in a; do export NPM_TOKEN=ghp_s3cr3t; done\n',
  'until false; do NPM_TOKEN=ghp_s3cr3t; break; done\n',
  'for GITHUB_TOKEN in ghp_s3cr3t; do export GITHUB_TOKEN; done\n',
  'cat > "$HOME/.npmrc" <<EOF\n//r.example.test/:_authToken=ghp_s3cr3t\nEOF\necho after\n',
  'if true; then cat <<EOF; fi\n_authToken=ghp_s3cr3t\nEOF\necho after\n',
  'if true; then\n\tcat <<-EOF\n\t\tNPM_TOKEN=ghp_s3cr3t\n\tEOF\nfi\n',
  'read -r GITHUB_TOKEN <<EOF\nghp_s3cr3t\nEOF\necho after\n',
  'while read -r GITHUB_TOKEN; do echo; done <<EOF\nghp_s3cr3t\nEOF\n',
  "export NPM_TOKEN=$(cat <<'EOF'\nghp_s3cr3t\nEOF\n)\necho after\n",
  'export A=1 \\\n  NPM_TOKEN=ghp_s3cr3t \\\n  B=2\necho after\n',
  'export PIP_INDEX_URL=https://bob:\\\nghp_s3cr3t@index.example.test/simple; echo after\n',
  'export NPM_TOKEN="ghp_s3cr3t; fi; done"; echo after\n',
  "export NPM_TOKEN='ghp;s3cr3t)' ; echo ok\n",
  'export GITHUB_TOKEN="ghp_\n  s3cr3t"; if true; then echo ok; fi\n',
  "export GITHUB_TOKEN='ghp_\ns3cr3t' && echo ok\n",
  'export GITHUB_TOKEN=`echo ghp_s3cr3t`; echo ok\n',
  "export GITHUB_TOKEN=$(echo ghp_s3cr3t | tr -d ')'); echo ok\n",
  'export NPM_TOKEN="$(echo "ghp_s3cr3t")"\n',
  'export NPM_TOKEN=ghp#s3cr3t # a comment\n',
  ': "${NPM_TOKEN:=ghp_s3cr3t}"; echo after\n',
  'export PIP_INDEX_URL=https://u:ghp_s3cr3t@h.example.test/simple; echo after\n',
  'git clone https://ghp_s3cr3t@github.example.test/x.git || true\n',
  "alias pub='NPM_TOKEN=ghp_s3cr3t npm publish'; alias ll='ls -l'\n",
  'eval "export NPM_TOKEN=ghp_s3cr3t"\n',
  'export "NPM_TOKEN=ghp_s3cr3t"\n',
  'FOO=bar NPM_TOKEN=ghp_s3cr3t command -v npm >/dev/null 2>&1\n',
  '# export NPM_TOKEN=ghp_s3cr3t\nif true; then # NPM_TOKEN=ghp_s3cr3t\n  :\nfi\n',
  'export  NPM_TOKEN = ghp_s3cr3t\n',
  'x=$(case a in a) echo;; esac); export NPM_TOKEN=ghp_s3cr3t\n',
  'export GITHUB_TOKEN=$(case "$x" in a) echo ghp_s3cr3t;; esac); echo after\n',
  'export GITHUB_TOKEN=ghp_s3cr3t\\\n; echo ok\n',
  'if true; then curl -u bob:ghp_s3cr3t https://h.example.test; fi\n',
  'gh() { curl -H "Authorization: Bearer ghp_s3cr3t" "$@"; }\n',
  "alias gl='curl --header \"PRIVATE-TOKEN: ghp_s3cr3t\"'; echo after\n",
  'wget --password=ghp_s3cr3t -q https://h.example.test || echo no\n',
  'f() { wget --http-password ghp_s3cr3t "$1"; }\n',
  'export BUNDLE_GEMS__EXAMPLE__TEST=bob:ghp_s3cr3t; echo after\n',
];

/** The same, in what only bash reads: arrays, `[[`, here-strings, `$'…'` with an escaped quote, `printf -v`. */
const HOSTILE_BASH: readonly string[] = [
  'X_TOKENS=(ghp_s3cr3t other); echo after\n',
  'declare -a X_TOKENS=(\n  ghp_s3cr3t # first\n  other\n)\necho after\n',
  '[[ -z $X ]] && export X_TOKEN=ghp_s3cr3t\n',
  'read -r NPM_TOKEN <<< ghp_s3cr3t; echo after\n',
  "printf -v NPM_TOKEN '%s' ghp_s3cr3t\n",
  "export GITHUB_TOKEN=$'ghp\\'s3cr3t'; echo after\n",
  'if [[ $x =~ ^(a|b)$ ]]; then export NPM_TOKEN=ghp_s3cr3t; fi\n',
  '(( n = 1 << 2 )); export NPM_TOKEN=ghp_s3cr3t\n',
];

describe('sanitizeConfig: shell, structure around a secret', () => {
  it('leaves every hostile start-up file parsing in dash and bash, without its secret', () => {
    const failures: string[] = [];
    for (const [table, shells] of [[HOSTILE_SHELL, ['dash', 'bash']], [HOSTILE_BASH, ['bash']]] as const) {
      for (const text of table) {
        expect(acceptedBy(text), `the original:\n${text}`).toEqual(expect.arrayContaining([...shells]));
        for (const format of ['shell', 'environment'] as const) {
          const out = sanitizeConfig(text, format);
          const refused = shells.filter((s) => !acceptedBy(out).includes(s));
          if (out.includes('s3cr3t') || refused.length > 0) failures.push(`${format}${refused.length > 0 ? ` (${refused.join(', ')} refuse it)` : ''}:\n${text}→\n${out}`);
        }
      }
    }
    expect(failures, failures.join('\n')).toEqual([]);
  });
});

describe('sanitizeConfig: environment', () => {
  it('keeps NAME=value lines that are no secret, quoted or not, and comments', () => {
    const text = '# pam_env reads this\nPATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"\nLANG=C.UTF-8\nEDITOR=vi\nGIT_AUTHOR_NAME="Quick Loop"\n\n';
    expect(sanitizeConfig(text, 'environment')).toBe(text);
    expect(sanitizeConfig(`${text}NPM_TOKEN=npm_abc\n`, 'environment')).toBe(`${text}NPM_TOKEN=\n`);
    keepsBesideSecret('environment', ['LANG=C.UTF-8', 'PATH="/usr/bin:/bin"', '# NPM_TOKEN is set by the harness, not here']);
  });

  it('empties a secret-named NAME=value or NAME="value" and a URL with a credential (no note: pam_env would read it as the value); a commented one becomes the note', () => {
    changesEach('environment', [
      ['NPM_TOKEN=npm_abc', 'NPM_TOKEN='],
      ['GITHUB_TOKEN="ghp_abc"', 'GITHUB_TOKEN='],
      ['export NPM_TOKEN=npm_abc', 'export NPM_TOKEN='],
      ['aws_secret_access_key=abc', 'aws_secret_access_key='],
      ['PIP_INDEX_URL="https://user:pass@index.example.test/simple"', 'PIP_INDEX_URL='],
      ['MYSQL_PWD=hunter2', 'MYSQL_PWD='],
      ['# GITHUB_TOKEN=ghp_old', REMOVED_NOTE],
    ]);
    // The lines a value spanned go with it: pam_env would join a `\\` left at a line's end to the next line that is not blank.
    const text = 'LANG=C.UTF-8\nNPM_TOKEN="npm_a\n\nnpm_b"\nEDITOR=vi\n';
    expect(sanitizeConfig(text, 'environment')).toBe('LANG=C.UTF-8\nNPM_TOKEN=\nEDITOR=vi\n');
  });

  it('withholds a file in which pam_env would still read a secret the shell does not see as one value', () => {
    // pam_env takes the whole rest of the line as the value; a shell, only the first word.
    expect(sanitizeConfig('LANG=C.UTF-8\nGITHUB_TOKEN=ghp_abc more\n', 'environment')).toBe(`${WITHHELD_NOTE}\n`);
  });

  it('reads a << as a shell that sources the file does: the lines it takes are a body, replaced when one holds a secret', () => {
    const text = 'BANNER=a<<EOF\nNPM_TOKEN=npm_abc\nEOF\nLANG=C.UTF-8\n';
    expect(sanitizeConfig(text, 'environment')).toBe(removedAt(text, 1));
  });
});

describe('sanitizeConfig: shell, hostile input', () => {
  it('keeps CRLF endings, on kept and on changed lines, and a missing last newline missing', () => {
    const crlf = 'export LANG=C.UTF-8\r\nexport NPM_TOKEN=npm_abc\r\nexport B="npm_a\r\nnpm_b"\r\numask 022\r\n';
    expect(sanitizeConfig(crlf, 'shell')).toBe(`export LANG=C.UTF-8\r\n${noted('export NPM_TOKEN=')}\r\nexport B="npm_a\r\nnpm_b"\r\numask 022\r\n`);
    expect(sanitizeConfig('umask 022\nexport NPM_TOKEN=npm_abc', 'shell')).toBe(`umask 022\n${noted('export NPM_TOKEN=')}`);
    expect(sanitizeConfig('GITHUB_TOKEN=ghp_abc', 'environment')).toBe('GITHUB_TOKEN=');
    expect(sanitizeConfig('export LANG=C.UTF-8', 'shell')).toBe('export LANG=C.UTF-8');
    expect(sanitizeConfig('', 'shell')).toBe('');
  });

  it('keeps a byte-order mark, and judges the line after it', () => {
    expect(sanitizeConfig('\uFEFFexport NPM_TOKEN=npm_abc\nexport A=1\n', 'shell')).toBe(`\uFEFF${noted('export NPM_TOKEN=')}\nexport A=1\n`);
    expect(sanitizeConfig('\uFEFFLANG=C.UTF-8\n', 'environment')).toBe('\uFEFFLANG=C.UTF-8\n');
  });

  it('withholds a file whose quote never closes, when it may hold a secret; keeps it when not; a here-document runs to the end', () => {
    const open = 'export LANG=C.UTF-8\nexport NPM_TOKEN="npm_abc\numask 022\nexport A=1\n';
    expect(sanitizeConfig(open, 'shell')).toBe(`${WITHHELD_NOTE}\n`);
    const heredoc = 'export LANG=C.UTF-8\nread -r NPM_TOKEN <<EOF\nnpm_abc\n';
    expect(sanitizeConfig(heredoc, 'shell')).toBe(removedAt(heredoc, 2));
    const harmless = "echo 'it\nexport A=1\n";
    expect(sanitizeConfig(harmless, 'shell')).toBe(harmless);
  });

  it('reads very long lines in linear time, and still finds the secret at their end', () => {
    const long = 'a'.repeat(1_000_000);
    expect(sanitizeConfig(`x=${long}\n`, 'shell')).toBe(`x=${long}\n`);
    const assignments = 'a=1 '.repeat(250_000);
    expect(sanitizeConfig(`export ${assignments}\n`, 'shell')).toBe(`export ${assignments}\n`);
    expect(sanitizeConfig(`export ${assignments}NPM_TOKEN=npm_abc\n`, 'shell')).toBe(`${noted(`export ${assignments}NPM_TOKEN=`)}\n`);
    const brackets = 'a['.repeat(500_000);
    expect(sanitizeConfig(`${brackets}\n`, 'shell')).toBe(`${brackets}\n`);
    const reads = 'read '.repeat(200_000);
    expect(sanitizeConfig(`${reads}\n`, 'shell')).toBe(`${reads}\n`);
    const quotes = `echo ${'"a" \'b\' $(c) '.repeat(60_000)}`;
    expect(sanitizeConfig(`${quotes}\nexport GITHUB_TOKEN=ghp_abc`, 'shell')).toBe(`${quotes}\n${noted('export GITHUB_TOKEN=')}`);
    const heredocs = '<<a '.repeat(200_000);
    expect(sanitizeConfig(`cat ${heredocs}\n`, 'shell')).toBe(`cat ${heredocs}\n`);
    const urls = `export X="${'https://h.example.test/p '.repeat(40_000)}https://bob:pw@h.example.test/"`;
    expect(sanitizeConfig(`${urls}\n`, 'environment')).toBe('export X=\n');
    const value = `export NPM_TOKEN="${'a; fi) '.repeat(125_000)}"`;
    expect(sanitizeConfig(`${value}\n`, 'shell')).toBe(`${noted('export NPM_TOKEN=')}\n`);
    const nested = '$('.repeat(200_000);
    expect(sanitizeConfig(`${nested}\nexport NPM_TOKEN=npm_abc\n`, 'shell')).toBe(`${WITHHELD_NOTE}\n`);
    const backslashes = '\\'.repeat(1_000_001);
    expect(sanitizeConfig(`cat <<EOF\n${backslashes}\nEOF\nEOF\nexport NPM_TOKEN=npm_abc\n`, 'shell')).toBe(`cat <<EOF\n${backslashes}\nEOF\nEOF\n${noted('export NPM_TOKEN=')}\n`);
    const arithmetic = `x=$((${'('.repeat(300_000)}1${')'.repeat(300_000)}))`;
    expect(sanitizeConfig(`${arithmetic}\n`, 'shell')).toBe(`${arithmetic}\n`);
  });
});

describe('sanitizeConfig: csh', () => {
  /** The csh-family shells this machine has: only they can say whether a copy still parses. */
  const cshs = ['csh', 'tcsh'].filter((shell) => {
    try {
      execFileSync('sh', ['-c', `command -v ${shell}`], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  });

  it('shows a csh snippet with a secret (setenv, set) as a single note, and one without as it is', () => {
    for (const text of ['setenv GITHUB_TOKEN ghp_s3cr3t\n', 'if ( $?prompt ) then\n  setenv NPM_TOKEN "ghp_s3cr3t"\nendif\n', 'set api_token = ghp_s3cr3t\n', 'setenv PIP_INDEX_URL https://u:ghp_s3cr3t@h.example.test/simple\n', 'setenv MYSQL_PWD s3cr3t\n']) {
      expect(sanitizeConfig(text, 'csh'), text).toBe(`${WITHHELD_NOTE}\n`);
    }
    const clean = 'setenv LANG C.UTF-8\nset path = ( $path /opt/bin )\nif ( $?GITHUB_TOKEN ) echo set\n';
    expect(sanitizeConfig(clean, 'csh')).toBe(clean);
  });

  it.skipIf(cshs.length === 0)('leaves the note parsing in csh and tcsh', () => {
    const dir = mkdtempSync(join(tmpdir(), 'qs-csh-'));
    try {
      const file = join(dir, 'x.csh');
      writeFileSync(file, sanitizeConfig('setenv GITHUB_TOKEN ghp_s3cr3t\n', 'csh'));
      for (const shell of cshs) expect(() => execFileSync(shell, ['-n', file], { stdio: 'pipe' }), shell).not.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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

  it('reads the shell start-up files and /etc/environment too, and each file directly in /etc/profile.d', () => {
    const plan: RootPlan = { args: [], visible: ['/etc'], toolchains: [] };
    const candidates = configCandidates(plan);
    expect(candidates).toEqual(
      expect.arrayContaining([
        { path: '/etc/environment', format: 'environment' },
        { path: '/etc/profile', format: 'shell' },
        { path: '/etc/bash.bashrc', format: 'shell' },
        ...profileCandidates('/etc/profile.d'),
      ]),
    );
  });

  it('lists a profile.d folder by name, its regular files and links, not its folders; past the bound, only the folder', () => {
    const { root } = prefix();
    const folder = join(root, 'etc', 'profile.d');
    mkdirSync(join(folder, 'sub'), { recursive: true });
    for (const name of ['b.sh', 'a.sh', 'z.csh']) writeFileSync(join(folder, name), 'umask 022\n');
    symlinkSync('a.sh', join(folder, 'l.sh'));
    expect(profileCandidates(folder)).toEqual([...['a.sh', 'b.sh', 'l.sh'].map((name) => ({ path: join(folder, name), format: 'shell' })), { path: join(folder, 'z.csh'), format: 'csh' }]);
    expect(profileCandidates(join(root, 'missing'))).toEqual([]);
    for (let i = 0; i < MAX_PROFILE_FILES - 4; i++) writeFileSync(join(folder, `f${String(i).padStart(3, '0')}.sh`), '');
    expect(profileCandidates(folder)).toHaveLength(MAX_PROFILE_FILES);
    writeFileSync(join(folder, 'one-more.sh'), '');
    expect(profileCandidates(folder)).toEqual([{ path: folder, tooMany: MAX_PROFILE_FILES + 1 }]);
  });

  it('shows a shell snippet and an environment file without their secrets, a clean snippet as it is, a folder of too many as a note', () => {
    const { root, support, plan } = prefix();
    const folder = join(root, 'etc', 'profile.d');
    mkdirSync(folder);
    writeFileSync(join(folder, 'lang.sh'), 'export LANG=C.UTF-8\n', { mode: 0o644 });
    writeFileSync(join(folder, 'zz-secret.sh'), 'export LANG=C.UTF-8\nexport NPM_TOKEN=npm_secret\n', { mode: 0o644 });
    writeFileSync(join(root, 'etc', 'environment'), 'LANG=C.UTF-8\nGITHUB_TOKEN="ghp_secret"\n', { mode: 0o644 });
    const crowded = join(root, 'share');
    for (let i = 0; i <= MAX_PROFILE_FILES; i++) writeFileSync(join(crowded, `f${i}.sh`), 'export NPM_TOKEN=npm_secret\n', { mode: 0o644 });
    const candidates = [...profileCandidates(folder), { path: join(root, 'etc', 'environment'), format: 'environment' as const }, ...profileCandidates(crowded)];
    const covered = coverConfigs(support, plan, candidates);
    expect(covered.map((c) => c.path)).toEqual([join(folder, 'zz-secret.sh'), join(root, 'etc', 'environment'), crowded]);
    expect(readFileSync(covered[0]!.copy, 'utf8')).toBe(`export LANG=C.UTF-8\n${noted('export NPM_TOKEN=')}\n`);
    expect(readFileSync(covered[1]!.copy, 'utf8')).toBe('LANG=C.UTF-8\nGITHUB_TOKEN=\n');
    expect(readdirSync(covered[2]!.copy)).toEqual(['README']);
    expect(readFileSync(join(covered[2]!.copy, 'README'), 'utf8')).toMatch(/^# quickloop does not show this folder's files inside the sandbox: it holds 201, more than the 200/);
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
