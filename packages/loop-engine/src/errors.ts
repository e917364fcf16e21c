// The ways a loop stops that are decisions rather than crashes: each carries state.json's status and failure.
import { CliError } from '@quickloop/cli-kit/errors';
import { LoopExit } from '@quickloop/cli-kit/exit-codes';

/** A stop with a state record: `blocked` for refusals, `failed` for errors and caps. */
export class LoopStop extends CliError {
  readonly status: 'failed' | 'blocked';
  readonly failure: string;
  constructor(status: 'failed' | 'blocked', failure: string, message: string, exitCode: number) {
    super('input', message, { exitCode });
    this.status = status;
    this.failure = failure;
  }
}

/** Consent refused, or stdin closed when it was asked: the member is never invoked. */
export class ConsentRefused extends LoopStop {
  constructor(member: string, how: 'refused' | 'end_of_input') {
    super('blocked', `consent_refused:${member}`, how === 'end_of_input' ? `consent for ${member} refused: stdin closed (run interactively, or answer with \`yes\` on stdin)` : `consent refused for ${member}`, LoopExit.error);
  }
}

/** An answer was needed (a human criterion, a checkpoint) and stdin was closed. */
export class InputRequired extends LoopStop {
  constructor(what: string) {
    super('blocked', `interactive_input_required:${what}`, `interactive input required for ${what} but stdin is closed; run in an interactive terminal`, LoopExit.error);
  }
}

/** A model CLI failed after its retries (Looper: exit 2, status failed). */
export class ModelCallFailed extends LoopStop {
  constructor(message: string) {
    super('failed', message, message, LoopExit.error);
  }
}
