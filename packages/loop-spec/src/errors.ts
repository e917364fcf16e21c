// The one error a spec can raise: Looper's exact message, plus where in the file it points.
import { InputError } from '@quickloop/cli-kit/errors';
import { LoopExit } from '@quickloop/cli-kit/exit-codes';

export class SpecError extends InputError {
  /** Looper's message, unchanged (what `loop: error:` prints). */
  readonly text: string;
  /** The spec file, as given, when known. */
  readonly file: string | undefined;
  /** 1-based line of the offending key, when known. */
  readonly line: number | undefined;
  constructor(text: string, where: { file?: string | undefined; line?: number | undefined } = {}) {
    super(text, { exitCode: LoopExit.error });
    this.text = text;
    this.file = where.file;
    this.line = where.line;
  }

  /** `<text> (<file>:<line>)`: Looper's text first so scripts matching it still work. */
  describe(): string {
    if (this.file !== undefined && this.line !== undefined && this.line > 0) return `${this.text} (${this.file}:${this.line})`;
    return this.text;
  }
}
