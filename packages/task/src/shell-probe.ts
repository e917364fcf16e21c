// Asks the shell tools the check will run what they make of it: `bash -n` on the compiled check, `grep -E` on each pattern.
import { spawnSync } from 'node:child_process';

export interface ShellProbe {
  /** bash -n's first complaint, with the line of the script it names (1-based), when the script does not parse. */
  syntax?: { line: number | undefined; message: string };
  /** Per pattern, in order: grep's complaint when it refuses the pattern (exit 2), else undefined. */
  patterns: (string | undefined)[];
  /** Per pattern, in order: whether it matched every line of ANY_LINES (`.*`, `.`, `^`, `x?`): any output at all would do. */
  anyLine: boolean[];
}

/** Lines nothing in particular: a pattern that matches each of them matches whatever a run prints. */
const ANY_LINES = ['a', '0 9', '@~`!#%&=;:\'",<>/\\|[]{}()*+?.^$-_', 'Äö 漢字 🙂 \t end'];

// One process per task, and no more forks than needed (start-up is benchmarked): bash parses the
// check from stdin (read by the builtin: Node's stdin pipe is a socket, which /dev/stdin cannot
// open), then grep -E counts, once per pattern, the lines of ANY_LINES it matches: exit 2 (not 1,
// "no match") means grep could not compile it. Each answer is one line.
const PROBE = [
  "IFS= read -r -d '' script",
  "err=$(bash -n -c \"$script\" 2>&1 >/dev/null); rc=$?",
  "err=${err%%$'\\n'*}",
  "printf 'syntax\\t%s\\t%s\\n' \"$rc\" \"${err//$'\\t'/ }\"",
  'lines=$1',
  'shift',
  "i=0",
  "for p in \"$@\"; do",
  "  out=$(grep -c -E -e \"$p\" 2>&1 <<<\"$lines\"); rc=$?",
  "  out=${out%%$'\\n'*}",
  "  printf 'pattern\\t%s\\t%s\\t%s\\n' \"$i\" \"$rc\" \"${out//$'\\t'/ }\"",
  "  i=$((i + 1))",
  "done",
].join('\n');

/**
 * The answers of the real bash and grep -E on this machine (GNU grep on Linux: the dialect the check
 * runs), or undefined when bash cannot be started here: then nothing is claimed either way.
 */
export function probeShell(script: string, patterns: readonly string[]): ShellProbe | undefined {
  const r = spawnSync('bash', ['-c', PROBE, 'qs-validate', ANY_LINES.join('\n'), ...patterns], { input: script, encoding: 'utf8', timeout: 10_000, maxBuffer: 1024 * 1024 });
  if (r.error || r.status !== 0) return undefined;
  const probe: ShellProbe = { patterns: patterns.map(() => undefined), anyLine: patterns.map(() => false) };
  for (const line of r.stdout.split('\n')) {
    const cells = line.split('\t');
    if (cells[0] === 'syntax' && cells[1] !== '0') {
      const text = cells[2] ?? '';
      const m = /^bash: -c: line (\d+): (.*)$/.exec(text);
      probe.syntax = m ? { line: Number(m[1]), message: m[2] as string } : { line: undefined, message: text.replace(/^bash: (-c: )?/, '') || `bash -n exited ${cells[1]}` };
    } else if (cells[0] === 'pattern' && cells[2] === '2') {
      probe.patterns[Number(cells[1])] = (cells[3] ?? '').replace(/^grep: /, '') || 'grep -E refused it';
    } else if (cells[0] === 'pattern' && cells[2] === '0' && cells[3] === String(ANY_LINES.length)) {
      probe.anyLine[Number(cells[1])] = true;
    }
  }
  return probe;
}
