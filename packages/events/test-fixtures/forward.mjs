#!/usr/bin/env node
// A minimal stage (runBin + the shared reader and writer) for the real-process tests and the pass-through
// benchmark: forwards every event and, with --emit N, adds N of its own.
import { QsExit, runBin } from '@quickloop/cli-kit';
import { EventWriter, createEmitter, readEvents } from '../dist/index.js';

await runBin(
  async (argv, io) => {
    const writer = new EventWriter(io.stdout);
    try {
      if (argv[0] === '--emit') {
        const emitter = createEmitter({ stage: 'forward', writer, now: io.now });
        for (let i = 0; i < Number(argv[1]); i++) {
          await emitter.emit('diagnostic', { run_id: 'r' }, { severity: 'note', code: 'QS200', message: `n${i}`, path: 'x' });
        }
      } else {
        for await (const { raw } of readEvents(io.stdin)) await writer.forward(raw);
      }
    } finally {
      await writer.flush();
    }
    return QsExit.passed;
  },
  { name: 'forward', family: 'qs' },
);
