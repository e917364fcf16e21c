// npm's registries as npm itself would resolve them: env, project, user, global and builtin npmrc, then its compiled-in default.
import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { exists, endpointOf, parseIni, plainUrl, readText } from './files.js';
import type { Found, SystemPaths } from './types.js';

/** Where npm keeps its config definitions, newest layout first. */
const DEFINITION_FILES = [
  'node_modules/@npmcli/config/lib/definitions/definitions.js',
  'lib/utils/config/definitions.js',
];

/** Finds the installed npm package: the running npm, then the npm beside node, then npm on PATH. */
export function findNpmRoot(env: Record<string, string | undefined>, paths: SystemPaths): string | undefined {
  const candidates: string[] = [];
  if (paths.npmRoot) candidates.push(paths.npmRoot);
  const execpath = env.npm_execpath;
  if (execpath && /npm-cli\.js$/.test(execpath)) candidates.push(dirname(dirname(execpath)));
  const nodeDir = dirname(paths.execPath);
  candidates.push(join(nodeDir, '..', 'lib', 'node_modules', 'npm'), join(nodeDir, 'node_modules', 'npm'));
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const bin = join(dir, 'npm');
    if (!exists(bin)) continue;
    try {
      // /usr/bin/npm → …/lib/node_modules/npm/bin/npm-cli.js
      candidates.push(dirname(dirname(realpathSync(bin))));
    } catch {
      /* a dangling link is not an npm */
    }
  }
  return candidates.find((dir) => /"name":\s*"npm"/.test(readText(join(dir, 'package.json')) ?? ''));
}

