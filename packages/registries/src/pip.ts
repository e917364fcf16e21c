// pip's indexes as pip would resolve them: PIP_* env, the pip.conf files it reads, then the default compiled into the installed pip.
import { delimiter, dirname, join } from 'node:path';
import { endpointOf, listDir, parseIni, plainUrl, readText } from './files.js';
import type { Found, SystemPaths } from './types.js';

const INDEX_PY = join('pip', '_internal', 'models', 'index.py');

/** Where an installed pip may live: the active pyenv or virtualenv first, then PATH neighbours, then system dirs. */
function sitePackagesDirs(env: Record<string, string | undefined>, home: string, root: string): string[] {
  const dirs: string[] = [];
  const libsUnder = (prefix: string): void => {
    const lib = join(prefix, 'lib');
    for (const name of listDir(lib).filter((n) => /^python3(\.\d+)?$/.test(n)).reverse()) {
      dirs.push(join(lib, name, 'site-packages'), join(lib, name, 'dist-packages'));
    }
  };
  if (env.VIRTUAL_ENV) libsUnder(env.VIRTUAL_ENV);
  const pyenvRoot = env.PYENV_ROOT ?? join(home, '.pyenv');
  const pyenvVersion = env.PYENV_VERSION ?? readText(join(pyenvRoot, 'version'))?.split(/\s+/)[0];
  if (pyenvVersion) libsUnder(join(pyenvRoot, 'versions', pyenvVersion));
  for (const dir of (env.PATH ?? '').split(delimiter)) if (dir) libsUnder(dirname(dir));
  libsUnder(join(home, '.local'));
  libsUnder(join(root, 'usr', 'local'));
  dirs.push(join(root, 'usr', 'lib', 'python3', 'dist-packages'));
  return dirs;
}

/** pip's default index and its file host, read from the installed pip's own source. */
export function builtinPipIndex(env: Record<string, string | undefined>, home: string, root: string): { file: string; index: string; files?: string } | undefined {
  for (const dir of sitePackagesDirs(env, home, root)) {
    const file = join(dir, INDEX_PY);
    const text = readText(file);
    if (!text) continue;
    const m = /PyPI\s*=\s*PackageIndex\(\s*["']([^"']+)["']\s*(?:,\s*file_storage_domain\s*=\s*["']([^"']+)["'])?/.exec(text);
    if (m) return { file, index: m[1]!, ...(m[2] ? { files: m[2] } : {}) };
  }
  return undefined;
}

const urls = (value: string | undefined): string[] => (value ?? '').split(/\s+/).filter((s) => s !== '');

/** The config files pip reads, lowest priority first (pip's `iter_config_files`). */
function configFiles(env: Record<string, string | undefined>, home: string, root: string): string[] {
  if (env.PIP_CONFIG_FILE === '/dev/null' || env.PIP_CONFIG_FILE === 'os.devnull') return [];
  const xdgDirs = (env.XDG_CONFIG_DIRS ?? '/etc/xdg').split(':').filter(Boolean);
  const files = [...xdgDirs.map((d) => join(root, d, 'pip', 'pip.conf')), join(root, 'etc', 'pip.conf')];
  files.push(join(home, '.pip', 'pip.conf'), join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'pip', 'pip.conf'));
  if (env.VIRTUAL_ENV) files.push(join(env.VIRTUAL_ENV, 'pip.conf'));
  if (env.PIP_CONFIG_FILE) files.push(env.PIP_CONFIG_FILE);
  return files;
}

interface Url {
  url: string;
  from: string;
  /** A find-links location rather than an index. */
  links?: boolean;
}

/**
 * What pip's config files and PIP_* variables say for `pip install`: its index, the extra ones and
 * find-links (every file's, the hosts a policy must allow), the extra indexes pip itself uses (the
 * last place that sets them: a later file replaces an earlier one's list), and its CA bundle.
 */
