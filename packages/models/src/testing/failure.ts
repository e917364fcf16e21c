// For the adapter tests: the ModelError a turn ends with, checked to keep the key out of its message.
import { ModelError } from '../errors.js';
import type { TurnResult } from '../types.js';

/** Awaits a turn that must fail: its ModelError, whose message never holds `key`; anything else throws. */
export async function failure(p: Promise<TurnResult>, key: string): Promise<ModelError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ModelError)) throw new Error(`expected a ModelError, got ${error === undefined ? 'an answer' : String(error)}`);
  if (error.message.includes(key)) throw new Error(`the error message holds the key: ${error.message}`);
  return error;
}
