// Finds the runnable examples of a README: fenced ```sh example blocks, one `$ command` per line.

export interface Example {
  /** The README it came from, relative to the repository root. */
  file: string;
  /** 1-based line of the command in that file. */
  line: number;
  command: string;
  /** From a trailing `# exit N` comment; 0 when absent. */
  exitCode: number;
}

export function extractExamples(file: string, text: string): Example[] {
  const examples: Example[] = [];
  let inBlock = false;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trimEnd();
    if (!inBlock && /^```sh example\s*$/.test(line)) {
      inBlock = true;
      return;
    }
    if (inBlock && line.startsWith('```')) {
      inBlock = false;
      return;
    }
    if (!inBlock || !line.startsWith('$ ')) return;
    const match = /\s+#\s*exit\s+(\d+)\s*$/.exec(line);
    examples.push({
      file,
      line: i + 1,
      command: (match ? line.slice(0, match.index) : line).slice(2),
      exitCode: match ? Number(match[1]) : 0,
    });
  });
  return examples;
}
