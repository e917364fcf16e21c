import { lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { installSourceFiles, writeInstallSources, type InstallSources } from './install-sources.js';
import { outerIds } from './rootfs.js';
import { policy, tempFolders } from './test-helpers.js';

const { temp, cleanup } = tempFolders('qs-install-sources-');
afterEach(cleanup);

const sources: InstallSources = {
  npm: [
    ['registry', 'https://npm-mirror.test/r/'],
    ['@corp:registry', 'http://npm-corp.test:4873/'],
  ],
  pip: { index: 'https://pip-mirror.test/simple/', extra: ['https://pip-extra.test/simple/'] },
};

describe('installSourceFiles', () => {
  it('writes only what the policy lets the sandbox reach, on its exact port', () => {
    expect(installSourceFiles(sources, policy({ registries: ['npm-mirror.test:443', 'npm-corp.test:4873', 'pip-mirror.test:443', 'pip-extra.test:443'] }))).toEqual({
      npmrc: 'registry=https://npm-mirror.test/r/\n@corp:registry=http://npm-corp.test:4873/\n',
      pipConf: '[global]\nindex-url = https://pip-mirror.test/simple/\nextra-index-url =\n    https://pip-extra.test/simple/\n',
    });
    // Another port, or a host named nowhere: left out. An extra index out of reach takes the whole list with it.
    expect(installSourceFiles(sources, policy({ registries: ['npm-mirror.test:443', 'npm-corp.test:443', 'pip-mirror.test:443'] }))).toEqual({
      npmrc: 'registry=https://npm-mirror.test/r/\n',
      pipConf: '[global]\nindex-url = https://pip-mirror.test/simple/\n',
    });
    // network.allow hosts count too (the task author named them).
    expect(installSourceFiles(sources, policy({ explicit: ['npm-mirror.test'] }))).toEqual({ npmrc: 'registry=https://npm-mirror.test/r/\n' });
    expect(installSourceFiles(sources, policy())).toEqual({});
  });

  it('refuses a key or URL that could carry another setting', () => {
    const hostile: InstallSources = {
      npm: [
        ['registry\n_authToken', 'https://npm-mirror.test/'],
        ['script-shell', 'https://npm-mirror.test/'],
        ['registry', 'https://npm-mirror.test/\nscript-shell=/tmp/x'],
      ],
      pip: { index: 'https://pip-mirror.test/ \n[install]', extra: [] },
    };
    expect(installSourceFiles(hostile, policy({ registries: ['npm-mirror.test:443', 'pip-mirror.test:443'] }))).toEqual({});
  });
});

describe('writeInstallSources', () => {
  it("writes the new home's .npmrc and pip.conf, as the sandbox user's files", async () => {
    const home = temp();
    const written = await writeInstallSources(home, sources, policy({ registries: ['npm-mirror.test:443', 'pip-mirror.test:443'] }));
    expect(written).toEqual([join(home, '.npmrc'), join(home, '.config', 'pip', 'pip.conf')]);
    expect(readFileSync(join(home, '.npmrc'), 'utf8')).toBe('registry=https://npm-mirror.test/r/\n');
    expect(readFileSync(join(home, '.config', 'pip', 'pip.conf'), 'utf8')).toBe('[global]\nindex-url = https://pip-mirror.test/simple/\n');
    if (process.getuid?.() === 0) {
      for (const p of ['.npmrc', '.config', join('.config', 'pip'), join('.config', 'pip', 'pip.conf')]) expect(lstatSync(join(home, p)).uid).toBe(outerIds().uid);
    }
    expect(await writeInstallSources(temp(), sources, policy())).toEqual([]);
  });

  it('never writes through a link or over a file already there', async () => {
    const home = temp();
    const elsewhere = join(temp(), 'target');
    writeFileSync(elsewhere, 'untouched\n');
    symlinkSync(elsewhere, join(home, '.npmrc'));
    await expect(writeInstallSources(home, sources, policy({ registries: ['npm-mirror.test:443'] }))).rejects.toThrow(/EEXIST/);
    expect(readFileSync(elsewhere, 'utf8')).toBe('untouched\n');
    const other = temp();
    mkdirSync(join(other, '.config', 'pip'), { recursive: true });
    writeFileSync(join(other, '.config', 'pip', 'pip.conf'), 'mine\n');
    await expect(writeInstallSources(other, { npm: [], pip: sources.pip }, policy({ registries: ['pip-mirror.test:443'] }))).rejects.toThrow(/EEXIST/);
    expect(readFileSync(join(other, '.config', 'pip', 'pip.conf'), 'utf8')).toBe('mine\n');
  });
});
