// The environment a model CLI gets: explicit, never the parent's whole environment (API keys stay out unless passed).

/** Variables a CLI needs to start at all; nothing that could hold a credential. */
export const SAFE_ENV_KEYS = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TERM', 'TMPDIR', 'TZ', 'NO_COLOR'] as const;

/** The safe subset of `source`, plus `extra` (where a caller passes a key or a base URL on purpose). */
export function cliEnv(source: Record<string, string | undefined>, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of SAFE_ENV_KEYS) {
    const value = source[key];
    if (value !== undefined) env[key] = value;
  }
  return { ...env, ...extra };
}
