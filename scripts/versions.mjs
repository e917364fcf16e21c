#!/usr/bin/env node
// Writes each binary's src/version.generated.ts from its package.json, so `--version` reports the
// version a release (changesets) put there (and a library's, where it has one: docs' User-Agent). Run by `pnpm build` before the packages compile; a file
// is rewritten only when its version changed, so incremental builds stay incremental.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
for (const name of readdirSync(join(root, 'packages')).sort()) {
  const dir = join(root, 'packages', name);
  if (!existsSync(join(dir, 'package.json'))) continue;
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const file = join(dir, 'src', 'version.generated.ts');
  if (!pkg.bin && !existsSync(file)) continue;
  const text = `// Generated from package.json by scripts/versions.mjs (pnpm build runs it): change the version there.\nexport const VERSION = ${JSON.stringify(pkg.version)};\n`;
  if (!existsSync(file) || readFileSync(file, 'utf8') !== text) writeFileSync(file, text);
}
