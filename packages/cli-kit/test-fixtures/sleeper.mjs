#!/usr/bin/env node
// A binary that waits until interrupted: the signal test's subject.
import { runBin } from '../dist/index.js';

await runBin(
  async (_argv, io) => {
    process.stderr.write('ready\n');
    // a pending timer stands in for the child process or stdin a real stage would be waiting on
    const keepAlive = setInterval(() => undefined, 60_000);
    await new Promise((resolve) => io.signal.addEventListener('abort', resolve, { once: true }));
    clearInterval(keepAlive);
    throw io.signal.reason;
  },
  { name: 'sleeper', family: process.env.FAMILY === 'loop' ? 'loop' : 'qs' },
);