/** npm's compiled-in registry default, read from its own config definitions rather than by running npm. */
export function builtinNpmRegistry(npmRoot: string): string | undefined {
  for (const rel of DEFINITION_FILES) {
    const text = readText(join(npmRoot, rel));
    if (!text) continue;
    const m = /\bregistry:\s*new Definition\(\s*['"]registry['"]\s*,\s*\{\s*default:\s*['"]([^'"]+)['"]/.exec(text);
    if (m) return m[1];
  }
  return undefined;
}

/** npm expands `${VAR}` in npmrc values from the environment. */
function expand(value: string, env: Record<string, string | undefined>): string {
  return value.replace(/(\\*)\$\{([^}]+)\}/g, (whole, slashes: string, name: string) =>
    slashes.length % 2 === 1 ? whole.slice(1) : `${slashes}${env[name] ?? ''}`,
  );
}

/** The directory npm treats as the project: the nearest ancestor with package.json or node_modules. */
function localPrefix(cwd: string): string {
  let dir = cwd;
  for (;;) {
    if (exists(join(dir, 'package.json')) || exists(join(dir, 'node_modules'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return cwd;
    dir = parent;
  }
}

/** npm reads config from the environment case-insensitively: npm_config_x and NPM_CONFIG_X. */
function envConfig(env: Record<string, string | undefined>, key: string): string | undefined {
  const want = `npm_config_${key}`.toLowerCase();
  for (const [name, value] of Object.entries(env)) {
    if (name.toLowerCase() === want && value !== undefined && value !== '') return value;
  }
  return undefined;
}

interface Layer {
  from: string;
  values: Map<string, string>;
}

/** npm's effective registry settings: each value after `${VAR}` expansion, and every layer's keys (for the auth ones). */
interface NpmResolved {
  registry?: { url: string; from: string };
  scoped: Map<string, { url: string; from: string }>;
  /** Every key any layer sets, lower-cased: `//host/path/:_authtoken` and the like. */
  keys: Set<string>;
  root?: string;
}

function npmResolved(opts: { env: Record<string, string | undefined>; home: string; cwd: string; paths: SystemPaths }): NpmResolved {
  const { env, home, cwd, paths } = opts;
  const root = findNpmRoot(env, paths);
  const layers: Layer[] = [];
  const fileLayer = (path: string, from: string): void => {
    const text = readText(path);
    if (text === undefined) return;
    layers.push({ from: `${from} ${path}`, values: parseIni(text).get('') ?? new Map() });
  };
  // Lowest priority first: builtin, global, user, project, then the environment.
  const builtinRc = root ? join(root, 'npmrc') : undefined;
  if (builtinRc) fileLayer(builtinRc, 'npm builtin config');
  const builtinPrefix = layers[0]?.values.get('prefix');
  const prefix = envConfig(env, 'prefix') ?? (builtinPrefix ? expand(builtinPrefix, env) : dirname(dirname(paths.execPath)));
  fileLayer(envConfig(env, 'globalconfig') ?? join(prefix, 'etc', 'npmrc'), 'npm global config');
  const userconfig = envConfig(env, 'userconfig') ?? join(home, '.npmrc');
  fileLayer(userconfig, 'npm user config');
  const project = join(localPrefix(cwd), '.npmrc');
  if (project !== userconfig) fileLayer(project, 'npm project config');
  const envValues = new Map<string, string>();
  for (const [name, value] of Object.entries(env)) {
    const m = /^npm_config_(.+)$/i.exec(name);
    if (m && value) envValues.set(m[1]!.toLowerCase(), value);
  }
  layers.push({ from: 'npm environment', values: envValues });

  const out: NpmResolved = { scoped: new Map(), keys: new Set(), ...(root ? { root } : {}) };
  for (const layer of layers) {
    for (const [key, raw] of layer.values) {
      out.keys.add(key.toLowerCase());
      const value = expand(raw, env);
      if (key === 'registry') {
        if (endpointOf(value)) out.registry = { url: value, from: `${layer.from} (registry)` };
      } else if (/^@[^:]+:registry$/i.test(key)) {
        if (endpointOf(value)) out.scoped.set(key.toLowerCase(), { url: value, from: `${layer.from} (${key})` });
      }
    }
  }
  return out;
}

export function npmRegistries(opts: { env: Record<string, string | undefined>; home: string; cwd: string; paths: SystemPaths; spawnFallback: boolean }): Found[] {
  const resolved = npmResolved(opts);
  let registry: Found | undefined;
  if (resolved.registry) registry = { endpoint: endpointOf(resolved.registry.url)!, from: resolved.registry.from };
  else if (resolved.root) {
    const builtin = builtinNpmRegistry(resolved.root);
    const host = builtin ? endpointOf(builtin) : undefined;
    if (host) registry = { endpoint: host, from: `npm default (${join(resolved.root, DEFINITION_FILES[0]!)})` };
  }
  if (!registry && opts.spawnFallback) registry = askNpm(opts.env, opts.cwd);
  const scoped = [...resolved.scoped.values()].map((s) => ({ endpoint: endpointOf(s.url)!, from: s.from }));
  return [...(registry ? [registry] : []), ...scoped];
}

/**
 * The registries npm is configured with here that a sandbox's npm can be pointed at as they are: the
 * registry (when configured, not npm's default) and the scoped ones, as `[key, url]`. A URL with
 * credentials in it, or one npm holds credentials for (`//host/…:_authToken` and the like), is left
 * out: credentials never enter a sandbox, and without them that registry would refuse the install.
 */
export function npmForwardable(opts: { env: Record<string, string | undefined>; home: string; cwd: string; paths: SystemPaths }): Array<[string, string]> {
  const resolved = npmResolved(opts);
  const AUTH = /(?:^|:)(_auth|_authtoken|_password|username|certfile|keyfile)$/;
  const keys = [...resolved.keys].filter((k) => AUTH.test(k));
  // A credential without a URL prefix is the default registry's.
  const top = keys.some((k) => !k.includes(':'));
  const out: Array<[string, string]> = [];
  const add = (key: string, raw: string, global: boolean): void => {
    const url = plainUrl(raw);
    if (url === undefined || (global && top)) return;
    // npm's "nerf dart": the URL without its scheme, query or hash, the key of its credentials.
    const { host, pathname } = new URL(url);
    const dart = `//${host}${pathname}`.toLowerCase();
    if (!keys.some((k) => k.includes(':') && dart.startsWith(k.slice(0, k.lastIndexOf(':'))))) out.push([key, url]);
  };
  if (resolved.registry) add('registry', resolved.registry.url, true);
  for (const [key, s] of resolved.scoped) add(key, s.url, false);
  return out;
}

/** The last resort, off the hot path: only when npm's own files could not be read. */
function askNpm(env: Record<string, string | undefined>, cwd: string): Found | undefined {
  try {
    const out = execFileSync('npm', ['config', 'get', 'registry'], {
      cwd,
      env: env as NodeJS.ProcessEnv,
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const host = endpointOf(out.trim());
    return host ? { endpoint: host, from: 'npm config get registry' } : undefined;
  } catch {
    return undefined;
  }
}