function pipConfig(env: Record<string, string | undefined>, home: string, root: string): { index?: Url; extra: Url[]; extraInForce: string[]; cert?: string } {
  let index: Url | undefined;
  let cert: string | undefined;
  const extra: Url[] = [];
  let extraInForce: string[] = [];
  const add = (value: string, from: string, links = false): void => {
    for (const url of urls(value)) extra.push({ url, from, ...(links ? { links } : {}) });
  };
  // pip merges its files (a later one's key replaces an earlier one's), then lets [install] override
  // [global] for `pip install`, the command tasks run, whichever file each came from.
  const sections = { global: {} as { index?: Url; extra?: string[] }, install: {} as { index?: Url; extra?: string[] } };
  for (const file of configFiles(env, home, root)) {
    const text = readText(file);
    if (text === undefined) continue;
    const ini = parseIni(text);
    for (const section of ['global', 'install'] as const) {
      const values = ini.get(section);
      if (!values) continue;
      const indexUrl = values.get('index-url') ?? values.get('index_url');
      if (indexUrl && urls(indexUrl)[0] !== undefined) sections[section].index = { url: urls(indexUrl)[0]!, from: `pip config ${file} (${section}.index-url)` };
      for (const key of ['extra-index-url', 'find-links']) {
        const v = values.get(key) ?? values.get(key.replace(/-/g, '_'));
        if (v) add(v, `pip config ${file} (${section}.${key})`, key === 'find-links');
        if (v && key === 'extra-index-url') sections[section].extra = urls(v);
      }
      const c = values.get('cert');
      if (c) cert = c;
    }
  }
  index = sections.install.index ?? sections.global.index;
  extraInForce = sections.install.extra ?? sections.global.extra ?? [];
  if (env.PIP_INDEX_URL && urls(env.PIP_INDEX_URL)[0] !== undefined) index = { url: urls(env.PIP_INDEX_URL)[0]!, from: 'PIP_INDEX_URL' };
  if (env.PIP_EXTRA_INDEX_URL) {
    add(env.PIP_EXTRA_INDEX_URL, 'PIP_EXTRA_INDEX_URL');
    extraInForce = urls(env.PIP_EXTRA_INDEX_URL);
  }
  if (env.PIP_FIND_LINKS) add(env.PIP_FIND_LINKS, 'PIP_FIND_LINKS', true);
  if (env.PIP_CERT) cert = env.PIP_CERT;
  return { ...(index ? { index } : {}), extra, extraInForce, ...(cert !== undefined ? { cert } : {}) };
}

export function pipRegistries(opts: { env: Record<string, string | undefined>; home: string; paths: SystemPaths }): Found[] {
  const { env, home } = opts;
  const root = opts.paths.root;
  const config = pipConfig(env, home, root);
  const found: Found[] = [];
  const push = (u: Url): void => {
    const endpoint = endpointOf(u.url);
    if (endpoint) found.push({ endpoint, from: u.from });
  };
  if (config.index) push(config.index);
  else {
    const builtin = builtinPipIndex(env, home, root);
    const host = builtin ? endpointOf(builtin.index) : undefined;
    if (builtin && host) {
      found.push({ endpoint: host, from: `pip default (${builtin.file})` });
      // The default index serves its files from a second host; pip installs fail without it.
      if (builtin.files) found.push({ endpoint: `${builtin.files.toLowerCase()}:443`, from: `pip default file host (${builtin.file})` });
    }
  }
  for (const u of config.extra) push(u);
  return found;
}

/**
 * The package indexes `pip install` reads here, in pip's order (the index, then the extra ones), as
 * http(s) URLs ending in `/`, and the CA bundle pip is configured with: where the install cache
 * fetches what an attempt installed. A local (`file:`) index is left out: there is nothing to download.
 */
export function pipIndexes(opts: { env: Record<string, string | undefined>; home: string; paths?: Partial<SystemPaths> }): { urls: string[]; cert?: string } {
  const root = opts.paths?.root ?? '/';
  const config = pipConfig(opts.env, opts.home, root);
  const index = config.index?.url ?? builtinPipIndex(opts.env, opts.home, root)?.index;
  const extra = config.extra.filter((u) => u.links !== true).map((u) => u.url);
  const out: string[] = [];
  for (const raw of [...(index !== undefined ? [index] : []), ...extra]) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      continue;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') continue;
    url.hash = '';
    let text = url.toString().replace(/\/*$/, '/');
    // pip keeps a default port that is spelled out (`:443`), and so do the URLs of the index's files, which key pip's cache.
    const port = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#]*@)?[^/?#:]*:0*(\d+)(?:[/?#]|$)/i.exec(raw.trim())?.[1];
    if (url.port === '' && port !== undefined) {
      const auth = url.username !== '' || url.password !== '' ? `${url.username}${url.password !== '' ? `:${url.password}` : ''}@` : '';
      text = `${url.protocol}//${auth}${url.host}:${port}${url.pathname}${url.search}`.replace(/\/*$/, '/');
    }
    if (!out.includes(text)) out.push(text);
  }
  return { urls: out, ...(config.cert !== undefined ? { cert: config.cert } : {}) };
}

/**
 * The indexes pip is configured with here that a sandbox's pip can be pointed at as they are: the
 * index (when configured, not pip's default) and the extra ones, http(s) only. A URL with credentials
 * in it is left out: credentials never enter a sandbox, and without them that index would refuse. The
 * extra indexes go all together or not at all, since a sandbox's own pip.conf would replace the list.
 */
export function pipForwardable(opts: { env: Record<string, string | undefined>; home: string; paths?: Partial<SystemPaths> }): { index?: string; extra: string[] } {
  const config = pipConfig(opts.env, opts.home, opts.paths?.root ?? '/');
  const index = config.index ? plainUrl(config.index.url) : undefined;
  // A sandbox's pip.conf replaces the list the system's files give: all of them, or none.
  const wanted = config.extraInForce.map(plainUrl);
  const extra = wanted.every((u) => u !== undefined) ? [...new Set(wanted as string[])] : [];
  return { ...(index !== undefined ? { index } : {}), extra };
}
