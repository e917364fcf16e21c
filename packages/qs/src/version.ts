// The version `qs --version` and every subcommand report (from package.json, at build time).
export { VERSION } from './version.generated.js';
