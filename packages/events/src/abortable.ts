// Reads a stream of lines until it ends or the stage is interrupted, whichever comes first.
import type { StreamLine } from './reader.js';

/**
 * Yields lines from `source` but stops as soon as `signal` aborts, even while waiting for input: an
 * upstream that never ends must not keep an interrupted stage alive.
 */
export async function* untilAborted(source: AsyncGenerator<StreamLine>, signal: AbortSignal): AsyncGenerator<StreamLine> {
  if (signal.aborted) return;
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    for (;;) {
      const next = await Promise.race([source.next(), aborted]);
      if (next === 'aborted' || next.done) return;
      yield next.value;
      if (signal.aborted) return;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    // Not awaited: a generator parked on a read cannot be returned until that read settles.
    void source.return(undefined).catch(() => undefined);
  }
}

/** The signal's name from runBin's InterruptedError (`interrupted by SIGINT`), for run.interrupted. */
export function signalName(signal: AbortSignal): string {
  const m = /SIG[A-Z]+/.exec(String((signal.reason as Error | undefined)?.message ?? signal.reason ?? ''));
  return m ? m[0] : 'unknown';
}
