#!/usr/bin/env node
// A binary that waits until interrupted: the signal test's subject.
import { PipeClosedError, runBin } from '../dist/index.js';

await runBin(
  async (_argv, io) => {
    process.stderr.write('ready\n');
    // a pending timer stands in for the child process or stdin a real stage would be waiting on
    const keepAlive = setInterval(() => undefined, 60_000);
    await new Promise((resolve) => io.signal.addEventListener('abort', resolve, { once: true }));
    clearInterval(keepAlive);
    // THEN=pipe-closed: the reader went away while the stage was stopping (a pipeline on Ctrl-C).
    if (process.env.THEN === 'pipe-closed') throw new PipeClosedError();
    throw io.signal.reason;
  },
  { name: 'sleeper', family: process.env.FAMILY === 'loop' ? 'loop' : 'qs' },
);
