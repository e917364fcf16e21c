// Which JSON output mode an invoke argv asked for: the runner reads usage and cost only from these,
// and lint must judge a budget by the same reading.

/** `text` reports no usage; the others are claude's, codex's and gemini's JSON output modes. */
export type CliOutputMode = 'text' | 'claude-json' | 'codex-json' | 'gemini-json';

/**
 * Decided by the flags (`--output-format json|stream-json`, `-o json`, `--json`), so a spec's own
 * argv says how to read its CLI, and any CLI that mimics one of these modes is read alike.
 */
export function cliOutputMode(argv: readonly string[]): CliOutputMode {
  const prog = (argv[0] ?? '').split('/').pop() ?? '';
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i] as string;
    const eq = a.indexOf('=');
    const flag = eq === -1 ? a : a.slice(0, eq);
    const value = eq === -1 ? argv[i + 1] : a.slice(eq + 1);
    if ((flag === '--output-format' || flag === '-o') && (value === 'json' || value === 'stream-json')) {
      return prog.includes('gemini') || flag === '-o' ? 'gemini-json' : 'claude-json';
    }
    if (a === '--json') return 'codex-json';
  }
  return 'text';
}
