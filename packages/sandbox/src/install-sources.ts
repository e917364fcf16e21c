// A new sandbox home's npmrc and pip.conf: the registries this machine's npm and pip install from, where the policy lets them be reached.
//
// A sandbox's home is new and its environment is an allowlist, so a registry set only in the harness
// user's ~/.npmrc or pip.conf, or in NPM_CONFIG_REGISTRY or PIP_INDEX_URL, is not seen inside it: npm
// and pip there would go to their defaults, which the egress policy (built from the registries found
// here) refuses. The harness writes the same registries into the new home, before setup, so that the
// sandbox's package managers install from where this machine's do.
import { open, mkdir } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { endpointOfUrl } from './hosts.js';
import { decide } from './policy.js';
import { sandboxOwner } from './rootfs.js';
import type { EgressPolicy } from './types.js';

/** What to write: npmrc lines (`registry`, `@scope:registry`) and pip's index and extra indexes, as http(s) URLs without credentials. */
export interface InstallSources {
  npm: Array<[string, string]>;
  pip: { index?: string; extra: string[] };
}

/** A URL the proxy lets the sandbox reach, and that no config line can be smuggled through. */
function reachable(policy: EgressPolicy, url: string): boolean {
  if (/[\s\0]/.test(url)) return false;
  const e = endpointOfUrl(url);
  return e !== undefined && decide(policy, e.host, e.port).allow;
}

/** The files' text, or undefined where there is nothing to write. */
export function installSourceFiles(sources: InstallSources, policy: EgressPolicy): { npmrc?: string; pipConf?: string } {
  const npm = sources.npm.filter(([key, url]) => /^(registry|@[a-z0-9][\w.-]*:registry)$/i.test(key) && reachable(policy, url));
  const index = sources.pip.index !== undefined && reachable(policy, sources.pip.index) ? sources.pip.index : undefined;
  // pip.conf's extra-index-url replaces the system file's: all of them, or none (the system's stay in force).
  const extra = sources.pip.extra.length > 0 && sources.pip.extra.every((u) => reachable(policy, u)) ? sources.pip.extra : [];
  const pipLines = [...(index !== undefined ? [`index-url = ${index}`] : []), ...(extra.length > 0 ? ['extra-index-url =', ...extra.map((u) => `    ${u}`)] : [])];
  return {
    ...(npm.length > 0 ? { npmrc: `${npm.map(([key, url]) => `${key}=${url}`).join('\n')}\n` } : {}),
    ...(pipLines.length > 0 ? { pipConf: `[global]\n${pipLines.join('\n')}\n` } : {}),
  };
}

/**
 * Writes the home's `.npmrc` and `.config/pip/pip.conf` (only what the policy lets the sandbox
 * reach), owned by the sandbox's user, who may change them. Returns the files written. The home is
 * new: a file already there (a link above all) is never written through.
 */
export async function writeInstallSources(home: string, sources: InstallSources, policy: EgressPolicy): Promise<string[]> {
  const files = installSourceFiles(sources, policy);
  const top = resolve(home);
  const own = sandboxOwner();
  const written: string[] = [];
  const write = async (rel: string, text: string): Promise<void> => {
    const file = join(top, rel);
    for (let d = top, parts = dirname(rel).split(sep).filter((p) => p !== '.'); parts.length > 0; ) {
      d = join(d, parts.shift()!);
      try {
        await mkdir(d, { mode: 0o755 });
        await own(d);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    // wx: never through a link or over a file that is there.
    const handle = await open(file, 'wx', 0o644);
    try {
      await handle.writeFile(text);
    } finally {
      await handle.close();
    }
    await own(file);
    written.push(file);
  };
  if (files.npmrc !== undefined) await write('.npmrc', files.npmrc);
  if (files.pipConf !== undefined) await write(join('.config', 'pip', 'pip.conf'), files.pipConf);
  return written;
}
