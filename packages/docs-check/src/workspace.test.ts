// What the README promises about the workspace itself: `pnpm typecheck` covers every package, every
// package is a vitest project, and every binary runs from the root as `pnpm exec <name>`.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const json = (path: string): Record<string, unknown> => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as Record<string, unknown>;
const packages = readdirSync(join(ROOT, 'packages')).filter((p) => existsSync(join(ROOT, 'packages', p, 'package.json'))).sort();

describe('the workspace', () => {
  it('the root tsconfig references every package, so `pnpm typecheck` (tsc -b) checks them all', () => {
    const refs = (json('tsconfig.json').references as { path: string }[]).map((r) => r.path).sort();
    expect(refs).toEqual(packages.map((p) => `packages/${p}`));
    expect((json('tsconfig.base.json').compilerOptions as Record<string, unknown>).strict).toBe(true);
  });

  it('every package is a vitest project named after its folder', () => {
    for (const p of packages) {
      const config = readFileSync(join(ROOT, 'packages', p, 'vitest.config.ts'), 'utf8');
      expect(config, p).toContain(`name: '${p}'`);
    }
  });

  it('every binary is a root dependency and sits in the root node_modules/.bin', () => {
    const rootDeps = json('package.json').dependencies as Record<string, string>;
    for (const p of packages) {
      const pkg = json(`packages/${p}/package.json`) as { name: string; bin?: Record<string, string> };
      for (const bin of Object.keys(pkg.bin ?? {})) {
        expect(rootDeps[pkg.name], `${pkg.name} in the root dependencies`).toBe('workspace:*');
        expect(existsSync(join(ROOT, 'node_modules', '.bin', bin)), `node_modules/.bin/${bin}`).toBe(true);
      }
    }
  });

  it('.ci/run is the README test command: the install from nothing, then every test', () => {
    const commands = /```sh\n(.+)\n(.+)\n```/.exec(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    const test = commands?.[2]?.replace(/\s+#.*$/, '');
    expect(test).toBe('bash scripts/install.sh && pnpm test');
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8').split('\n').filter((l) => l && !l.startsWith('#') && !/^(set|cd|export) /.test(l));
    expect(ci.join(' && ')).toBe(test);
  });

  it('pins the toolchain the README names: pnpm 12.4.2, Node >=20.19, engineStrict', () => {
    const root = json('package.json') as { packageManager: string; engines: { node: string } };
    expect(root.packageManager).toBe('pnpm@12.4.2');
    expect(root.engines.node).toBe('>=20.19');
    expect(readFileSync(join(ROOT, 'pnpm-workspace.yaml'), 'utf8')).toMatch(/^engineStrict: true$/m);
  });

  it('every binary (and every subcommand of qs and loop) answers --help and --version on stdout, with the version in its package.json', () => {
    for (const p of packages) {
      const pkg = json(`packages/${p}/package.json`) as { version: string; bin?: Record<string, string> };
      for (const bin of Object.keys(pkg.bin ?? {})) {
        const subcommands = bin === 'qs' ? ['run', 'show'] : bin === 'loop' ? ['compile', 'lint', 'session-prompt', 'detect-models', 'register-model', 'run', 'gate'] : [];
        for (const prefix of [[], ...subcommands.map((c) => [c])]) {
          for (const flag of ['--help', '--version']) {
            const argv = [...prefix, flag];
            const r = spawnSync(join(ROOT, 'node_modules', '.bin', bin), argv, { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
            const what = `${bin} ${argv.join(' ')}`;
            expect(r.status, `${what}: ${r.stderr}`).toBe(0);
            expect(r.stderr, what).toBe('');
            if (flag === '--version') expect(r.stdout, what).toBe(`${pkg.version}\n`);
            else expect(r.stdout, what).toContain(prefix.length > 0 ? `${bin} ${prefix[0] as string}` : bin);
          }
        }
      }
    }
  });

  it('each binary\'s version.generated.ts (and docs\', for its User-Agent) is what scripts/versions.mjs writes from its package.json', () => {
    for (const p of packages) {
      const pkg = json(`packages/${p}/package.json`) as { version: string; bin?: unknown };
      if (!pkg.bin && p !== 'docs') continue;
      expect(readFileSync(join(ROOT, 'packages', p, 'src/version.generated.ts'), 'utf8'), p).toContain(`export const VERSION = ${JSON.stringify(pkg.version)};`);
    }
  });

  it('the loop binaries start from a bundle that holds none of the vendor SDKs (they use model CLIs only)', () => {
    for (const p of ['loop', 'loop-run', 'loop-gate']) {
      const bin = readFileSync(join(ROOT, 'packages', p, 'bin', `${p}.js`), 'utf8');
      // an ES module bin (`new URL(..., import.meta.url)`) or a CommonJS one (`pathToFileURL(`${__dirname}/...`)`)
      expect(bin, p).toMatch(/startBundle\((new URL\('\.\.\/dist\/bundle\.cjs', import\.meta\.url\)|require\('node:url'\)\.pathToFileURL\(`\$\{__dirname\}\/\.\.\/dist\/bundle\.cjs`\))\)/);
      const sources = (json(`packages/${p}/dist/bundle.cjs.map`) as { sources: string[] }).sources;
      expect(sources.length, p).toBeGreaterThan(10);
      expect(sources.filter((s) => /@anthropic-ai|\/openai@|@google\/genai|\/models\/dist\/api\//.test(s)), p).toEqual([]);
    }
  });

  it('nothing in the repository points at documents outside it: the design lives in ARCHITECTURE.md', () => {
    const files = spawnSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).stdout.split('\n').filter((f) => /\.(ts|mjs|js|md|sh|json|ya?ml)$/.test(f));
    expect(files.length).toBeGreaterThan(100);
    const outside = /\.\.\/shared\/|\bresearch\/[a-z-]+\.md|(?<![A-Z_])(DESIGN|STYLE)\.md\b/;
    const offenders = files.filter((f) => existsSync(join(ROOT, f)) && outside.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(offenders).toEqual([]);
    expect(existsSync(join(ROOT, 'ARCHITECTURE.md'))).toBe(true);
  });
});
