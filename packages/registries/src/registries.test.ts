import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverRegistries, endpointOf, installSources, pipIndexes } from './index.js';

let base: string;
const write = (rel: string, text: string): string => {
  const file = join(base, rel);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
};

/** A fake machine: an npm install, a pip install, apt sources, a home and a project, all under one temp dir. */
function fakeMachine(): { env: Record<string, string>; home: string; cwd: string; paths: { root: string; execPath: string } } {
  write('usr/lib/node_modules/npm/package.json', '{ "name": "npm", "version": "11.0.0" }');
  write(
    'usr/lib/node_modules/npm/node_modules/@npmcli/config/lib/definitions/definitions.js',
    "const x = {\n  registry: new Definition('registry', {\n    default: 'https://npm-default.test/',\n    type: url,\n  }),\n}\n",
  );
  write('usr/bin/node', '');
  write('venv/lib/python3.12/site-packages/pip/_internal/models/index.py', 'PyPI = PackageIndex("https://py-default.test/", file_storage_domain="py-files.test")\n');
  write('etc/apt/sources.list', '# comment\ndeb [arch=amd64 signed-by=/k.gpg] http://apt-one.test/debian bookworm main\ndeb-src https://apt-src.test/debian bookworm main\n');
  write('etc/apt/sources.list.d/extra.list', 'deb mirror+https://apt-mirrors.test/list.txt stable main\n');
  write(
    'etc/apt/sources.list.d/deb822.sources',
    'Types: deb\nURIs: http://apt-822.test/debian http://apt-822b.test/debian\nSuites: bookworm\n\nTypes: deb\nEnabled: no\nURIs: http://apt-disabled.test/x\nSuites: x\n',
  );
  write('etc/apt/sources.list.d/ignored.list.disabled', 'deb http://apt-ignored.test/ x main\n');
  mkdirSync(join(base, 'home'), { recursive: true });
  write('project/package.json', '{}');
  mkdirSync(join(base, 'project', 'sub'), { recursive: true });
  return {
    env: { PATH: '', VIRTUAL_ENV: join(base, 'venv'), HOME: join(base, 'home') },
    home: join(base, 'home'),
    cwd: join(base, 'project', 'sub'),
    paths: { root: base, execPath: join(base, 'usr', 'bin', 'node') },
  };
}

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'qs-registries-'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('discoverRegistries', () => {
  it('reads the defaults from the installed npm and pip, and every enabled apt source', async () => {
    const m = fakeMachine();
    const r = await discoverRegistries({ ...m, spawnFallback: false });
    expect(r.endpoints).toEqual(['npm-default.test:443', 'py-default.test:443', 'py-files.test:443', 'apt-one.test:80', 'apt-src.test:443', 'apt-822.test:80', 'apt-822b.test:80', 'apt-mirrors.test:443']);
    expect(r.sources[0]!.from).toContain('definitions.js');
    expect(r.sources.find((s) => s.endpoint === 'apt-822.test:80')!.from).toContain('deb822.sources');
  });

  it('lets npmrc files override in npm order (global < user < project < env) and keeps scoped registries', async () => {
    const m = fakeMachine();
    write('usr/etc/npmrc', 'registry=https://npm-global.test/\n');
    write('home/.npmrc', '; user\nregistry = "https://npm-user.test/"\n@corp:registry=http://npm-corp.test:4873/\n');
    let r = await discoverRegistries({ ...m, spawnFallback: false });
    expect(r.endpoints.slice(0, 2)).toEqual(['npm-user.test:443', 'npm-corp.test:4873']);
    write('project/.npmrc', 'registry=https://${REG_HOST}/npm/\n');
    r = await discoverRegistries({ ...m, env: { ...m.env, REG_HOST: 'npm-project.test' }, spawnFallback: false });
    expect(r.endpoints[0]).toBe('npm-project.test:443');
    expect(r.sources[0]!.from).toContain(join('project', '.npmrc'));
    r = await discoverRegistries({ ...m, env: { ...m.env, NPM_CONFIG_REGISTRY: 'https://npm-env.test' }, spawnFallback: false });
    expect(r.sources[0]).toEqual({ endpoint: 'npm-env.test:443', from: 'npm environment (registry)' });
  });

  it('follows pip.conf files and PIP_* variables, and drops the default file host when the index is replaced', async () => {
    const m = fakeMachine();
    write('etc/pip.conf', '[global]\nextra-index-url =\n    https://pip-extra1.test/simple\n    https://pip-extra2.test/simple\n');
    write('home/.config/pip/pip.conf', '[install]\nindex-url = https://pip-user.test/simple\nfind-links = /local/wheels\n');
    let r = await discoverRegistries({ ...m, spawnFallback: false });
    expect(r.endpoints).toContain('pip-user.test:443');
    expect(r.endpoints).toContain('pip-extra1.test:443');
    expect(r.endpoints).toContain('pip-extra2.test:443');
    expect(r.endpoints).not.toContain('py-default.test:443');
    expect(r.endpoints).not.toContain('py-files.test:443');
    r = await discoverRegistries({ ...m, env: { ...m.env, PIP_INDEX_URL: 'https://pip-env.test/simple', PIP_EXTRA_INDEX_URL: 'https://a.test/ http://b.test:8080/' }, spawnFallback: false });
    expect(r.sources.filter((s) => s.from.startsWith('PIP_')).map((s) => s.endpoint)).toEqual(['pip-env.test:443', 'a.test:443', 'b.test:8080']);
  });

  it("gives the install cache pip's index URLs in pip's order (http(s) only, no find-links) and its CA file", () => {
    const m = fakeMachine();
    // Nothing configured: the default compiled into the installed pip.
    expect(pipIndexes(m)).toEqual({ urls: ['https://py-default.test/'] });
    write('etc/pip.conf', '[global]\ncert = /etc/ssl/pip.pem\nextra-index-url =\n    https://pip-extra1.test/simple\n    file:///opt/local/simple\nfind-links = https://links.test/wheels/\n');
    write('home/.config/pip/pip.conf', '[install]\nindex-url = https://me:secret@pip-user.test/simple#frag\n');
    expect(pipIndexes(m)).toEqual({ urls: ['https://me:secret@pip-user.test/simple/', 'https://pip-extra1.test/simple/'], cert: '/etc/ssl/pip.pem' });
    expect(pipIndexes({ ...m, env: { ...m.env, PIP_INDEX_URL: 'http://127.0.0.1:3141/root/pypi/+simple', PIP_CERT: '/other.pem' } })).toEqual({ urls: ['http://127.0.0.1:3141/root/pypi/+simple/', 'https://pip-extra1.test/simple/'], cert: '/other.pem' });
    // A default port spelled out stays: pip keeps it in the URLs of the index's files, which key its cache.
    expect(pipIndexes({ ...m, env: { PIP_INDEX_URL: 'https://me:pw@Idx.TEST:0443/simple', PIP_EXTRA_INDEX_URL: 'http://idx.test:80 https://idx.test:8443/s' } }).urls).toEqual(['https://me:pw@idx.test:443/simple/', 'https://pip-extra1.test/simple/', 'http://idx.test:80/', 'https://idx.test:8443/s/']);
    // A local index replaces the default: nothing to download, and the default is not asked either.
    expect(pipIndexes({ ...m, env: { ...m.env, PIP_INDEX_URL: 'file:///srv/simple' } })).toEqual({ urls: ['https://pip-extra1.test/simple/'], cert: '/etc/ssl/pip.pem' });
  });

  it('gives a sandbox the configured registries npm and pip would use, leaving out any that need credentials', () => {
    const m = fakeMachine();
    // Nothing configured: npm and pip keep their defaults, nothing to tell a sandbox.
    expect(installSources(m)).toEqual({ npm: [], pip: { extra: [] } });
    write('home/.npmrc', 'registry=https://npm-user.test/npm\n@open:registry=http://npm-open.test:4873\n@corp:registry=https://npm-corp.test/c/\n//npm-corp.test/:_authToken=${TOKEN}\n@url:registry=https://me:pw@npm-url.test/\n@q:registry=https://npm-q.test/r?token=abc\n@q2:registry=https://npm-q2.test/r?\n@fury:registry=https://npm-fury.test/AbCdEf0123456789xyzQ/\n@artifactory:registry=https://npm-art.test/artifactory/api/npm/npm-remote-2024/\n');
    write('home/.config/pip/pip.conf', '[global]\nindex-url = https://pip-user.test/simple\nextra-index-url = https://pip-extra.test/simple file:///srv/simple https://me:pw@pip-private.test/s\nfind-links = https://links.test/\n');
    expect(installSources(m)).toEqual({
      npm: [
        ['registry', 'https://npm-user.test/npm/'],
        ['@open:registry', 'http://npm-open.test:4873/'],
        ['@artifactory:registry', 'https://npm-art.test/artifactory/api/npm/npm-remote-2024/'],
      ],
      // One extra index cannot be handed over (a local folder, credentials), so none is: the list is replaced whole.
      pip: { index: 'https://pip-user.test/simple/', extra: [] },
    });
    write('etc/pip.conf', '[global]\nextra-index-url = https://pip-extra.test/simple\n');
    write('home/.config/pip/pip.conf', '[global]\nextra-index-url = https://pip-extra2.test/simple\n');
    // pip reads the last file that sets the list: the user's replaces the system's.
    expect(installSources(m).pip).toEqual({ extra: ['https://pip-extra2.test/simple/'] });
    // …and for `pip install`, an [install] value beats a [global] one whichever file each is in.
    write('etc/pip.conf', '[install]\nindex-url = https://pip-install.test/simple\n');
    write('home/.config/pip/pip.conf', '[global]\nindex-url = https://pip-global.test/simple\n');
    expect(installSources(m).pip).toEqual({ index: 'https://pip-install.test/simple/', extra: [] });
    // The environment wins, as it does for npm and pip; a token for the default registry keeps it out.
    write('project/.npmrc', '_authToken=abc\n');
    const env = { ...m.env, NPM_CONFIG_REGISTRY: 'https://npm-env.test/', PIP_INDEX_URL: 'https://u:p@pip-env.test/simple' };
    const r = installSources({ ...m, env });
    expect(r.npm).toEqual([
      ['@open:registry', 'http://npm-open.test:4873/'],
      ['@artifactory:registry', 'https://npm-art.test/artifactory/api/npm/npm-remote-2024/'],
    ]);
    // An index that needs its credentials is not handed over at all (pip there keeps its default).
    expect(r.pip.index).toBeUndefined();
  });

  it('adds extra endpoints from the option, normalised, without duplicates', async () => {
    const m = fakeMachine();
    const r = await discoverRegistries({ ...m, extra: ['Mirror.TEST.', 'http://apt-one.test/x', 'localhost:4873', 'not a host'], spawnFallback: false });
    expect(r.endpoints.filter((h) => h === 'apt-one.test:80')).toHaveLength(1);
    expect(r.endpoints).toContain('mirror.test:443');
    expect(r.sources.filter((s) => s.from === 'option --allow-registry').map((s) => s.endpoint)).toEqual(['mirror.test:443', 'apt-one.test:80', 'localhost:4873']);
  });

  it('finds nothing (and does not throw) on an empty machine', async () => {
    const r = await discoverRegistries({ env: {}, home: join(base, 'nohome'), cwd: base, paths: { root: base, execPath: join(base, 'node') }, spawnFallback: false });
    expect(r).toEqual({ endpoints: [], sources: [] });
  });

  it("asks `npm config get registry` only when npm's own files cannot be read", async () => {
    const bin = join(base, 'fake-bin');
    write('fake-bin/npm', '#!/bin/sh\n[ "$1 $2 $3" = "config get registry" ] && echo https://npm-asked.test/\n');
    execFileSync('chmod', ['+x', join(bin, 'npm')]);
    const opts = { env: { PATH: bin }, home: join(base, 'home'), cwd: base, paths: { root: base, execPath: join(base, 'node') } };
    expect((await discoverRegistries({ ...opts, spawnFallback: false })).endpoints).toEqual([]);
    expect((await discoverRegistries(opts)).sources).toEqual([{ endpoint: 'npm-asked.test:443', from: 'npm config get registry' }]);
  });

  it('finds the registry the real npm on this machine reports', async () => {
    const out = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim();
    const endpoint = endpointOf(out);
    expect(endpoint).toMatch(/:\d+$/);
    const r = await discoverRegistries({ env: process.env, home: homedir(), cwd: process.cwd(), spawnFallback: false });
    expect(r.endpoints).toContain(endpoint);
  });
});
