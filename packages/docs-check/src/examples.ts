// The one README-example runner's parser: `sh example` blocks (commands with the output they print)
// and `js example` blocks (modules whose own assertions must hold).

export interface Example {
  /** The README it came from, relative to the repository root. */
  file: string;
  /** 1-based line of the command in that file. */
  line: number;
  command: string;
  /** From a trailing `# exit N` comment; 0 when absent. */
  exitCode: number;
  /**
   * The lines printed under the command, up to the next command: stdout must be exactly these. A line
   * `…` stands for any number of lines, and `…` inside a line for any text, so a README can leave
   * out what changes from run to run (times, ids, temporary paths) and still say what it prints.
   */
  stdout: string[];
}

export interface JsExample {
  file: string;
  /** The 1-based line of the opening fence. */
  line: number;
  code: string;
}

function blocks(text: string, fence: string): Array<{ start: number; lines: string[] }> {
  const found: Array<{ start: number; lines: string[] }> = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if ((lines[i] as string).trimEnd() !== `\`\`\`${fence}`) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] as string).startsWith('```'); i++) body.push(lines[i] as string);
    found.push({ start: start + 1, lines: body });
  }
  return found;
}

export function extractExamples(file: string, text: string): Example[] {
  const examples: Example[] = [];
  for (const block of blocks(text, 'sh example')) {
    block.lines.forEach((raw, i) => {
      const line = raw.trimEnd();
      if (line.startsWith('$ ')) {
        const match = /\s+#\s*exit\s+(\d+)\s*$/.exec(line);
        examples.push({
          file,
          line: block.start + i + 1,
          command: (match ? line.slice(0, match.index) : line).slice(2),
          exitCode: match ? Number(match[1]) : 0,
          stdout: [],
        });
      } else if (examples.length > 0 && examples[examples.length - 1]?.line !== undefined) {
        const last = examples[examples.length - 1] as Example;
        if (last.line > block.start) last.stdout.push(line);
      }
    });
  }
  for (const example of examples) {
    while (example.stdout.length > 0 && example.stdout[example.stdout.length - 1] === '') example.stdout.pop();
  }
  return examples;
}

export function extractJsExamples(file: string, text: string): JsExample[] {
  return blocks(text, 'js example').map((b) => ({ file, line: b.start, code: b.lines.join('\n') }));
}

function linePattern(expected: string): RegExp {
  return new RegExp(`^${expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');
}

/** True when `actual` (stdout split into lines) is what `expected` shows, `…` as described on Example. */
export function matchesOutput(expected: readonly string[], actual: readonly string[]): boolean {
  const memo = new Map<string, boolean>();
  const at = (e: number, a: number): boolean => {
    const key = `${e},${a}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (e === expected.length) result = a === actual.length;
    else if (expected[e] === '…') result = at(e + 1, a) || (a < actual.length && at(e, a + 1));
    else result = a < actual.length && linePattern(expected[e] as string).test(actual[a] as string) && at(e + 1, a + 1);
    memo.set(key, result);
    return result;
  };
  return at(0, 0);
}

/** stdout as lines, without the empty line after its final newline. */
export function outputLines(stdout: string): string[] {
  const lines = stdout.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
