// Generated from package.json by scripts/versions.mjs (pnpm build runs it): change the version there.
export const VERSION = "0.1.0";
